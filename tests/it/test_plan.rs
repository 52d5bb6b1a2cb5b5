//! Agent test plans in the loop (`protocols/test_plan`): the real binary runs the `calc`
//! fixture of `run.rs` with `agents/test-plan-agent.mjs` as the RED agent, whose answer ends
//! with a `TestPlan` among prose and other code blocks, and the fixture agent for the other
//! phases. An honest plan is written under `runs/<id>/plan/` and the run ships; a plan that
//! names a case no failing test covers holds RED's gate, naming the case, even once the agent
//! stops repeating it; a plan that does not parse gives the seed's message.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::run::{PRP, calc_repo, iterations_in, measured, prp, read, run, run_dir};
use crate::util::TestRepo;

const PLAN_AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/test-plan-agent.mjs"
);
const FIXTURE_AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/fixture-agent.mjs"
);

/// A secret in prpd's environment, which the RED agent is given too.
const PASSWORD: &str = "hunter2-secret-value";

/// prpd.toml: RED runs the test-plan agent with `behaviour` (and gets `PASSWORD`), writing its
/// answer to `{last_message_file}` too, as Codex does; the other phases run the honest fixture
/// agent; `extra` follows.
fn config(behaviour: &str, extra: &str) -> String {
    let mut toml = format!(
        "[agents.red]\ncommand = [\"node\", \"{PLAN_AGENT}\", \"{behaviour}\", \"{{last_message_file}}\"]\n\
         model = \"fixture-green\"\nprompt = \"stdin\"\ntimeout = \"60s\"\nenv = [\"PASSWORD\"]\n\n"
    );
    for phase in ["green", "refactor", "document", "qa"] {
        let model = if phase == "qa" {
            "fixture-qa"
        } else {
            "fixture-green"
        };
        let _ = write!(
            toml,
            "[agents.{phase}]\ncommand = [\"node\", \"{FIXTURE_AGENT}\", \"honest\", \"plain\"]\n\
             model = \"{model}\"\nprompt = \"stdin\"\ntimeout = \"60s\"\nenv = []\n\n"
        );
    }
    toml.push_str(extra);
    toml
}

/// `prpd run` with secrets in prpd's environment: the exit code and the summary.
fn run_with_secrets(repo: &TestRepo) -> (i32, Value) {
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP, "--json"])
        .env("PASSWORD", PASSWORD)
        .env("USERNAME", "alice-the-tester")
        .env("API_KEY", "sk-test-0123456789")
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (
        output.status.code().expect("prpd exited by itself"),
        summary,
    )
}

/// What the test-plan agent recorded of each of its calls.
fn agent_calls(repo: &Path, summary: &Value) -> Vec<Value> {
    read(&run_dir(repo, summary).join("test-plan-agent-calls.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).expect("a call is JSON"))
        .collect()
}

/// Gate 1's unmet conditions of each RED iteration, joined.
fn red_gate1(repo: &Path, summary: &Value) -> Vec<String> {
    measured(repo, summary, "red")
        .iter()
        .map(|measured| measured["gate_1"].to_string())
        .collect()
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn an_honest_plan_is_written_with_its_placeholders_and_the_run_ships() {
    let repo = calc_repo(&prp(""), &config("honest", ""));
    let (code, summary) = run_with_secrets(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(iterations_in(&summary, "RED"), 1, "{summary:#}");
    let calls = agent_calls(repo.path(), &summary);
    assert_eq!(calls[0]["prompt_asks_for_a_plan"], true, "{calls:?}");

    let plan_dir = run_dir(repo.path(), &summary).join("plan");
    let plan: Value =
        serde_json::from_str(&read(&plan_dir.join("test-plan.json"))).expect("test-plan.json");
    assert_eq!(plan["runId"], summary["run_id"]);
    assert!(
        plan["generatedAt"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z')),
        "{plan:#}"
    );
    let ids: Vec<&str> = plan["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| case["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["ac-1", "signs"]);
    assert_eq!(plan["flows"][0]["pagePath"][0], "src/calc.js");
    assert_eq!(
        plan["cases"][1]["markdownPath"],
        "boundary-p1-multiply-keeps-the-sign-of-a-negative-factor.md"
    );

    let spec = read(&plan_dir.join("specs/functional-p0-ac-1.md"));
    for expected in [
        "# Multiply returns the product\n",
        "- Type: functional\n- Priority: p0\n- Pages: src/calc.js\n",
        "## Preconditions\n\n- Signed in as {{USERNAME}} / {{PASSWORD}}\n",
        "- The test account's password is [redacted]\n",
        "## Steps\n\n1. Call multiply(6, 7) with the key {{API_KEY}}\n   - Expected: It returns 42\n",
        "2. Sign out; {{PASSWORD}} is not shown\n",
    ] {
        assert!(spec.contains(expected), "{expected:?} in\n{spec}");
    }
    assert!(
        plan_dir
            .join("specs/boundary-p1-multiply-keeps-the-sign-of-a-negative-factor.md")
            .is_file()
    );
    // The plan was read from the final message the agent wrote apart from its log, as Codex
    // does: that file is redacted too.
    let last_message =
        read(&run_dir(repo.path(), &summary).join("iterations/001-red-1/last-message.md"));
    assert!(
        last_message.contains("password is [redacted]"),
        "{last_message}"
    );
    for secret in [PASSWORD, "sk-test-0123456789"] {
        let leaks = files_holding(&repo.join(".prp-session"), secret);
        assert!(leaks.is_empty(), "{secret} in {leaks:?}");
    }
}

#[test]
fn a_case_without_a_failing_test_holds_red_even_when_the_plan_is_not_repeated() {
    let repo = calc_repo(
        &prp(""),
        &config("unmatched", "[guardrails]\nmax_agent_invocations = 2\n"),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "RED", "{summary:#}");
    assert_eq!(iterations_in(&summary, "GREEN"), 0, "{summary:#}");

    let gates = red_gate1(repo.path(), &summary);
    assert_eq!(gates.len(), 2, "{gates:?}");
    for gate in &gates {
        assert!(
            gate.contains("1 of the TestPlan's 3 case(s) have no failing test")
                && gate.contains("`ac-9` (Divides by zero)"),
            "{gates:?}"
        );
        assert!(
            !gate.contains("`ac-1`") && !gate.contains("`signs`"),
            "{gate}"
        );
    }
    let calls = agent_calls(repo.path(), &summary);
    let told = calls[1]["feedback_text"].as_str().expect("feedback");
    assert!(told.contains("`ac-9` (Divides by zero)"), "{told}");
    assert!(
        told.contains("prpd read your TestPlan: 3 case(s)"),
        "{told}"
    );
    let plan: Value = serde_json::from_str(&read(
        &run_dir(repo.path(), &summary).join("plan/test-plan.json"),
    ))
    .expect("test-plan.json");
    assert_eq!(plan["cases"].as_array().map(Vec::len), Some(3));
}

#[test]
fn a_plan_that_does_not_parse_gives_the_seeds_message_until_it_is_fixed() {
    let repo = calc_repo(&prp(""), &config("broken-once", ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(iterations_in(&summary, "RED"), 2, "{summary:#}");
    let gates = red_gate1(repo.path(), &summary);
    assert!(
        gates[0]
            .contains("the TestPlan in your answer was refused: Failed to parse TestPlan JSON:"),
        "{gates:?}"
    );
    assert_eq!(gates[1], "null", "RED's second iteration holds: {gates:?}");
    let calls = agent_calls(repo.path(), &summary);
    let told = calls[1]["feedback_text"].as_str().expect("feedback");
    assert!(told.contains("Failed to parse TestPlan JSON:"), "{told}");
    assert!(
        run_dir(repo.path(), &summary)
            .join("plan/specs/functional-p0-ac-1.md")
            .is_file()
    );
}
