//! `prpd plan -u URL --agent`: after prpd's walk, the RED agent of prpd.toml (here
//! `agents/planner-agent.py`) gets the planner prompt, starts `prpd mcp`, which continues the
//! same exploration (`PRPD_PLAN_RUN`), looks one page further, and hands in its plan — through
//! `finalize_test_plan` or at the end of its answer. An agent with no plan fails loudly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::example_site::{ExampleSite, chromium_under, wait_until};
use crate::util::TestRepo;

const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/planner-agent.py"
);

/// `prpd plan -u SITE -d 1 --agent` with the planner agent in `behaviour`: exit code, stdout,
/// stderr and the run directory.
fn plan_with(site: &ExampleSite, behaviour: &str, tmp: &Path) -> (i32, String, String, PathBuf) {
    let repo = TestRepo::new();
    repo.file(
        "prpd.toml",
        &format!(
            "[agents.red]\ncommand = [\"python3\", \"{AGENT}\", \"{behaviour}\"]\nprompt = \"stdin\"\n\
             timeout = \"60s\"\nenv = []\n\n[plan.auth]\nusername_var = \"APP_USER\"\npassword_var = \"APP_PASSWORD\"\n"
        ),
    )
    .commit("config");
    let output = repo
        .prpd()
        .args(["plan", "-u", &site.url(), "-d", "1", "--agent"])
        .env("TMPDIR", tmp)
        .timeout(Duration::from_secs(120))
        .output()
        .expect("run prpd plan");
    let run = repo.only_run_dir();
    // The repository's temp dir goes with `repo`: keep the files for the caller.
    let kept = tmp.join("run");
    copy(&run, &kept);
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        kept,
    )
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

fn page_ids(run: &Path) -> Vec<String> {
    json(&run.join("plan-explore/graph.json"))["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|page| page["id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn the_agent_continues_the_exploration_and_finalises_the_plan_through_prpd_mcp() {
    let site = ExampleSite::serve();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, stdout, stderr, run) = plan_with(&site, "finalize", tmp.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("planned 3 cases"), "{stdout}");
    let ids = page_ids(&run);
    assert!(ids.contains(&"signup".to_owned()), "{ids:?}");
    assert!(
        ids.contains(&"docs-two".to_owned()),
        "depth 1 leaves docs/two to the agent, which opened it through prpd mcp: {ids:?}"
    );
    let summary = json(&run.join("plan/plan-summary.json"));
    assert_eq!(summary["planner"], "agent");
    assert_eq!(summary["cases"], 3);
    assert!(summary["guardrails"]["maxTokenPerRun"]["count"].as_u64() > Some(0));
    let spec = std::fs::read_to_string(run.join("plan/specs/form-p1-a-member-logs-in.md"))
        .expect("the agent's spec");
    assert!(spec.contains("{{APP_USER}} / {{APP_PASSWORD}}"), "{spec}");
    let prompt = std::fs::read_to_string(run.join("plan-agent/prompt.md")).expect("prompt");
    assert!(
        prompt.contains("({{APP_USER}}, {{APP_PASSWORD}})"),
        "{prompt}"
    );
    let transcript =
        std::fs::read_to_string(run.join("plan-explore/transcript.jsonl")).expect("transcript");
    assert!(
        transcript.contains("\"tool\":\"finalize_test_plan\""),
        "{transcript}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || chromium_under(tmp.path())
            .is_empty()),
        "no browser outlives the plan"
    );
    drop(site);
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn a_plan_at_the_end_of_the_answer_is_read_and_no_plan_fails_loudly() {
    let site = ExampleSite::serve();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, stdout, stderr, run) = plan_with(&site, "answer", tmp.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let plan = json(&run.join("plan/test-plan.json"));
    let cases: Vec<&str> = plan["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter_map(|case| case["id"].as_str())
        .collect();
    assert_eq!(cases, ["signup-age-13", "login-ok", "docs-back"]);
    assert_eq!(plan["configSnapshot"]["maxDepth"], 1);

    let other = tempfile::tempdir().expect("tempdir");
    let (code, stdout, stderr, run) = plan_with(&site, "none", other.path());
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the planner agent gave no TestPlan"),
        "{stderr}"
    );
    assert!(stderr.contains("plan-agent/output.log"), "{stderr}");
    assert!(
        !run.join("plan/test-plan.json").exists(),
        "no plan is made up"
    );
    drop(site);
}
