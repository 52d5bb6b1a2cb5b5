//! Critical points from outside: an MCP client (rmcp, the crate Claude Code's SDK peers speak
//! with) drives the real `prpd mcp` over its stdio, and scripts drive `prpd plan create` /
//! `prpd plan verify`. Plans persisted under `QA_PROJECT_ROOT` outlive the server.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;

use assert_cmd::cargo::CommandCargoExt as _;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use crate::util::TestRepo;

/// A running `prpd mcp` and the client connected to it (`web_plan_mcp.rs` uses it too).
pub(crate) struct Server {
    pub(crate) client: RunningService<RoleClient, ()>,
    pub(crate) child: tokio::process::Child,
}

async fn start(root: &Path) -> Server {
    start_mcp(&[], &[("QA_PROJECT_ROOT", root.as_os_str())]).await
}

/// `prpd mcp ARGS` with `env`, logs on (they must all go to stderr, or the client could not
/// read stdout), and an MCP client that completed the handshake.
pub(crate) async fn start_mcp(args: &[&OsStr], env: &[(&str, &OsStr)]) -> Server {
    let command = std::process::Command::cargo_bin("prpd").expect("prpd is built");
    let mut command = tokio::process::Command::from(command);
    command
        .arg("mcp")
        .args(args)
        .envs(env.iter().copied())
        .env("PRPD_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("start prpd mcp");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let client = ().serve((stdout, stdin)).await.expect("MCP handshake with prpd mcp");
    Server { client, child }
}

async fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    server
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("the call is answered")
}

fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one conversation with the server, step by step"
)]
async fn an_mcp_client_declares_points_with_qa_plan_and_gets_a_verdict_from_verify_plan() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = start(root.path()).await;

    let info = server.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|server| server.name.as_str()),
        Some("prpd")
    );
    let tools = server
        .client
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names[..2], ["qa_plan", "verify_plan"]);
    assert!(
        names[2..].contains(&"open_url") && names[2..].contains(&"finalize_test_plan"),
        "then the planner tools: {names:?}"
    );
    assert_eq!(
        tools[0].input_schema["required"],
        json!(["task", "critical_points"])
    );

    let created = call(
        &server,
        "qa_plan",
        json!({
            "task": "add login",
            "kind": "test",
            "critical_points": [
                "test_login",
                {"id": "LINT", "description": "no lint problems", "verification_hint": "0 problems"},
                {"description": "logout works", "verification_hint": "test_logout"},
            ],
        }),
    )
    .await;
    assert_eq!(created.is_error, Some(false));
    let plan = structured(&created).clone();
    let plan_id = plan["plan_id"].as_str().expect("plan_id").to_owned();
    assert_eq!(plan_id.len(), 12);
    assert!(plan_id.bytes().all(|byte| byte.is_ascii_hexdigit()));
    assert_eq!(plan["kind"], "test");
    let ids: Vec<&str> = plan["critical_points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|point| point["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["CP1", "LINT", "CP3"]);
    let persisted = root
        .path()
        .join(format!("test-results/plans/{plan_id}.json"));
    assert_eq!(plan["persisted_to"], json!(persisted.display().to_string()));
    assert!(persisted.is_file());

    let verdict = call(
        &server,
        "verify_plan",
        json!({
            "plan_id": plan_id,
            "evidence": [
                "PASSED tests/test_auth.py::test_login",
                {"text": "eslint: 0 problems", "source": "lint", "passed": true},
                "FAILED tests/test_auth.py::test_logout - assert 302 == 200",
            ],
        }),
    )
    .await;
    let verdict = structured(&verdict);
    assert_eq!(verdict["verdict"], "fail");
    assert_eq!(verdict["task"], "add login");
    let points: Vec<(&str, &str)> = verdict["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|point| {
            (
                point["id"].as_str().expect("id"),
                point["verdict"].as_str().expect("verdict"),
            )
        })
        .collect();
    assert_eq!(points, [("CP1", "pass"), ("LINT", "pass"), ("CP3", "fail")]);
    assert_eq!(
        verdict["points"][2]["contradicted"][0],
        "FAILED tests/test_auth.py::test_logout - assert 302 == 200"
    );

    // The error shapes reach the agent as tool errors it can read.
    for (tool, arguments, code) in [
        ("qa_plan", json!({"critical_points": ["x"]}), "no_task"),
        (
            "qa_plan",
            json!({"task": "t", "critical_points": []}),
            "no_critical_points",
        ),
        (
            "qa_plan",
            json!({"task": "t", "critical_points": ["a", {"id": "CP1", "description": "b"}]}),
            "bad_critical_points",
        ),
        (
            "qa_plan",
            json!({"task": "t", "critical_points": ["a"], "kind": "vibes"}),
            "bad_kind",
        ),
        (
            "verify_plan",
            json!({"plan_id": "000000000000", "evidence": []}),
            "unknown_plan",
        ),
        (
            "verify_plan",
            json!({"plan_id": plan_id, "evidence": 3}),
            "bad_evidence",
        ),
        ("no_such_tool", json!({}), "unknown_tool"),
    ] {
        let refused = call(&server, tool, arguments).await;
        assert_eq!(refused.is_error, Some(true), "{tool} {code}");
        assert_eq!(structured(&refused)["error"], code);
    }
    server.client.cancel().await.expect("close the session");
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), {
        let mut child = server.child;
        async move { child.wait().await }
    })
    .await
    .expect("prpd mcp exits when the client closes its stdin")
    .expect("wait");
    assert!(status.success(), "{status}");

    // A new server process finds the plan on disk.
    let restarted = start(root.path()).await;
    let again = call(
        &restarted,
        "verify_plan",
        json!({"plan_id": plan_id, "evidence": "test_login ok\n0 problems\ntest_logout ok"}),
    )
    .await;
    assert_eq!(structured(&again)["verdict"], "pass");
}

fn plan_id_of(stdout: &[u8]) -> String {
    let plan: Value = serde_json::from_slice(stdout).expect("the plan as JSON");
    plan["plan_id"].as_str().expect("plan_id").to_owned()
}

#[test]
fn prpd_plan_create_and_verify_for_scripts() {
    let repo = TestRepo::new();
    let created = repo
        .prpd()
        .env_remove("QA_PROJECT_ROOT")
        .args([
            "plan",
            "create",
            "--task",
            "add login",
            "--point",
            "test_login",
            "--point",
            "0 problems",
        ])
        .output()
        .expect("run");
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let plan_id = plan_id_of(&created.stdout);
    assert!(
        repo.join(&format!("test-results/plans/{plan_id}.json"))
            .is_file()
    );

    let passing = repo
        .prpd()
        .env_remove("QA_PROJECT_ROOT")
        .args([
            "plan",
            "verify",
            &plan_id,
            "--evidence-file",
            "-",
            "--markdown",
        ])
        .write_stdin("test_login ... ok\neslint: 0 problems\n")
        .output()
        .expect("run");
    assert_eq!(passing.status.code(), Some(0));
    let table = String::from_utf8_lossy(&passing.stdout);
    assert!(
        table.contains("| CP1 | test_login | `test_login` | PASS | test_login ... ok |"),
        "{table}"
    );

    let failing = repo
        .prpd()
        .env_remove("QA_PROJECT_ROOT")
        .args([
            "plan",
            "verify",
            &plan_id,
            "--evidence",
            "test_login ... FAILED",
        ])
        .output()
        .expect("run");
    assert_eq!(failing.status.code(), Some(1), "a failed point exits 1");
    let verdict: Value = serde_json::from_slice(&failing.stdout).expect("JSON");
    assert_eq!(verdict["failed"], 2);

    // A test that did not run, or a longer name that starts with the hint, is no evidence.
    for cheating in [
        "tests/test_auth.py::test_login SKIPPED (not written yet)",
        "test test_login ... ignored",
        "tests/test_auth.py::test_login_is_not_written_yet PASSED",
    ] {
        let refused = repo
            .prpd()
            .env_remove("QA_PROJECT_ROOT")
            .args(["plan", "verify", &plan_id, "--evidence", cheating])
            .args(["--evidence", "eslint: 0 problems"])
            .output()
            .expect("run");
        assert_eq!(refused.status.code(), Some(1), "{cheating}");
        let verdict: Value = serde_json::from_slice(&refused.stdout).expect("JSON");
        assert_eq!(verdict["points"][0]["verdict"], "fail", "{cheating}");
    }

    let refused = repo
        .prpd()
        .args(["plan", "create", "--point", "x"])
        .output()
        .expect("run");
    assert_eq!(refused.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&refused.stdout).expect("JSON error");
    assert_eq!(error["error"], "no_task");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no_task: task is required"));

    let unknown = repo
        .prpd()
        .args(["plan", "verify", "../../etc/pa", "--evidence", "x"])
        .output()
        .expect("run");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("bad_plan_id"));
}

/// The calc fixture's PRP with one more success criterion.
fn prp_with_criterion(criterion: &str) -> String {
    crate::run::prp("").replace(
        "- [ ] Every acceptance criterion has a test that names it\n",
        &format!("- [ ] Every acceptance criterion has a test that names it\n- [ ] {criterion}\n"),
    )
}

fn last_report(summary: &Value) -> String {
    let verdicts = summary["verdicts"].as_array().expect("verdicts");
    let path = verdicts.last().expect("a verdict")["report"]
        .as_str()
        .expect("the report's path");
    crate::run::read(Path::new(path))
}

#[test]
fn a_success_criterion_the_work_does_not_meet_keeps_it_from_approve() {
    // The agents do everything the tests and checks ask, but the PRP also promised `divide`:
    // every QA names the point, and the run escalates after three REJECTs.
    let repo = crate::run::calc_repo(
        &prp_with_criterion("`divide` is exported from `src/calc.js`"),
        &crate::run::prpd_toml("plain", &[], ""),
    );
    let (code, summary) = crate::run::run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    for verdict in summary["verdicts"].as_array().expect("verdicts") {
        assert_eq!(verdict["verdict"], "REJECT");
        let blocking = verdict["blocking"].to_string();
        assert!(
            blocking.contains("critical_points")
                && blocking.contains("CP3")
                && blocking.contains("divide"),
            "{verdict:#}"
        );
    }
    let report = last_report(&summary);
    assert!(report.contains("## Critical Points"), "{report}");
    assert!(report.contains("| CP1 | `multiply` is exported from `src/calc.js` | `multiply` + `src/calc.js` | PASS |"), "{report}");
    assert!(report.contains("| CP3 | `divide` is exported from `src/calc.js` | `divide` + `src/calc.js` | FAIL | no evidence contains \"divide\" |"), "{report}");
    let points: Value = serde_json::from_str(&crate::run::read(
        &crate::run::run_dir(repo.path(), &summary).join("critical-points.json"),
    ))
    .expect("critical-points.json");
    assert_eq!(points["critical_points"][2]["id"], "CP3");
    assert_eq!(points["hints"][2], json!(["divide", "src/calc.js"]));
}

#[test]
fn the_same_run_with_the_criteria_it_meets_ships_and_reports_each_point() {
    let repo = crate::run::calc_repo(
        &prp_with_criterion("`npm test` passes (verify: `npm test`)"),
        &crate::run::prpd_toml("plain", &[], ""),
    );
    let (code, summary) = crate::run::run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let report = last_report(&summary);
    assert!(report.contains("| CP1 | `multiply` is exported from `src/calc.js` | `multiply` + `src/calc.js` | PASS |"), "{report}");
    assert!(
        report.contains(
            "| CP2 | Every acceptance criterion has a test that names it | — | UNVERIFIED |"
        ),
        "{report}"
    );
    assert!(
        report.contains("| CP3 | `npm test` passes | `npm test` | PASS |"),
        "{report}"
    );
    assert!(
        report.contains("2 of 3 critical points verified, 1 unverified (no hint)"),
        "{report}"
    );
}
