//! Agent configuration that reaches the agent's argv and the run's classification: the
//! `{test_command}` / `{lint_command}` placeholders filled from discovery (or refused before the
//! run when discovery found nothing), and a CLI that refuses the agent's tool calls (Claude
//! Code's `permission_denials`) counted by the permission breaker and named in the feedback
//! and the escalation report. The agent is a real script printing Claude Code's JSON result.

use std::path::Path;

use crate::run::{PRP, calc_repo, prp, prpd_json};
use crate::util::TestRepo;

/// A Claude Code stand-in: records its arguments, then answers as `claude -p --output-format
/// json` does when its Bash calls were refused.
const DENIED_AGENT: &str = r#"printf '%s\n' "$@" > "$PRPD_RUN_DIR/args-$PRPD_ITERATION.txt"
cat > /dev/null
cat <<'JSON'
{"type":"result","subtype":"success","is_error":false,"duration_ms":5210,"num_turns":4,"result":"I wrote the test but could not run it.\n\n---PRP_PHASE_STATUS---\nPHASE: RED\nSTATUS: BLOCKED\nEXIT_SIGNAL: false\nBLOCKERS:\n  - running the tests requires approval\n---END_PRP_PHASE_STATUS---\n","session_id":"5f0c6a56-3e5b-4c1b-9d0e-1f1f7f2c0a11","total_cost_usd":0.0123,"usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":15000,"output_tokens":300},"permission_denials":[{"tool_name":"Bash","tool_use_id":"toolu_01A","tool_input":{"command":"npm test 2>&1 | tail -5","description":"Run the tests"}}]}
JSON
"#;

fn agent_config(script: &Path, argv_tail: &str) -> String {
    format!(
        "[agents.default]\ncommand = [\"sh\", \"{}\"{argv_tail}]\nmodel = \"fixture-green\"\nprompt = \"stdin\"\ntimeout = \"60s\"\nenv = []\n\n[agents.qa]\nmodel = \"fixture-qa\"\n",
        script.display()
    )
}

#[test]
fn a_claude_run_whose_tool_calls_are_refused_escalates_naming_the_refusals() {
    let agents = tempfile::tempdir().expect("tempdir");
    let script = agents.path().join("claude.sh");
    std::fs::write(&script, DENIED_AGENT).expect("write agent");
    let repo = calc_repo(
        &prp(""),
        &agent_config(
            &script,
            ", \"--allowedTools\", \"Bash({test_command})\", \"Bash({lint_command?})\"",
        ),
    );
    let (code, summary) = prpd_json(repo.path(), &["run", "--in-place", PRP, "--json"]);
    assert_eq!(code, 3, "{summary:#}");
    assert_eq!(summary["agent_invocations"], 2, "{summary:#}");
    let reason = summary["escalation_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("permission denials"), "{reason}");
    assert!(
        reason.contains("CLI refused what it tried to run"),
        "{reason}"
    );
    assert!(!reason.contains("stuck"), "{reason}");

    let run_dir = repo.path().join(".prp-session/runs").join(
        summary["run_id"]
            .as_str()
            .expect("the summary names the run"),
    );
    let args = std::fs::read_to_string(run_dir.join("args-1.txt")).expect("the agent's argv");
    assert_eq!(
        args, "--allowedTools\nBash(npm test)\nBash(npm run lint)\n",
        "the placeholders are filled from discovery"
    );

    let report = std::fs::read_to_string(run_dir.join("escalation.md")).expect("report");
    assert!(
        report.contains("`Bash(npm test 2>&1 | tail -5)`"),
        "{report}"
    );
    assert!(
        report.contains("running the tests requires approval"),
        "{report}"
    );

    let second_prompt = std::fs::read_dir(run_dir.join("iterations"))
        .expect("iterations")
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with("002-"))
        .map(|entry| std::fs::read_to_string(entry.path().join("prompt.md")).expect("prompt"))
        .expect("a second iteration");
    assert!(
        second_prompt.contains("refused these tool calls: Bash(npm test 2>&1 | tail -5)"),
        "{second_prompt}"
    );

    assert_eq!(
        summary["tokens"],
        2 * 2312,
        "input + cache writes + output, twice"
    );
    assert_eq!(summary["token_usage"]["cache_read"], 30000, "{summary:#}");
}

#[test]
fn a_placeholder_with_no_discovered_command_is_refused_before_the_run() {
    let agents = tempfile::tempdir().expect("tempdir");
    let script = agents.path().join("claude.sh");
    std::fs::write(&script, DENIED_AGENT).expect("write agent");
    // A plain-Make project: `make test` runs the tests, and nothing lints.
    let repo = TestRepo::new();
    repo.file("Makefile", "test:\n\t@echo '1 passed, 0 failed'\n")
        .file(PRP, &prp(""))
        .file(
            "prpd.toml",
            &agent_config(&script, ", \"Bash({lint_command})\""),
        )
        .commit("make");
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(["run", "--in-place", PRP, "--json"])
        .current_dir(repo.path())
        .env("PRPD_LOG", "warn")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`{lint_command}`"), "{stderr}");
    assert!(stderr.contains("[commands] lint"), "{stderr}");
    assert!(!repo.path().join(".prp-session/runs").exists());
}

/// Secrets reach the agent through `env` patterns, but what the agent prints of them is
/// redacted before prpd keeps it: no file prpd writes holds the value.
#[test]
fn a_secret_passed_by_pattern_reaches_the_agent_and_no_file_prpd_writes() {
    const SECRET: &str = "sk-fixture-0123456789abcdef";
    let agents = tempfile::tempdir().expect("tempdir");
    let script = agents.path().join("claude.sh");
    std::fs::write(
        &script,
        format!(
            "echo \"the key is $FIXTURE_API_KEY\" > \"$PRPD_RUN_DIR/../../../seen-by-agent.txt\"\n\
             echo \"the key is $FIXTURE_API_KEY\" >&2\n{DENIED_AGENT}"
        ),
    )
    .expect("write agent");
    let config = agent_config(&script, "").replace("env = []", "env = [\"FIXTURE_*\"]");
    let repo = calc_repo(&prp(""), &config);
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(["run", "--in-place", PRP, "--json"])
        .current_dir(repo.path())
        .env("PRPD_LOG", "warn")
        .env("FIXTURE_API_KEY", SECRET)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run prpd");
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let seen = std::fs::read_to_string(repo.path().join("seen-by-agent.txt")).expect("seen");
    assert_eq!(seen.trim(), format!("the key is {SECRET}"));

    let mut files = vec![repo.path().join(".prp-session")];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(
                std::fs::read_dir(&path)
                    .expect("read dir")
                    .map(|entry| entry.expect("entry").path()),
            );
        } else {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !String::from_utf8_lossy(&bytes).contains(SECRET),
                "{} holds the secret",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 5, "only {checked} files");
    let log = std::fs::read_dir(repo.path().join(".prp-session/runs"))
        .expect("runs")
        .find_map(Result::ok)
        .map(|run| run.path().join("iterations"))
        .and_then(|iterations| std::fs::read_dir(iterations).ok()?.find_map(Result::ok))
        .map(|iteration| std::fs::read_to_string(iteration.path().join("output.log")).expect("log"))
        .expect("an output log");
    assert!(log.contains("the key is [redacted]"), "{log}");
}

/// Issue 10: an API 500 ended as a crash, counted towards "stuck" and against
/// `max_agent_invocations`. A transient failure is waited out and retried, uncounted.
#[test]
fn a_provider_outage_is_retried_and_counted_by_nothing() {
    let agents = tempfile::tempdir().expect("tempdir");
    let script = agents.path().join("claude.sh");
    let calls = agents.path().join("calls");
    std::fs::write(
        &script,
        format!(
            "echo call >> '{calls}'\n\
             if [ \"$(wc -l < '{calls}')\" -eq 1 ]; then\n\
             cat > /dev/null\n\
             echo '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":500,\"result\":\"API Error: 500 {{\\\"type\\\":\\\"error\\\",\\\"error\\\":{{\\\"type\\\":\\\"api_error\\\",\\\"message\\\":\\\"Internal server error\\\"}}}}\"}}'\n\
             exit 1\n\
             fi\n{DENIED_AGENT}",
            calls = calls.display()
        ),
    )
    .expect("write agent");
    let config = agent_config(&script, "") + "\n[breaker]\nquota_wait = \"1s\"\n";
    let repo = calc_repo(&prp(""), &config);
    let (code, summary) = prpd_json(repo.path(), &["run", "--in-place", PRP, "--json"]);
    assert_eq!(code, 3, "{summary:#}");
    let calls = std::fs::read_to_string(&calls).expect("calls");
    assert_eq!(calls.lines().count(), 3, "one outage, then two refusals");
    assert_eq!(summary["agent_invocations"], 2, "{summary:#}");
    let reason = summary["escalation_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("2 permission denials"), "{reason}");
}
