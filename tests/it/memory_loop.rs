//! The memory inside the loop: a run records what it learned and the next run's QA recalls
//! it; memory that is off says so in the report; memory that cannot be opened is a WARNING in
//! the QA report and never stops QA or the run; an MCP memory server is started once for a
//! whole run, however many agents run beside it. (The demo test in `run.rs` shows the recall
//! within one run: a REJECT recalled in the retry's GREEN prompt and the next QA report.)

use crate::run::{calc_repo, prp, prpd_toml, run, run_dir};

/// The QA report of the run's last iteration.
pub(crate) fn last_qa_report(repo: &std::path::Path, summary: &serde_json::Value) -> String {
    let iterations = run_dir(repo, summary).join("iterations");
    let mut dirs: Vec<_> = std::fs::read_dir(&iterations)
        .expect("iterations")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.join("qa-report.md").is_file())
        .collect();
    dirs.sort();
    std::fs::read_to_string(dirs.last().expect("a QA iteration").join("qa-report.md"))
        .expect("report")
}

#[test]
fn a_second_run_recalls_what_the_first_one_recorded() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let (code, first) = run(&repo);
    assert_eq!(first["state"], "SHIPPED", "{first:#}");
    assert_eq!(code, 0);
    let first_id = first["run_id"].as_str().expect("run id").to_owned();

    // What the first run recorded: its APPROVE (with the files it changed) and the CHANGELOG
    // entry DOCUMENT wrote.
    let output = repo
        .prpd()
        .args(["memory", "search", "multiply", "--json"])
        .output()
        .expect("prpd memory search");
    let found = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{found}");
    assert!(found.contains("QA APPROVE of Multiply numbers"), "{found}");
    assert!(found.contains("CHANGELOG: Multiply numbers"), "{found}");
    assert!(found.contains(&first_id), "{found}");

    // The same PRP again, from the committed tree: its QA is told about the first run.
    repo.git(&["checkout", "--", "."]);
    repo.git(&["clean", "-fdq"]);
    let (code, second) = run(&repo);
    assert_eq!(second["state"], "SHIPPED", "{second:#}");
    assert_eq!(code, 0);
    let report = last_qa_report(repo.path(), &second);
    assert!(report.contains("Asked the embedded store"), "{report}");
    assert!(
        report.contains("| Stack Patterns | ") && report.contains("QA APPROVE of Multiply numbers"),
        "{report}"
    );
    assert!(
        report.contains("| File History | ") && report.contains("src/calc.js")
            || report.contains("CHANGELOG: Multiply numbers"),
        "{report}"
    );
}

#[test]
fn memory_that_is_off_says_so_and_memory_that_is_broken_warns_without_stopping_qa() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[], "[memory]\nbackend = \"off\"\n"),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let report = last_qa_report(repo.path(), &summary);
    assert!(
        report.contains("No history was consulted: memory is off"),
        "{report}"
    );
    assert!(!repo.join(".prp-session/memory.db").exists());

    // A memory file that is not a database: QA goes on, and the report says why it has no
    // history.
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    std::fs::create_dir_all(repo.join(".prp-session")).expect("session dir");
    std::fs::write(
        repo.join(".prp-session/memory.db"),
        "this is not a SQLite database, but the file is long enough to have a header\n".repeat(8),
    )
    .expect("a broken memory file");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let report = last_qa_report(repo.path(), &summary);
    assert!(
        report.contains("⚠️ WARNING: memory is unavailable"),
        "{report}"
    );
    assert!(
        report.contains("| Historical Bugs | not answered |"),
        "{report}"
    );
}

#[test]
fn an_mcp_memory_server_is_started_once_for_a_whole_run() {
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp/fake_memory_server.py");
    // Outside the repository, where the run's snapshots would take them for the agents' work.
    let outside = tempfile::tempdir().expect("tempdir");
    let (state, log) = (
        outside.path().join("state.json"),
        outside.path().join("messages.jsonl"),
    );
    let command: Vec<String> = [
        "python3",
        &server.display().to_string(),
        "--state",
        &state.display().to_string(),
        "--log",
        &log.display().to_string(),
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect();
    let repo = calc_repo(
        &prp(""),
        &prpd_toml(
            "plain",
            &[],
            &format!(
                "[memory]\nbackend = \"mcp\"\n[memory.mcp]\ncommand = {}\n",
                serde_json::to_string(&command).expect("argv as TOML")
            ),
        ),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let calls = summary["agent_invocations"].as_u64().expect("agent calls");
    assert!(calls >= 5, "an agent call per phase at least: {summary:#}");

    let messages: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .expect("the server's log")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON message"))
        .collect();
    let count = |method: &str| {
        messages
            .iter()
            .filter(|message| message["method"] == method)
            .count()
    };
    assert_eq!(
        count("initialize"),
        1,
        "one server for the run's {calls} agent calls: {messages:#?}"
    );
    assert!(
        count("tools/call") >= 4,
        "it recorded and answered QA's questions: {messages:#?}"
    );
    let report = last_qa_report(repo.path(), &summary);
    assert!(!report.contains("WARNING: memory"), "{report}");
}
