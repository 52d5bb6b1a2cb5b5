//! The loop with the real Claude Code CLI: `prpd run` drives `claude -p` through every phase of
//! the `calc` scenario (`tests/real-agents/calc/`, with the prpd.toml of
//! `tests/real-agents/prpd-claude.toml`), the CLI talking to the local mock model server
//! `tests/real-agents/mock-model.mjs` instead of Anthropic's API. The mock scripts the model's
//! side (which tool to call next); Claude Code itself writes the files, runs the test command,
//! reports usage and cost, and prpd measures the result as it would with a real model.
//!
//! What is checked is what a user of Claude Code depends on: the run ships; the agent's own test
//! runs came back with test output, not "This command requires approval"; prpd read the usage
//! Claude Code reported; and no process the run started outlives it, even when the test script
//! leaves a detached process behind. Without `--allowedTools` the same scenario shows the
//! refusal and does not ship, so the first check can fail.
//!
//! The planner of `prpd plan --agent` is checked the same way: Claude Code starts `prpd mcp` from
//! its `--mcp-config` and carries out the planner tool calls the mock scripts.
//!
//! The CLI must be installed (`npm install -g @anthropic-ai/claude-code@2`; `.ci/run` does it):
//! the test fails, naming that command, where it is not.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{PRP, alive, kill_leftover, read, run_dir};
use crate::util::TestRepo;

/// The scenario's files: the mock, the fixture repository and its prpd.toml.
const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/real-agents");

/// How Claude Code is installed where it is missing.
const INSTALL: &str = "npm install -g @anthropic-ai/claude-code@2";

/// The pair of arguments that lets the agent run the test command, and nothing wider.
/// The scenario's agent block spelled out without `--allowedTools`: the built-in block's command
/// as a user who copied it without the allow-list would have it.
const WITHOUT_ALLOWED_TOOLS: &str = r#"agent = "claude-code"
command = ["claude", "-p", "--model", "{model}", "--output-format", "json", "--permission-mode", "acceptEdits"]"#;

/// Fails the test, with the install command, when `claude` does not run.
#[expect(
    clippy::disallowed_methods,
    reason = "the test asks the machine whether the agent CLI is installed, outside prpd"
)]
fn require_claude() {
    let installed = std::process::Command::new("claude")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        installed,
        "the Claude Code CLI `claude` is needed for this test: {INSTALL} (.ci/run installs it)"
    );
}

/// The mock model server, stopped when dropped.
struct MockModel {
    child: Child,
    /// Its address, as `ANTHROPIC_BASE_URL`.
    url: String,
    /// The JSON lines it records, one per request.
    record: PathBuf,
}

impl MockModel {
    #[expect(
        clippy::disallowed_methods,
        reason = "the mock model server is the test's own fixture, started outside prpd"
    )]
    fn start(dir: &Path) -> MockModel {
        let record = dir.join("requests.jsonl");
        let mut child = std::process::Command::new("node")
            .arg(Path::new(SCENARIO).join("mock-model.mjs"))
            .arg("--record")
            .arg(&record)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start node tests/real-agents/mock-model.mjs");
        let stdout = child.stdout.take().expect("the mock's stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the mock's first line");
        let Some(url) = line.trim().strip_prefix("mock-model listening on ") else {
            let _ = child.kill();
            panic!("the mock model server did not start: {line:?}");
        };
        let url = url.to_owned();
        MockModel { child, url, record }
    }

    /// Every request the mock answered, in order.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a recorded request is JSON"))
            .collect()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `calc` fixture committed in a new repository, with `config` as its prpd.toml.
fn scenario_repo(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    copy_dir(&Path::new(SCENARIO).join("calc"), repo.path());
    repo.file("prpd.toml", config).commit("calc");
    repo
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the fixture folder") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

fn claude_config() -> String {
    read(&Path::new(SCENARIO).join("prpd-claude.toml"))
}

/// What one `prpd run` left: the exit code, the summary, prpd's stderr and the requests the
/// mock answered.
struct Finished {
    code: i32,
    summary: Value,
    stderr: String,
    requests: Vec<Value>,
    /// Processes that still carried the mock's address after the run.
    left: Vec<i32>,
}

/// `prpd run PRPs/multiply.md --json` with Claude Code pointed at a new mock. Claude Code gets a
/// fresh `HOME`, so nothing of the user's own configuration is read or changed, and nothing
/// leaves the machine.
fn run_with_claude(repo: &TestRepo) -> Finished {
    prpd_with_claude(repo, &["run", "--in-place", PRP, "--json"])
}

/// `prpd <args>` (which print the JSON summary) with Claude Code pointed at a new mock, as
/// [`run_with_claude`] does.
fn prpd_with_claude(repo: &TestRepo, args: &[&str]) -> Finished {
    let work = tempfile::Builder::new()
        .prefix("prpd-real-claude-")
        .tempdir()
        .expect("temp dir");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    // npm looks for a newer npm on the registry from a home without this setting: the test
    // runs of the agent would reach the network.
    std::fs::write(home.join(".npmrc"), "update-notifier=false\n").expect("write .npmrc");
    let mock = MockModel::start(work.path());
    let output = repo
        .prpd()
        .args(args)
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .timeout(Duration::from_secs(300))
        .output()
        .expect("run prpd");
    let left = left_running(&mock);
    left.iter().copied().for_each(kill_leftover);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let summary = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    Finished {
        code: output.status.code().expect("prpd exited by itself"),
        summary,
        stderr,
        requests: mock.requests(),
        left,
    }
}

/// Live processes, other than the mock, whose environment holds the mock's address: everything
/// prpd started inherited it. A process may take a moment to be reaped; what is still there
/// after two seconds was left behind.
fn left_running(mock: &MockModel) -> Vec<i32> {
    let marker = format!("ANTHROPIC_BASE_URL={}", mock.url);
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let found: Vec<i32> = std::fs::read_dir("/proc")
            .expect("read /proc")
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| u32::try_from(*pid).ok() != Some(mock.child.id()))
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                    environ
                        .split(|byte| *byte == 0)
                        .any(|variable| variable == marker.as_bytes())
                })
            })
            .filter(|pid| alive(*pid))
            .collect();
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The requests of the conversations of `phase` (`RED`, ...), in order.
fn phase_requests<'a>(requests: &'a [Value], phase: &str) -> Vec<&'a Value> {
    requests
        .iter()
        .filter(|request| request["phase"] == phase)
        .collect()
}

/// The tool calls of a phase's last conversation with what Claude Code sent back: the last
/// request of a phase holds all of them.
fn tool_results<'a>(requests: &'a [Value], phase: &str) -> &'a [Value] {
    phase_requests(requests, phase)
        .last()
        .and_then(|request| request["tool_results"].as_array())
        .map_or(&[], Vec::as_slice)
}

/// The result object Claude Code printed in each iteration, by iteration directory name.
fn claude_results(repo: &Path, summary: &Value) -> Vec<(String, Value)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(run_dir(repo, summary).join("iterations"))
        .expect("iterations directory")
        .map(|entry| entry.expect("dir entry").path())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let log = read(&dir.join("output.log"));
            let result = log
                .lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|object| object["type"] == "result")
                .unwrap_or_else(|| panic!("{}: no result object:\n{log}", dir.display()));
            let name = dir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, result)
        })
        .collect()
}

/// The receipt has one line per call, with the model the mock served and the tokens it
/// counted, and sums to the summary's cost.
fn assert_receipt_is_what_the_mock_served(summary: &Value, requests: &[Value]) {
    let lines = summary["receipt"]["lines"].as_array().expect("receipt");
    assert_eq!(lines.len(), 5, "{summary:#}");
    for line in lines {
        let phase = line["phase"].as_str().expect("phase");
        let served: Vec<&Value> = phase_requests(requests, phase);
        let model = served.last().map(|request| request["model"].clone());
        assert_eq!(Some(line["model"].clone()), model, "{line:#}");
        assert_eq!(line["model_reported"], true, "{line:#}");
        assert_eq!(line["cost"], "reported", "{line:#}");
        let tokens = |key: &str| -> u64 {
            served
                .iter()
                .map(|request| request["usage"][key].as_u64().unwrap_or(0))
                .sum()
        };
        assert_eq!(
            line["tokens"]["input"].as_u64().unwrap_or(0)
                + line["tokens"]["cache_write"].as_u64().unwrap_or(0),
            tokens("input_tokens"),
            "{phase}: {line:#}"
        );
        assert_eq!(
            line["tokens"]["output"],
            tokens("output_tokens"),
            "{line:#}"
        );
    }
    let totals = &summary["receipt_totals"];
    assert_eq!(totals["cost_usd"], summary["cost_usd"], "{summary:#}");
    assert_eq!(totals["calls_without_cost"], 0);
}

/// The test output a Bash call of the test command brought back, or a panic naming what came.
fn test_run<'a>(results: &'a [Value], phase: &str) -> &'a str {
    let run = results
        .iter()
        .find(|result| result["tool"] == "Bash" && result["input"]["command"] == "npm test")
        .unwrap_or_else(|| panic!("{phase}: the agent did not run `npm test`: {results:#?}"));
    let text = run["text"].as_str().unwrap_or_default();
    assert_eq!(
        run["refused"], false,
        "{phase}: `npm test` was refused: {text}"
    );
    assert!(
        !text.contains("requires approval") && text.contains("# tests "),
        "{phase}: `npm test` brought back no test output:\n{text}"
    );
    text
}

#[test]
#[ignore = "end-to-end tier: needs the Claude Code CLI; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn claude_code_ships_the_scenario_running_its_own_tests_with_usage_read_and_nothing_left() {
    require_claude();
    let repo = scenario_repo(&claude_config());
    let run = run_with_claude(&repo);
    let Finished {
        code,
        summary,
        stderr,
        requests,
        left,
    } = &run;
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
    assert_eq!(
        summary["state"], "SHIPPED",
        "{summary:#}\nstderr:\n{stderr}\nrequests:\n{requests:#?}"
    );
    assert_eq!(*code, 0);
    assert_eq!(summary["agent_invocations"], 5, "{summary:#}");

    // What the CLI sent: the models the aliases stand for, the tools, the key.
    for request in requests {
        assert_eq!(
            request["kind"], "phase",
            "a request of the CLI's own: {request:#}"
        );
        let model = request["model"].as_str().unwrap_or_default();
        let expected = if request["phase"] == "QA" {
            "claude-opus"
        } else {
            "claude-sonnet"
        };
        assert!(model.starts_with(expected), "{request:#}");
        assert_eq!(request["api_key"], "x-api-key", "{request:#}");
        let tools = request["tools"].to_string();
        for tool in ["Bash", "Read", "Write", "Edit"] {
            assert!(tools.contains(&format!("\"{tool}\"")), "{tool}: {tools}");
        }
    }

    // The agent's own test runs ran: RED's fails on the missing multiply, the later ones pass.
    let red = test_run(tool_results(requests, "RED"), "RED");
    assert!(red.contains("not ok") && red.contains("# fail 1"), "{red}");
    for phase in ["GREEN", "REFACTOR"] {
        let text = test_run(tool_results(requests, phase), phase);
        assert!(text.contains("# fail 0"), "{phase}:\n{text}");
    }
    let refused: Vec<&Value> = requests
        .iter()
        .flat_map(|request| request["tool_results"].as_array().into_iter().flatten())
        .filter(|result| {
            // A Bash call is an error when its command exits non-zero (RED's failing tests).
            result["refused"] == true || (result["is_error"] == true && result["tool"] != "Bash")
        })
        .collect();
    assert!(
        refused.is_empty(),
        "refused or failed tool calls: {refused:#?}"
    );
    for (name, result) in claude_results(repo.path(), summary) {
        assert_eq!(
            result["permission_denials"],
            serde_json::json!([]),
            "{name}: {result:#}"
        );
        assert_eq!(result["is_error"], false, "{name}: {result:#}");
    }

    // The usage prpd read is the usage the mock reported, request by request.
    let reported: u64 = requests
        .iter()
        .map(|request| {
            request["usage"]["input_tokens"].as_u64().unwrap_or(0)
                + request["usage"]["output_tokens"].as_u64().unwrap_or(0)
        })
        .sum();
    assert!(reported > 0, "{requests:#?}");
    assert_eq!(summary["tokens"], reported, "{summary:#}");
    let cost = summary["cost_usd"].as_f64().unwrap_or(0.0);
    assert!(cost > 0.0, "no cost was read: {summary:#}");

    assert_receipt_is_what_the_mock_served(summary, requests);

    // The feature is in the tree, as Claude Code's edits left it.
    let calc = read(&repo.join("src/calc.js"));
    assert!(calc.contains("export function multiply(a, b)"), "{calc}");
    assert!(read(&repo.join("README.md")).contains("`multiply(a, b)`"));
    assert!(read(&repo.join("test/multiply.test.js")).contains("AC-1"));
}

#[test]
#[ignore = "end-to-end tier: needs the Claude Code CLI; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn a_budget_stops_claude_code_within_one_usage_report_and_a_raise_lets_it_ship() {
    require_claude();
    // The mock serves the model Claude Code asks for (its `sonnet` is `claude-sonnet-5`, which
    // the built-in prices do not know): the price is the user's to give.
    let config = claude_config().replace(
        "[guardrails]\n",
        "[prices.\"claude-sonnet-5\"]\ninput = 3.0\noutput = 15.0\n\n[guardrails]\nmax_cost_usd = 0.001\n",
    );
    assert!(config.contains("max_cost_usd = 0.001"), "{config}");
    let repo = scenario_repo(&config);
    let stopped = run_with_claude(&repo);
    let summary = &stopped.summary;
    assert_eq!(stopped.code, 3, "{summary:#}\n{}", stopped.stderr);
    let guardrail = summary["guardrail"].as_str().unwrap_or_default();
    assert!(
        guardrail.starts_with("max_cost_usd = 0.001 for this run")
            && guardrail.contains("stopped mid-call"),
        "{summary:#}"
    );
    // RED's story takes several model calls; the first one's usage crossed the budget, and at
    // most the one already in flight was served after it.
    let red = phase_requests(&stopped.requests, "RED");
    assert!(
        (1..=2).contains(&red.len()),
        "{} RED requests were served: {:#?}",
        red.len(),
        stopped.requests
    );
    let line = &summary["receipt"]["lines"][0];
    assert_eq!(line["verdict"], "stopped", "{line:#}");
    assert_eq!(line["cost"], "priced", "{line:#}");
    assert!(
        line["model"]
            .as_str()
            .unwrap_or_default()
            .starts_with("claude-sonnet")
    );
    assert!(!repo.join("test/multiply.test.js").exists() || red.len() == 2);

    let run_id = summary["run_id"].as_str().expect("run id");
    let resumed = prpd_with_claude(&repo, &["resume", run_id, "--budget", "+100", "--json"]);
    assert_eq!(
        (resumed.code, resumed.summary["state"].as_str()),
        (0, Some("SHIPPED")),
        "{:#}\n{}",
        resumed.summary,
        resumed.stderr
    );
    assert!(
        resumed.left.is_empty(),
        "processes outlived the run: {:?}",
        resumed.left
    );
}

#[test]
#[ignore = "end-to-end tier: needs the Claude Code CLI; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn without_allowed_tools_the_agents_test_run_is_refused_and_the_run_does_not_ship() {
    require_claude();
    let config = claude_config();
    assert!(config.contains("agent = \"claude-code\""), "{config}");
    let repo = scenario_repo(&config.replace("agent = \"claude-code\"", WITHOUT_ALLOWED_TOOLS));
    let Finished {
        code,
        summary,
        stderr,
        requests,
        left,
    } = run_with_claude(&repo);
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
    assert_eq!(
        summary["state"], "ESCALATED",
        "{summary:#}\nstderr:\n{stderr}"
    );
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "RED", "{summary:#}");

    let results = tool_results(&requests, "RED");
    let run = results
        .iter()
        .find(|result| result["tool"] == "Bash")
        .unwrap_or_else(|| panic!("RED ran no command: {results:#?}"));
    assert_eq!(run["refused"], true, "{run:#}");
    assert!(
        run["text"]
            .as_str()
            .is_some_and(|text| text.contains("requires approval")),
        "{run:#}"
    );
    let (name, result) = claude_results(repo.path(), &summary)
        .into_iter()
        .next()
        .expect("RED's first iteration");
    let denials = result["permission_denials"].to_string();
    assert!(denials.contains("\"Bash\""), "{name}: {result:#}");
}

/// The scenario with a test script that also leaves a detached `sleep` running (`setsid`, out of
/// every process group, as Claude Code's Bash tool runs commands), each recording its pid: the
/// agent's test runs and prpd's own start them, and none may outlive the run.
#[test]
#[ignore = "end-to-end tier: needs the Claude Code CLI; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn what_the_agents_test_runs_leave_running_does_not_outlive_the_run() {
    require_claude();
    let pids = tempfile::Builder::new()
        .prefix("prpd-real-claude-pids-")
        .tempdir()
        .expect("temp dir");
    let pid_file = pids.path().join("pids");
    let repo = scenario_repo(&claude_config());
    let package = read(&repo.join("package.json"));
    let leaky = format!(
        "(setsid sh -c 'echo $$ >> {}; exec sleep 600' >/dev/null 2>&1 &); node --test",
        pid_file.display()
    );
    let leaky_package = package.replace(
        "\"node --test\"",
        &serde_json::to_string(&leaky).expect("a JSON string"),
    );
    assert_ne!(package, leaky_package, "{package}");
    repo.file("package.json", &leaky_package)
        .commit("test runs leave a sleep running");

    let Finished {
        code,
        summary,
        stderr,
        left,
        ..
    } = run_with_claude(&repo);
    let started: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap_or_default()
        .lines()
        .map(|pid| pid.trim().parse().expect("a pid"))
        .collect();
    let survivors: Vec<i32> = started.iter().copied().filter(|pid| alive(*pid)).collect();
    survivors.iter().copied().for_each(kill_leftover);
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
    assert!(
        survivors.is_empty(),
        "sleeps outlived the run: {survivors:?} of {started:?}"
    );
    assert!(
        started.len() >= 4,
        "the agent's and prpd's test runs started too few sleeps: {started:?}\nstderr:\n{stderr}"
    );
    assert_eq!(
        summary["state"], "SHIPPED",
        "{summary:#}\nstderr:\n{stderr}"
    );
    assert_eq!(code, 0);
}

/// `prpd plan -u SITE -d 1 --agent` with Claude Code as the planner: the CLI starts `prpd mcp`
/// from its `--mcp-config` (inheriting `PRPD_PLAN_RUN`), the mock has it read the exploration,
/// open a page the walk left, and hand in the plan through `finalize_test_plan`; Claude Code
/// carries out each MCP call itself.
#[test]
#[ignore = "end-to-end tier: needs the Claude Code CLI; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn claude_code_plans_the_example_app_through_prpd_mcp() {
    require_claude();
    let site = crate::example_site::ExampleSite::serve();
    let work = tempfile::Builder::new()
        .prefix("prpd-real-claude-plan-")
        .tempdir()
        .expect("temp dir");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    let mock = MockModel::start(work.path());
    let prpd = assert_cmd::cargo::cargo_bin("prpd");
    let mcp_config = serde_json::json!({
        "mcpServers": {"prpd": {"type": "stdio", "command": prpd, "args": ["mcp"]}}
    });
    let repo = TestRepo::new();
    repo.file(
        "prpd.toml",
        &format!(
            "[agents.red]\ncommand = [\"claude\", \"-p\", \"--model\", \"{{model}}\", \"--output-format\", \"json\", \
             \"--mcp-config\", {}, \"--strict-mcp-config\", \"--allowedTools\", \"mcp__prpd\"]\n\
             model = \"sonnet\"\nprompt = \"stdin\"\ntimeout = \"3m\"\nenv = [\"ANTHROPIC_*\", \"CLAUDE_*\", \"DISABLE_*\"]\n",
            serde_json::to_string(&mcp_config.to_string()).expect("a TOML string")
        ),
    )
    .commit("config");
    let output = repo
        .prpd()
        .args(["plan", "-u", &site.url(), "-d", "1", "--agent"])
        .env("HOME", &home)
        .env("TMPDIR", work.path())
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd plan");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let requests = mock.requests();
    let planner: Vec<&Value> = requests
        .iter()
        .filter(|request| request["phase"] == "PLANNER")
        .collect();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{stderr}\nrequests: {planner:#?}"
    );
    let calls: Vec<String> = planner
        .last()
        .and_then(|request| request["tool_results"].as_array())
        .map(|results| {
            results
                .iter()
                .map(|result| {
                    format!(
                        "{} error={}",
                        result["tool"].as_str().unwrap_or_default(),
                        result["is_error"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        calls,
        [
            "mcp__prpd__list_known_pages error=false",
            "mcp__prpd__open_url error=false",
            "mcp__prpd__finalize_test_plan error=false"
        ],
        "{planner:#?}"
    );
    let run = repo.only_run_dir();
    let summary: Value =
        serde_json::from_str(&read(&run.join("plan/plan-summary.json"))).expect("summary");
    assert_eq!(summary["planner"], "agent");
    assert_eq!(summary["cases"], 2);
    assert!(
        read(&run.join("plan-explore/graph.json")).contains("\"id\": \"docs-two\""),
        "the page Claude Code opened through prpd mcp is in the graph"
    );
    assert!(
        run.join("plan/specs/boundary-p0-a-13-year-old-can-sign-up.md")
            .is_file()
    );
    assert!(
        crate::example_site::wait_until(Duration::from_secs(10), || {
            crate::example_site::chromium_under(work.path()).is_empty()
        }),
        "no browser outlives the plan"
    );
}
