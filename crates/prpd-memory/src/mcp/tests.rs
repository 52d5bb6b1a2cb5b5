//! The MCP backend against `tests/fixtures/mcp/fake_memory_server.py`, a real child process
//! speaking MCP over stdio with claude-self-reflect's tool names: every capability answered,
//! the arguments prpd sends, a server missing tools, one that never answers, one that dies,
//! and the server's process group gone when prpd stops or drops it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::*;
use crate::config::McpToolNames;
use crate::entry::EntryKind;
use crate::query::Capability;
use prpd_base::process::group_probe::{group_gone_within, is_group_gone};

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/mcp/fake_memory_server.py")
}

/// The fake server in `mode`, logging what it receives to `dir/received.jsonl`.
fn server(mode: &str, dir: &Path) -> McpServer {
    McpServer {
        command: vec![
            "python3".to_owned(),
            fake_server().display().to_string(),
            "--mode".to_owned(),
            mode.to_owned(),
            "--log".to_owned(),
            dir.join("received.jsonl").display().to_string(),
            "--state".to_owned(),
            dir.join("state.json").display().to_string(),
        ],
        tools: McpToolNames::default(),
    }
}

async fn start(mode: &str, dir: &Path, timeout: Duration) -> McpMemory {
    McpMemory::start(
        dir,
        &server(mode, dir),
        timeout,
        dir.join("memory-server.log"),
    )
    .await
    .expect("the fake server starts")
}

/// The messages the fake server received, in order.
fn received(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("received.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn calls(dir: &Path) -> Vec<(String, Value)> {
    received(dir)
        .into_iter()
        .filter(|message| message["method"] == "tools/call")
        .map(|message| {
            (
                message["params"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                message["params"]["arguments"].clone(),
            )
        })
        .collect()
}

fn group_of(memory: &McpMemory) -> i32 {
    memory
        .server
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .group()
        .expect("running")
}

#[tokio::test]
async fn every_capability_is_answered_by_claude_self_reflects_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = start("full", dir.path(), Duration::from_secs(5)).await;
    let handshake: Vec<String> = received(dir.path())
        .iter()
        .map(|message| message["method"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        handshake,
        ["initialize", "notifications/initialized", "tools/list"]
    );
    assert_eq!(memory.tool_names().len(), 6);
    assert_eq!(
        memory.tool_for(Purpose::Answer(Capability::Decisions)),
        Ok("csr_why")
    );

    let bugs = memory
        .ask(&Question::Bugs("token bucket refill".to_owned()), 5)
        .await
        .expect("bugs");
    assert_eq!(
        bugs.len(),
        2,
        "the phrasing's \"errors\" finds the other: {bugs:?}"
    );
    assert!(bugs[0].score > bugs[1].score);
    assert_eq!(bugs[0].kind, "csr_reflect_on_past");
    assert_eq!(bugs[0].run_id.as_deref(), Some("conv-17"));
    assert!(bugs[0].score > 0.0);
    assert_eq!(bugs[0].created_at, Some(1_709_370_900));
    assert!(
        bugs[0].excerpt.contains("overflowed"),
        "{}",
        bugs[0].excerpt
    );

    let patterns = memory
        .ask(&Question::Patterns("rust".to_owned()), 5)
        .await
        .expect("patterns");
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    assert_eq!(patterns[0].title, "Rust error handling conventions");
    assert_eq!(patterns[0].run_id.as_deref(), Some("conv-23"));

    let decisions = memory
        .ask(&Question::Decisions("thiserror anyhow".to_owned()), 3)
        .await
        .expect("decisions");
    assert_eq!(decisions.len(), 1);
    assert!(
        decisions[0]
            .excerpt
            .starts_with("Why: In this rust project")
    );

    let file = memory
        .ask(&Question::File("src/limiter.rs".to_owned()), 3)
        .await
        .expect("file");
    assert_eq!(file.len(), 1);
    assert_eq!(file[0].files, vec!["src/limiter.rs".to_owned()]);
    assert!(
        memory
            .ask(&Question::File("src/nothing.rs".to_owned()), 3)
            .await
            .expect("file")
            .is_empty()
    );

    assert_eq!(
        calls(dir.path()),
        [
            (
                "csr_reflect_on_past".to_owned(),
                serde_json::json!({"query": "bugs errors issues token bucket refill", "limit": 5})
            ),
            (
                "csr_search_by_concept".to_owned(),
                serde_json::json!({"concept": "rust patterns conventions", "limit": 5})
            ),
            (
                "csr_why".to_owned(),
                serde_json::json!({"query": "architecture decision thiserror anyhow"})
            ),
            (
                "csr_search_by_file".to_owned(),
                serde_json::json!({"file_path": "src/limiter.rs", "limit": 3})
            ),
            (
                "csr_search_by_file".to_owned(),
                serde_json::json!({"file_path": "src/nothing.rs", "limit": 3})
            ),
        ]
    );
    memory.stop().await;
}

#[tokio::test]
async fn a_record_goes_to_store_reflection_with_its_kind_as_a_tag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = start("full", dir.path(), Duration::from_secs(5)).await;
    let entry = Entry {
        kind: EntryKind::Reject,
        run_id: "run-9".to_owned(),
        title: "QA REJECT (attempt 1) of Word statistics".to_owned(),
        body: "F2: AC-2 has no test".to_owned(),
        files: vec!["src/stats.js".to_owned()],
        stacks: vec!["node".to_owned()],
        created_at: 1,
    };
    memory.record(&entry).await.expect("recorded");
    let (name, arguments) = calls(dir.path()).pop().expect("a call");
    assert_eq!(name, "store_reflection");
    assert_eq!(
        arguments["content"],
        "QA REJECT (attempt 1) of Word statistics\n\nF2: AC-2 has no test\n\n\
         Files: src/stats.js\n\nprpd reject from run-9"
    );
    assert_eq!(
        arguments["tags"],
        serde_json::json!(["prpd", "reject", "node"])
    );
    let recalled = memory
        .ask(&Question::Bugs("Word statistics".to_owned()), 5)
        .await
        .expect("bugs");
    assert!(
        recalled
            .iter()
            .any(|finding| finding.excerpt.contains("AC-2")),
        "{recalled:?}"
    );
    memory.stop().await;
}

#[tokio::test]
async fn a_missing_tool_is_a_warning_that_names_what_was_looked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = start("missing", dir.path(), Duration::from_secs(5)).await;
    let bugs = memory
        .ask(&Question::Bugs("anything".to_owned()), 5)
        .await
        .expect_err("no tool");
    assert!(
        matches!(&bugs, Unanswered::NoTool(message) if message.contains("csr_reflect_on_past")),
        "{bugs:?}"
    );
    let decisions = memory
        .ask(&Question::Decisions("token bucket".to_owned()), 3)
        .await
        .expect("csr_search_insights answers decisions");
    assert_eq!(decisions[0].kind, "csr_search_insights");
    let record = memory
        .record(&Entry {
            kind: EntryKind::Lesson,
            run_id: "lesson-1".to_owned(),
            title: "t".to_owned(),
            body: "b".to_owned(),
            files: Vec::new(),
            stacks: Vec::new(),
            created_at: 1,
        })
        .await
        .expect_err("no store_reflection");
    assert!(record.message().contains("store_reflection"), "{record:?}");
    assert!(
        calls(dir.path())
            .iter()
            .all(|(name, _)| name == "csr_search_insights"),
        "nothing was called that the server does not list"
    );
    memory.stop().await;
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout_within_the_time_box() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = start("hang", dir.path(), Duration::from_millis(300)).await;
    let started = Instant::now();
    let answer = memory
        .ask(&Question::Bugs("anything".to_owned()), 5)
        .await
        .expect_err("hangs");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    match answer {
        Unanswered::TimedOut(message) => {
            assert!(message.contains("within 300ms"), "{message}");
            assert!(message.contains("csr_reflect_on_past"), "{message}");
        }
        Unanswered::Failed(message) | Unanswered::NoTool(message) => {
            panic!("not a timeout: {message}")
        }
    }
    memory.stop().await;
}

#[tokio::test]
async fn a_server_that_dies_is_named_with_its_exit_and_its_last_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = start("die", dir.path(), Duration::from_secs(5)).await;
    let answer = memory
        .ask(&Question::Bugs("anything".to_owned()), 5)
        .await
        .expect_err("dies");
    let message = answer.message();
    assert!(message.contains("exited with code 3"), "{message}");
    assert!(message.contains("crashing on purpose"), "{message}");
    let again = memory
        .ask(&Question::File("a.rs".to_owned()), 3)
        .await
        .expect_err("still dead");
    assert!(again.message().contains("exited with code 3"), "{again:?}");
    let log = std::fs::read_to_string(dir.path().join("memory-server.log")).expect("stderr log");
    assert!(log.contains("started in mode die"), "{log}");
    memory.stop().await;
}

#[tokio::test]
async fn stopping_or_dropping_the_backend_ends_the_servers_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stopped = start("full", dir.path(), Duration::from_secs(5)).await;
    let pgid = group_of(&stopped);
    assert!(!is_group_gone(pgid));
    stopped.stop().await;
    assert!(
        group_gone_within(pgid, Duration::from_secs(3)),
        "stop left the server running"
    );

    let dropped = start("hang", dir.path(), Duration::from_secs(5)).await;
    let pgid = group_of(&dropped);
    drop(dropped);
    assert!(
        group_gone_within(pgid, Duration::from_secs(3)),
        "drop left the server running"
    );
}

#[tokio::test]
async fn a_command_that_is_not_an_mcp_server_fails_to_start_with_what_it_said() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_mcp = McpServer {
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo 'usage: not-a-server' >&2; exit 64".to_owned(),
        ],
        tools: McpToolNames::default(),
    };
    let error = McpMemory::start(
        dir.path(),
        &not_mcp,
        Duration::from_secs(2),
        dir.path().join("log"),
    )
    .await
    .expect_err("not MCP");
    let message = error.to_string();
    assert!(message.contains("MCP handshake"), "{message}");

    let missing = McpServer {
        command: vec!["prpd-no-such-memory-server".to_owned()],
        tools: McpToolNames::default(),
    };
    let error = McpMemory::start(
        dir.path(),
        &missing,
        Duration::from_secs(2),
        dir.path().join("log"),
    )
    .await
    .expect_err("missing");
    assert!(matches!(error, McpError::Start(_)), "{error:?}");
    assert!(
        with_sources(&error).contains("prpd-no-such-memory-server"),
        "{error}"
    );
}
