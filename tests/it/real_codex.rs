//! The real Codex CLI pointed at an endpoint nothing listens on: left alone, Codex 0.171 waits
//! for the network until the agent's timeout (30 minutes by default). prpd must stop it at its
//! `Reconnecting... waiting for network` line and escalate within a minute, naming the line and
//! `openai_base_url`, with one agent call and no retry. The endpoint reaches Codex the way a
//! user sets it, through `OPENAI_BASE_URL`, which Codex does not read and prpd hands it as
//! `-c openai_base_url=…`. Codex gets a fresh `HOME` and `CODEX_HOME`, so nothing of the user's
//! own is read or changed, and nothing leaves the machine.
//!
//! The CLI must be installed (`npm install -g @openai/codex@0.171`; `.ci/run` does it): the test fails,
//! naming that command, where it is not.

use std::time::{Duration, Instant};

use crate::agent_setup::{closed_port, escalated_at_once};
use crate::run::{PRP, calc_repo, prp, read, run_dir};

/// How Codex CLI is installed where it is missing (the version the fixtures were captured from).
const INSTALL: &str = "npm install -g @openai/codex@0.171";

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
    let port = closed_port();
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
    let summary = escalated_at_once(&output, started, Duration::from_secs(60));
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
