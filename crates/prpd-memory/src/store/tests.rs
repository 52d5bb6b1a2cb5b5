//! The embedded store against real SQLite files in temporary directories: ranking, stemming,
//! exact file history, hostile query text, a reader and a second writer beside a writer's open
//! transaction, and the schema's migrations.

use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};

use super::*;

fn entry(kind: EntryKind, title: &str, body: &str, files: &[&str], created_at: u64) -> Entry {
    Entry {
        kind,
        run_id: format!("run-{created_at}"),
        title: title.to_owned(),
        body: body.to_owned(),
        files: files.iter().map(|file| (*file).to_owned()).collect(),
        stacks: vec!["node".to_owned()],
        created_at,
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("memory.db")).expect("open");
    (dir, store)
}

fn titles(findings: &[Finding]) -> Vec<&str> {
    findings
        .iter()
        .map(|finding| finding.title.as_str())
        .collect()
}

#[test]
fn a_closer_match_ranks_first() {
    let (_dir, mut store) = store();
    store
        .record_all(&[
            entry(
                EntryKind::Reject,
                "QA REJECT of Rate limit",
                "F1: the test run failed",
                &[],
                1,
            ),
            entry(
                EntryKind::Reject,
                "QA REJECT of Token bucket rate limiter",
                "F1: the token bucket refill overflowed: rate limiter tests failed",
                &[],
                2,
            ),
            entry(
                EntryKind::Lesson,
                "Unrelated",
                "Use a logger, not print",
                &[],
                3,
            ),
        ])
        .expect("record");
    let found = store
        .search("token bucket rate limiter", &[], 10)
        .expect("search");
    assert_eq!(
        titles(&found),
        [
            "QA REJECT of Token bucket rate limiter",
            "QA REJECT of Rate limit"
        ]
    );
    assert!(found[0].score > found[1].score && found[1].score > 0.0);
    assert_eq!(found[0].run_id.as_deref(), Some("run-2"));
    assert_eq!(found[0].created_at, Some(2));
    assert_eq!(found[0].kind, "reject");
}

#[test]
fn the_porter_stemmer_finds_other_forms_of_a_word() {
    let (_dir, mut store) = store();
    store
        .record(&entry(
            EntryKind::BreakerTrip,
            "GREEN breaker opened",
            "the build failed twice with the same error",
            &[],
            1,
        ))
        .expect("record");
    for text in ["failing", "fails", "FAILED", "errors"] {
        let found = store.search(text, &[], 5).expect("search");
        assert_eq!(titles(&found), ["GREEN breaker opened"], "{text}");
    }
    assert!(store.search("passing", &[], 5).expect("search").is_empty());
}

#[test]
fn kinds_filter_what_a_capability_sees() {
    let (_dir, mut store) = store();
    store
        .record_all(&[
            entry(EntryKind::Reject, "timeout reject", "timeout", &[], 1),
            entry(EntryKind::Approve, "timeout approve", "timeout", &[], 2),
            entry(EntryKind::Decision, "timeout decision", "timeout", &[], 3),
        ])
        .expect("record");
    let found = store
        .search("timeout", &[EntryKind::Approve, EntryKind::Decision], 10)
        .expect("search");
    let mut found = titles(&found);
    found.sort_unstable();
    assert_eq!(found, ["timeout approve", "timeout decision"]);
    assert_eq!(store.search("timeout", &[], 10).expect("all").len(), 3);
}

#[test]
fn a_files_history_is_exact_and_newest_first() {
    let (_dir, mut store) = store();
    store
        .record_all(&[
            entry(EntryKind::Reject, "old", "x", &["src/app.rs"], 10),
            entry(
                EntryKind::Approve,
                "new",
                "y",
                &["./src/app.rs", "src/lib.rs"],
                20,
            ),
            entry(EntryKind::Reject, "other", "z", &["src/app.rs.bak"], 30),
            entry(EntryKind::Reject, "prefix", "z", &["src/app"], 40),
        ])
        .expect("record");
    let history = store.file_history("src/app.rs", 10).expect("history");
    assert_eq!(titles(&history), ["new", "old"]);
    assert_eq!(
        history[0].files,
        vec!["src/app.rs".to_owned(), "src/lib.rs".to_owned()]
    );
    assert!(
        history
            .iter()
            .all(|finding| (finding.score - 1.0).abs() < f64::EPSILON)
    );
    assert_eq!(
        titles(&store.file_history("./src/app.rs", 1).expect("history")),
        ["new"]
    );
    assert!(
        store
            .file_history("app.rs", 10)
            .expect("history")
            .is_empty()
    );
}

#[test]
fn query_syntax_in_user_text_is_searched_as_words_not_run() {
    let (_dir, mut store) = store();
    store
        .record(&entry(
            EntryKind::Lesson,
            "near misses",
            "a col:x value and a \"quoted\" word",
            &[],
            1,
        ))
        .expect("record");
    for text in [
        "\"",
        "\"unbalanced",
        "*",
        "quo*",
        "NEAR",
        "NEAR(a b)",
        "-",
        "-quoted",
        ":",
        "col:x",
        "title:near",
        "a AND OR NOT",
        "( )",
        "^",
        "",
        "   ",
    ] {
        let result = store.search(text, &[], 5);
        assert!(result.is_ok(), "{text:?}: {result:?}");
    }
    assert_eq!(
        titles(&store.search("\"quoted\"", &[], 5).expect("search")),
        ["near misses"]
    );
    assert_eq!(
        titles(&store.search("NEAR", &[], 5).expect("search")),
        ["near misses"]
    );
    assert!(store.search("", &[], 5).expect("empty").is_empty());
    for raw in ["\"unbalanced", "-quoted", "NEAR(a b", "col:x", "*", "a AND"] {
        let unquoted = store.connection.query_row(
            "SELECT COUNT(*) FROM entries_fts WHERE entries_fts MATCH ?1",
            [raw],
            |row| row.get::<_, i64>(0),
        );
        assert!(
            unquoted.is_err(),
            "{raw:?} is query syntax when it reaches MATCH unquoted"
        );
    }
}

#[test]
fn a_long_body_gives_an_excerpt_around_the_match() {
    let (_dir, mut store) = store();
    let body = format!(
        "{} the parser overflowed {}",
        "a ".repeat(400),
        "b ".repeat(400)
    );
    store
        .record(&entry(EntryKind::Reject, "long", &body, &[], 1))
        .expect("record");
    let found = store.search("overflowed", &[], 1).expect("search");
    assert!(
        found[0].excerpt.contains("parser overflowed"),
        "{}",
        found[0].excerpt
    );
    assert!(found[0].excerpt.chars().count() <= crate::finding::EXCERPT_CHARS + 2);
}

#[test]
fn a_reader_and_a_second_writer_get_on_beside_an_open_write_transaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memory.db");
    let mut writer = Store::open(&path).expect("open");
    writer
        .record(&entry(EntryKind::Lesson, "committed", "before", &[], 1))
        .expect("record");
    let (holding, hold) = std::sync::mpsc::channel();
    let holder_path = path.clone();
    let holder = std::thread::spawn(move || {
        let mut connection = Connection::open(&holder_path).expect("open");
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .expect("begin");
        transaction
            .execute(
                "INSERT INTO entries (kind, run_id, title, body, stacks, created_at)
                 VALUES ('lesson', 'x', 'uncommitted', 'during', '', 2)",
                [],
            )
            .expect("insert");
        holding.send(()).expect("signal");
        std::thread::sleep(Duration::from_millis(600));
        transaction.commit().expect("commit");
    });
    hold.recv().expect("the writer holds its transaction");

    let reader = Store::open(&path).expect("a reader opens beside a writer");
    let started = Instant::now();
    let seen = reader.search("before during", &[], 5).expect("read");
    assert_eq!(
        titles(&seen),
        ["committed"],
        "the reader sees the last commit"
    );
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "a reader does not wait for a writer"
    );

    let started = Instant::now();
    writer
        .record(&entry(EntryKind::Lesson, "second writer", "after", &[], 3))
        .expect("a second writer waits instead of failing with `database is locked`");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the second writer waited for the first"
    );
    holder.join().expect("holder");
    assert_eq!(reader.stats().expect("stats").entries, 3);
}

#[test]
fn stats_count_every_kind_and_the_size_on_disk() {
    let (_dir, mut store) = store();
    store
        .record_all(&[
            entry(EntryKind::Reject, "a", "x", &[], 1),
            entry(EntryKind::Reject, "b", "x", &[], 2),
            entry(EntryKind::Lesson, "c", "x", &[], 3),
        ])
        .expect("record");
    let stats = store.stats().expect("stats");
    assert_eq!(stats.schema_version, schema::CURRENT);
    assert_eq!(stats.entries, 3);
    assert_eq!(stats.per_kind[&EntryKind::Reject], 2);
    assert_eq!(stats.per_kind[&EntryKind::Lesson], 1);
    assert_eq!(stats.per_kind[&EntryKind::Approve], 0);
    assert_eq!(stats.per_kind.len(), EntryKind::ALL.len());
    assert!(stats.size_bytes > 0);
}

#[test]
fn a_version_1_store_migrates_and_keeps_its_entries_and_their_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memory.db");
    {
        let mut connection = Connection::open(&path).expect("open");
        let transaction = connection.transaction().expect("begin");
        schema::upgrade(&transaction, 0, 1).expect("version 1");
        transaction
            .execute(
                "INSERT INTO entries (id, kind, run_id, title, body, stacks, files, created_at)
                 VALUES (7, 'reject', 'run-old', 'QA REJECT of Parser', 'the parser failed',
                         'rust', 'src/parser.rs\nsrc/lexer.rs', 5)",
                [],
            )
            .expect("entry");
        transaction
            .execute(
                "INSERT INTO entries_fts (rowid, title, body, stacks)
                 VALUES (7, 'QA REJECT of Parser', 'the parser failed', 'rust')",
                [],
            )
            .expect("text");
        transaction.commit().expect("commit");
    }
    let store = Store::open(&path).expect("migrates");
    assert_eq!(store.stats().expect("stats").schema_version, 2);
    let history = store.file_history("src/lexer.rs", 5).expect("history");
    assert_eq!(titles(&history), ["QA REJECT of Parser"]);
    assert_eq!(
        history[0].files,
        vec!["src/lexer.rs".to_owned(), "src/parser.rs".to_owned()]
    );
    assert_eq!(
        titles(&store.search("failing parser", &[], 5).expect("search")),
        ["QA REJECT of Parser"]
    );
    drop(store);
    assert!(
        Store::open(&path).is_ok(),
        "opening a current store again changes nothing"
    );
}

#[test]
fn a_store_from_a_newer_prpd_is_refused_with_the_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memory.db");
    Connection::open(&path)
        .expect("open")
        .pragma_update(None, "user_version", 9)
        .expect("version");
    let error = Store::open(&path).expect_err("newer");
    assert!(error.is_users_to_fix());
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("schema version 9"), "{message}");
    assert!(message.contains("up to 2"), "{message}");
}

#[test]
fn a_file_that_is_not_a_database_is_named_as_such() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memory.db");
    std::fs::write(
        &path,
        "this is a text file, not SQLite, long enough to have a header ".repeat(4),
    )
    .expect("write");
    let error = Store::open(&path).expect_err("not a database");
    assert!(error.is_users_to_fix(), "{error:?}");
    assert!(
        error.to_string().contains("is not a SQLite database"),
        "{error}"
    );
}

#[test]
fn an_old_entry_that_shares_a_rarer_word_is_found_among_many_that_share_a_common_one() {
    let (_dir, mut store) = store();
    let mut entries = vec![entry(
        EntryKind::Reject,
        "the quuxification parser",
        "the parser failed on quuxification",
        &[],
        1,
    )];
    entries.extend((0..search::SELECTIVE_ENTRIES + 100).map(|index| {
        entry(
            EntryKind::Reject,
            &format!("parser {index}"),
            "the parser failed",
            &[],
            10 + index as u64,
        )
    }));
    store.record_all(&entries).expect("record");
    let found = store
        .search("parser quuxification", &[], 3)
        .expect("search");
    assert_eq!(found[0].title, "the quuxification parser");
    assert_eq!(found.len(), 3, "common-word matches fill the rest");
    assert!(found[1].title.starts_with("parser "));
}

#[test]
fn a_question_of_common_words_alone_ranks_the_most_recent_entries_that_hold_them() {
    let (_dir, mut store) = store();
    let mut entries = vec![entry(
        EntryKind::Reject,
        "parser parser parser",
        "parser parser parser parser",
        &[],
        1,
    )];
    entries.extend((0..search::RECENT_WINDOW + 100).map(|index| {
        entry(
            EntryKind::Reject,
            &format!("entry {index}"),
            "the parser failed",
            &[],
            10 + index as u64,
        )
    }));
    store.record_all(&entries).expect("record");
    let found = store.search("parser", &[], 5).expect("search");
    assert_eq!(found.len(), 5);
    assert!(
        found
            .iter()
            .all(|finding| finding.title != "parser parser parser"),
        "the oldest entry is outside the window of the {} most recent: the trade-off search.rs states",
        search::RECENT_WINDOW
    );
}

#[test]
fn one_pass_answers_each_question_from_its_own_kinds() {
    let (_dir, mut store) = store();
    store
        .record_all(&[
            entry(EntryKind::Reject, "limiter reject", "limiter", &[], 1),
            entry(EntryKind::Approve, "limiter approve", "limiter", &[], 2),
            entry(EntryKind::Lesson, "limiter lesson", "limiter", &[], 3),
            entry(EntryKind::Decision, "unrelated decision", "parser", &[], 4),
        ])
        .expect("record");
    let found = store
        .search_each(
            "limiter",
            &[
                search::Wanted {
                    kinds: &[EntryKind::Reject, EntryKind::Lesson],
                    limit: 5,
                },
                search::Wanted {
                    kinds: &[EntryKind::Approve],
                    limit: 5,
                },
                search::Wanted {
                    kinds: &[EntryKind::Decision],
                    limit: 5,
                },
            ],
        )
        .expect("search");
    let mut bugs = titles(&found[0]);
    bugs.sort_unstable();
    assert_eq!(bugs, ["limiter lesson", "limiter reject"]);
    assert_eq!(titles(&found[1]), ["limiter approve"]);
    assert!(found[2].is_empty());
    assert_eq!(
        store
            .search_each(
                "",
                &[search::Wanted {
                    kinds: &[],
                    limit: 5
                }]
            )
            .expect("no words"),
        vec![Vec::<Finding>::new()]
    );
}
