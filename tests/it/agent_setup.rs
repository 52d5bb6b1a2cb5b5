//! An agent that cannot reach its model is said so (issue 28): a Codex CLI that waits for a
//! network it cannot reach is stopped at that line and the run escalates within seconds, not at
//! the agent's 30-minute timeout, naming the line and how Codex takes its endpoint; prpd hands
//! Codex the `OPENAI_BASE_URL` it would not read; and `prpd init` reports, for the agent it
//! configured, the key variables set (by name) and whether the endpoint accepts connections.
//! The Codex here is a script named `codex` first on `PATH` that prints what the real Codex CLI
//! 0.171 printed against a closed port (`tests/fixtures/agents/codex-0.171-closed-port.log`).

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{PRP, calc_repo, prp, read, run_dir};
use crate::util::TestRepo;

/// What the real Codex CLI printed against a closed port, then kept waiting.
const CLOSED_PORT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/codex-0.171-closed-port.log"
);

/// Variables of the developer's own that would change what the agent or init sees.
const OWN_SETTINGS: &[&str] = &[
    "CODEX_API_KEY",
    "CODEX_HOME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CONFIG_DIR",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// A folder holding an executable `codex` that records its arguments, then prints the real
/// Codex's lines for a closed port and waits as it does.
fn waiting_codex(dir: &Path) {
    let script = dir.join("codex");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$PRPD_RUN_DIR/codex-args.txt\"\ncat > /dev/null\n\
             cat '{CLOSED_PORT}'\nexec sleep 600\n"
        ),
    )
    .expect("write the codex stand-in");
    let mut permissions = std::fs::metadata(&script).expect("metadata").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).expect("chmod");
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The summary of a `prpd run --json` that must have escalated at once: exit 3 within `within`
/// of `started`, after one agent call and no retry.
pub(crate) fn escalated_at_once(
    output: &std::process::Output,
    started: Instant,
    within: Duration,
) -> Value {
    let elapsed = started.elapsed();
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(output.status.code(), Some(3), "{summary:#}");
    assert!(elapsed < within, "escalated after {elapsed:?}");
    assert_eq!(summary["agent_invocations"], 1, "no retry: {summary:#}");
    summary
}

/// A port nothing listens on (bound, then let go).
pub(crate) fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

#[test]
fn a_codex_waiting_for_a_network_it_cannot_reach_escalates_in_seconds() {
    let bin = tempfile::tempdir().expect("tempdir");
    waiting_codex(bin.path());
    let repo = calc_repo(
        &prp(""),
        "[agents.default]\nagent = \"codex\"\ntimeout = \"10m\"\n",
    );
    let base_url = format!("http://127.0.0.1:{}/v1", closed_port());
    let started = Instant::now();
    let mut command = repo.prpd();
    for name in OWN_SETTINGS {
        command.env_remove(name);
    }
    let output = command
        .args(["run", "--in-place", PRP, "--json"])
        .env("PATH", path_with(bin.path()))
        .env("OPENAI_BASE_URL", &base_url)
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd");
    let summary = escalated_at_once(&output, started, Duration::from_secs(120));
    let reason = summary["escalation_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(
            "`Reconnecting... waiting for network (Connection failed: error sending request)`"
        ),
        "{reason}"
    );
    assert!(reason.contains("openai_base_url"), "{reason}");
    assert!(!reason.contains("stuck"), "{reason}");
    let args = read(&run_dir(repo.path(), &summary).join("codex-args.txt"));
    assert!(
        args.starts_with(&format!("-c\nopenai_base_url=\"{base_url}\"\nexec\n")),
        "Codex is handed the endpoint it does not read from OPENAI_BASE_URL: {args}"
    );
}

/// `prpd init --agent codex` with `env`, from a fresh `HOME` (no login).
fn init_codex(repo: &TestRepo, home: &Path, env: &[(&str, String)]) -> String {
    let mut command = repo.prpd();
    for name in OWN_SETTINGS {
        command.env_remove(name);
    }
    command.args(["init", "--agent", "codex"]).env("HOME", home);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run prpd init");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "init never fails for what it finds: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn init_says_which_key_is_set_and_whether_the_endpoint_accepts_connections() {
    let home = tempfile::tempdir().expect("tempdir");
    let listening = TcpListener::bind("127.0.0.1:0").expect("bind");
    let open = listening.local_addr().expect("address").port();

    let repo = TestRepo::new();
    repo.file("package.json", r#"{"scripts":{"test":"node --test"}}"#)
        .commit("start");
    let secret = "sk-test-0123456789abcdef";
    let found = init_codex(
        &repo,
        home.path(),
        &[
            ("OPENAI_API_KEY", secret.to_owned()),
            ("OPENAI_BASE_URL", format!("http://127.0.0.1:{open}/v1")),
        ],
    );
    assert!(
        found.contains("warning: no key: CODEX_API_KEY is not set and no login was found"),
        "{found}"
    );
    assert!(
        found.contains(
            "warning: OPENAI_API_KEY is set, but Codex CLI sends no key from it: set CODEX_API_KEY"
        ),
        "{found}"
    );
    assert!(
        found.contains(&format!(
            "endpoint: OPENAI_BASE_URL = http://127.0.0.1:{open} accepts connections"
        )),
        "{found}"
    );
    assert!(!found.contains(secret), "a key's value is never shown");

    let repo = TestRepo::new();
    repo.file("package.json", r#"{"scripts":{"test":"node --test"}}"#)
        .commit("start");
    let closed = closed_port();
    let found = init_codex(
        &repo,
        home.path(),
        &[
            ("CODEX_API_KEY", secret.to_owned()),
            ("OPENAI_BASE_URL", format!("http://127.0.0.1:{closed}/v1")),
        ],
    );
    assert!(found.contains("key: CODEX_API_KEY is set"), "{found}");
    assert!(
        found.contains(&format!(
            "warning: endpoint: OPENAI_BASE_URL = http://127.0.0.1:{closed} cannot be reached"
        )),
        "{found}"
    );
    assert!(!found.contains(secret), "a key's value is never shown");
    drop(listening);
}
