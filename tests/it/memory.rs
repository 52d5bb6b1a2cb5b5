//! `prpd memory search`, `add` and `stats` through the real binary: on the embedded store in
//! `.prp-session/memory.db` of a fixture repository, and on an MCP memory server (the fake one
//! of `tests/fixtures/mcp/`) named in `prpd.toml`; with the mistakes a user makes refused
//! (exit 2) by name, a store a writer holds, and a token that never reaches the server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;

use crate::util::TestRepo;

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/fake_memory_server.py")
}

/// A repository whose prpd.toml names the fake MCP server in `mode` (with `server_args`), its
/// memories kept in the repository's `state.json` so that every prpd's server sees them, and
/// `extra` lines added to `[memory]`.
fn mcp_repo(mode: &str, extra: &str, server_args: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    let mut command = vec![
        "python3".to_owned(),
        fake_server().display().to_string(),
        "--mode".to_owned(),
        mode.to_owned(),
        "--state".to_owned(),
        repo.join("state.json").display().to_string(),
    ];
    command.extend(server_args.iter().map(|arg| (*arg).to_owned()));
    repo.file(
        "prpd.toml",
        &format!(
            "[memory]\nbackend = \"mcp\"\n{extra}\n[memory.mcp]\ncommand = {}\n",
            serde_json::to_string(&command).expect("argv as TOML")
        ),
    );
    repo
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn add(repo: &TestRepo, args: &[&str]) {
    repo.prpd()
        .args(["memory", "add"])
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Recorded "));
}

#[test]
fn a_lesson_added_by_hand_is_found_by_words_by_kind_and_by_file() {
    let repo = TestRepo::new();
    add(
        &repo,
        &[
            "--title",
            "Clamp the token bucket refill",
            "--file",
            "src/limiter.rs",
            "--stack",
            "rust",
            "A zero rate overflowed the bucket and the limiter tests failed.",
        ],
    );
    add(
        &repo,
        &[
            "--kind",
            "decision",
            "--title",
            "Use SQLite for memory",
            "--file",
            "./docs/adr/0001.md",
            "It is embedded and has full-text search.",
        ],
    );
    assert!(repo.join(".prp-session/memory.db").is_file());

    let output = repo
        .prpd()
        .args(["memory", "search", "failing limiters", "--json"])
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    let found = json_of(&output);
    assert_eq!(found["findings"].as_array().map(Vec::len), Some(1));
    let finding = &found["findings"][0];
    assert_eq!(finding["title"], "Clamp the token bucket refill");
    assert_eq!(finding["kind"], "lesson");
    assert!(
        finding["run_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("lesson-"))
    );
    assert!(finding["created_at"].as_u64().is_some_and(|time| time > 0));
    assert_eq!(finding["files"], serde_json::json!(["src/limiter.rs"]));

    repo.prpd()
        .args(["memory", "search", "embedded search", "--kind", "decisions"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "1 finding for \"embedded search\"",
        ))
        .stdout(predicate::str::contains("Use SQLite for memory"))
        .stdout(predicate::str::contains("decision · decision-"));
    repo.prpd()
        .args(["memory", "search", "embedded search", "--kind", "bugs"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("No findings"));

    let absolute = repo.join("docs/adr/0001.md").display().to_string();
    let output = repo
        .prpd()
        .args(["memory", "search", &absolute, "--kind", "file", "--json"])
        .output()
        .expect("run");
    assert_eq!(
        json_of(&output)["findings"][0]["title"],
        "Use SQLite for memory"
    );
    let output = repo
        .prpd()
        .args(["memory", "search", "docs/adr", "--kind", "file", "--json"])
        .output()
        .expect("run");
    assert_eq!(
        json_of(&output)["findings"],
        serde_json::json!([]),
        "a file's history is exact"
    );
}

#[test]
fn stats_count_the_entries_per_kind_with_the_size_version_and_path() {
    let repo = TestRepo::new();
    for title in ["one", "two"] {
        add(&repo, &["--title", title, "body"]);
    }
    add(&repo, &["--kind", "decision", "--title", "three", "body"]);
    let output = repo
        .prpd()
        .args(["memory", "stats", "--json"])
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    let stats = json_of(&output);
    assert_eq!(stats["backend"], "embedded");
    assert_eq!(stats["entries"], 3);
    assert_eq!(stats["per_kind"]["lesson"], 2);
    assert_eq!(stats["per_kind"]["decision"], 1);
    assert_eq!(stats["per_kind"]["reject"], 0);
    assert_eq!(stats["schema_version"], 2);
    assert!(stats["size_bytes"].as_u64().is_some_and(|size| size > 0));
    let path = stats["path"].as_str().expect("path");
    assert!(path.ends_with(".prp-session/memory.db"), "{path}");
    repo.prpd()
        .args(["memory", "stats"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Entries: 3"))
        .stdout(predicate::str::contains("Schema version: 2"))
        .stdout(predicate::str::contains("Size on disk: "));
}

#[test]
fn query_syntax_in_a_search_is_taken_as_words() {
    let repo = TestRepo::new();
    add(&repo, &["--title", "near misses", "a \"quoted\" word"]);
    for query in ["\"", "NEAR(", "-x", "*", ":", "title:x", "a AND", ""] {
        repo.prpd()
            .args(["memory", "search", "--", query])
            .assert()
            .success();
    }
    repo.prpd()
        .args(["memory", "search", "\"quoted\""])
        .assert()
        .success()
        .stdout(predicate::str::contains("near misses"));
}

#[test]
fn a_users_mistakes_are_refused_with_exit_2_and_what_to_do() {
    let repo = TestRepo::new();
    repo.prpd()
        .args(["memory", "search", "x", "--kind", "errors"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bugs, patterns, decisions, file"));
    repo.prpd()
        .args(["memory", "add", "--kind", "reject", "--title", "t", "b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("lesson, decision"));
    repo.prpd()
        .args(["memory", "add", "--title", " ", "body"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--title is empty"));
    repo.prpd()
        .args(["memory", "search", "x", "--limit", "0"])
        .assert()
        .code(2);

    repo.file("prpd.toml", "[memory]\nbackend = \"redis\"\n");
    repo.prpd()
        .args(["memory", "stats"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prpd.toml:2:"))
        .stderr(predicate::str::contains("\"embedded\", \"mcp\" or \"off\""));
    repo.file("prpd.toml", "[memory]\nbackend = \"off\"\n");
    repo.prpd()
        .args(["memory", "search", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("memory is off"));
    repo.file(
        "prpd.toml",
        "[memory]\nbackend = \"mcp\"\n[memory.mcp]\ncommand = [\"prpd-no-such-memory-server\"]\n",
    );
    repo.prpd()
        .args(["memory", "search", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prpd-no-such-memory-server"));
    std::fs::remove_file(repo.join("prpd.toml")).expect("rm");

    std::fs::create_dir_all(repo.join(".prp-session")).expect("mkdir");
    std::fs::write(
        repo.join(".prp-session/memory.db"),
        "not sqlite ".repeat(400),
    )
    .expect("write");
    repo.prpd()
        .args(["memory", "stats"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "memory.db is not a SQLite database",
        ));
    std::fs::remove_file(repo.join(".prp-session/memory.db")).expect("rm");
    rusqlite::Connection::open(repo.join(".prp-session/memory.db"))
        .expect("open")
        .pragma_update(None, "user_version", 99)
        .expect("version");
    repo.prpd()
        .args(["memory", "search", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("schema version 99"))
        .stderr(predicate::str::contains("upgrade prpd"));
}

#[test]
fn a_search_reads_and_an_add_waits_while_another_writer_holds_the_store() {
    let repo = TestRepo::new();
    add(&repo, &["--title", "committed before", "alpha"]);
    let path = repo.join(".prp-session/memory.db");
    let (holding, hold) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        let mut connection = rusqlite::Connection::open(&path).expect("open");
        let transaction = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .expect("begin");
        holding.send(()).expect("signal");
        std::thread::sleep(Duration::from_millis(1500));
        transaction.commit().expect("commit");
    });
    hold.recv().expect("the writer holds the store");
    let started = Instant::now();
    repo.prpd()
        .args(["memory", "search", "alpha"])
        .assert()
        .success()
        .stdout(predicate::str::contains("committed before"));
    let searched = started.elapsed();
    add(&repo, &["--title", "added while held", "beta"]);
    let added = started.elapsed();
    writer.join().expect("writer");
    assert!(
        searched < Duration::from_millis(1200),
        "the search waited for the writer: {searched:?}"
    );
    assert!(
        added >= Duration::from_millis(1400),
        "the add did not wait for the writer: {added:?}"
    );
    repo.prpd()
        .args(["memory", "search", "beta"])
        .assert()
        .success()
        .stdout(predicate::str::contains("added while held"));
}

#[test]
fn the_mcp_backend_answers_records_and_shows_its_tool_mapping() {
    let repo = mcp_repo("full", "", &[]);
    let output = repo
        .prpd()
        .args(["memory", "stats", "--json"])
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    let stats = json_of(&output);
    assert_eq!(stats["backend"], "mcp");
    assert_eq!(
        stats["mapping"],
        serde_json::json!({
            "bugs": "csr_reflect_on_past",
            "patterns": "csr_search_by_concept",
            "decisions": "csr_why",
            "file": "csr_search_by_file",
            "record": "store_reflection",
        })
    );

    repo.prpd()
        .args(["memory", "search", "token bucket", "--kind", "bugs"])
        .assert()
        .success()
        .stdout(predicate::str::contains("csr_reflect_on_past · conv-17"))
        .stdout(predicate::str::contains("overflowed"));
    add(
        &repo,
        &[
            "--title",
            "Pin the fixture clock",
            "Tests must not read the wall clock.",
        ],
    );
    let output = repo
        .prpd()
        .args(["memory", "search", "fixture clock", "--json"])
        .output()
        .expect("run");
    let found = json_of(&output);
    assert!(
        found["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|finding| finding["excerpt"]
                .as_str()
                .is_some_and(|text| text.contains("Pin the fixture clock"))),
        "{found}"
    );
    assert!(repo.join(".prp-session/memory-server.log").is_file());
}

#[test]
fn an_mcp_server_missing_a_tool_or_never_answering_is_an_error_for_the_cli() {
    let missing = mcp_repo("missing", "", &[]);
    missing
        .prpd()
        .args(["memory", "search", "x", "--kind", "bugs"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no tool for bugs"))
        .stderr(predicate::str::contains("csr_reflect_on_past"));
    missing
        .prpd()
        .args(["memory", "search", "token", "--kind", "decisions"])
        .assert()
        .success()
        .stdout(predicate::str::contains("csr_search_insights"));
    missing
        .prpd()
        .args(["memory", "stats"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "bugs       (no tool: a warning when asked)",
        ));

    let hanging = mcp_repo("hang", "timeout = \"300ms\"", &[]);
    let started = Instant::now();
    hanging
        .prpd()
        .args(["memory", "search", "x", "--kind", "file"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "did not answer `csr_search_by_file` within 300ms",
        ));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_token_in_prpds_environment_never_reaches_the_memory_server() {
    let repo = mcp_repo(
        "full",
        "",
        &[
            "--echo-env",
            "MEMORY_API_TOKEN",
            "--echo-env",
            "PRPD_VISIBLE_SETTING",
        ],
    );
    let token = "ghp_memorytesttoken0123456789abcdefghij";
    repo.prpd()
        .env("MEMORY_API_TOKEN", token)
        .env("PRPD_VISIBLE_SETTING", "shown")
        .args(["memory", "stats"])
        .assert()
        .success();
    let log = std::fs::read_to_string(repo.join(".prp-session/memory-server.log")).expect("log");
    assert!(
        log.contains("PRPD_VISIBLE_SETTING=shown"),
        "the control: {log}"
    );
    assert!(log.contains("MEMORY_API_TOKEN=unset"), "{log}");
    assert!(!log.contains(token), "{log}");
}
