//! The real Codex CLI pointed at an endpoint nothing listens on: left alone, Codex 0.171 waits
//! for the network until the agent's timeout (30 minutes by default). prpd must stop it at its
//! `Reconnecting... waiting for network` line and escalate within a minute, naming the line and
//! `openai_base_url`, with one agent call and no retry. The endpoint reaches Codex the way a
//! user sets it, through `OPENAI_BASE_URL`, which Codex does not read and prpd hands it as
//! `-c openai_base_url=…`. Codex gets a fresh `HOME` and `CODEX_HOME`, so nothing of the user's
//! own is read or changed, and nothing leaves the machine.
//!
//! The CLI must be installed (`npm install -g @openai/codex`; `.ci/run` does it): the test fails,
//! naming that command, where it is not.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{PRP, calc_repo, prp, read, run_dir};

/// How Codex CLI is installed where it is missing.
const INSTALL: &str = "npm install -g @openai/codex";

#[expect(
    clippy::disallowed_methods,
    reason = "the test asks the machine whether the agent CLI is installed, outside prpd"
)]
fn require_codex() {
    let installed = std::process::Command::new("codex")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        installed,
        "the Codex CLI `codex` is needed for this test: {INSTALL} (.ci/run installs it)"
    );
}

#[test]
#[ignore = "needs the real codex CLI; the end-to-end tier runs it"]
fn real_codex_against_a_closed_port_escalates_in_a_minute_naming_the_line() {
    require_codex();
    let home = tempfile::tempdir().expect("tempdir");
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).expect("mkdir");
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let repo = calc_repo(
        &prp(""),
        "[agents.default]\nagent = \"codex\"\ntimeout = \"5m\"\n",
    );
    let started = Instant::now();
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP, "--json"])
        .env("HOME", home.path())
        .env("CODEX_HOME", &codex_home)
        .env("CODEX_API_KEY", "test-key")
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env_remove("OPENAI_API_KEY")
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd");
    let elapsed = started.elapsed();
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(output.status.code(), Some(3), "{summary:#}");
    assert!(
        elapsed < Duration::from_secs(60),
        "escalated after {elapsed:?}"
    );
    assert_eq!(summary["agent_invocations"], 1, "{summary:#}");
    let reason = summary["escalation_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Reconnecting... waiting for network"),
        "{reason}"
    );
    assert!(reason.contains("openai_base_url"), "{reason}");
    let iterations = run_dir(repo.path(), &summary).join("iterations");
    let log = std::fs::read_dir(&iterations)
        .expect("the iterations folder")
        .filter_map(Result::ok)
        .map(|entry| read(&entry.path().join("output.log")))
        .next()
        .expect("one iteration");
    assert!(
        log.contains("Connection refused"),
        "Codex went to the closed port prpd handed it, not to its default: {log}"
    );
}
