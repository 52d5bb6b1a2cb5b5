//! Web planning driven by an agent: an MCP client (rmcp) drives the real `prpd mcp` over its
//! stdio through the planner tools — opens the README's example app, clicks, types a password
//! placeholder, reads pages, finalises a plan — and the session's files, guardrails and
//! browser are checked from outside.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

use crate::critical_points::{Server, start_mcp};
use crate::example_site::{ExampleSite, chromium_under, wait_until};
use crate::util::TestRepo;

/// The test account's password, in prpd's environment only.
const PASSWORD: &str = "correct-horse-battery";

async fn start(root: &Path, tmp: &Path) -> Server {
    start_mcp(
        &[OsStr::new("--root"), root.as_os_str()],
        &[
            ("APP_PASSWORD", OsStr::new(PASSWORD)),
            ("APP_USER", OsStr::new("tester@acme.test")),
            // The browser's profile goes under TMPDIR: the test finds its processes by it.
            ("TMPDIR", tmp.as_os_str()),
        ],
    )
    .await
}

async fn call(server: &Server, tool: &str, arguments: Value) -> (bool, Value) {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let result: CallToolResult = server
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("the call is answered");
    let content = result
        .structured_content
        .clone()
        .expect("structured content");
    (result.is_error != Some(true), content)
}

/// Closes the client and returns prpd's exit code.
async fn stop(server: Server) -> i32 {
    let Server { client, mut child } = server;
    drop(client.cancel().await);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("prpd mcp exits when its client goes")
        .expect("wait");
    status.code().expect("exit code")
}

fn element_id(page: &Value, kind: &str, text: &str) -> String {
    page["elements"]
        .as_array()
        .expect("elements")
        .iter()
        .find(|element| element["kind"] == kind && element["text"] == text)
        .and_then(|element| element["id"].as_str())
        .unwrap_or_else(|| panic!("no {kind} {text:?} in {page}"))
        .to_owned()
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                found.push((path, bytes));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one planning session with the server, step by step"
)]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
async fn an_mcp_client_explores_the_app_and_finalises_a_plan_with_placeholders_only() {
    let site = ExampleSite::serve();
    let repo = TestRepo::new();
    repo.file(
        "prpd.toml",
        "[plan]\nmax_snapshots = 20\n[plan.auth]\nusername_var = \"APP_USER\"\npassword_var = \"APP_PASSWORD\"\n",
    )
    .commit("config");
    let tmp = tempfile::tempdir().expect("tempdir");
    let server = start(repo.path(), tmp.path()).await;

    let tools = server.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| &*tool.name).collect();
    for tool in [
        "open_url",
        "observe_current_page",
        "list_known_pages",
        "get_page",
        "navigate",
        "click",
        "fill",
        "scroll",
        "wait",
        "propose_test_cases_for_page",
        "finalize_test_plan",
        "qa_plan",
    ] {
        assert!(names.contains(&tool), "{tool} in {names:?}");
    }

    let (ok, home) = call(&server, "open_url", json!({"url": site.url()})).await;
    assert!(ok, "{home}");
    assert_eq!(home["pageId"], "home");
    assert_eq!(home["title"], "Acme Notes");
    let screenshot = home["screenshot"].as_str().expect("screenshot path");
    assert!(
        std::fs::read(screenshot).is_ok_and(|jpeg| jpeg.starts_with(&[0xFF, 0xD8, 0xFF])),
        "{screenshot} is a JPEG"
    );
    assert!(
        home["accessibility"]
            .as_str()
            .is_some_and(|outline| outline.contains("heading \"Your notes, everywhere\"")),
        "{home}"
    );
    assert!(
        !chromium_under(tmp.path()).is_empty(),
        "the browser runs while the session lives"
    );

    let log_in_link = element_id(&home, "link", "Log in");
    let (ok, login) = call(&server, "click", json!({"element": log_in_link})).await;
    assert!(ok, "{login}");
    assert_eq!(login["pageId"], "login");
    assert_eq!(login["depth"], 1);

    let password = element_id(&login, "input", "Password");
    let (ok, filled) = call(
        &server,
        "fill",
        json!({"element": password, "value": "{{APP_PASSWORD}}"}),
    )
    .await;
    assert!(ok, "{filled}");
    assert_eq!(
        filled["value"], "{{APP_PASSWORD}}",
        "the value is never echoed"
    );
    let (ok, typed) = call(&server, "observe_current_page", json!({})).await;
    assert!(ok, "{typed}");
    let outline = typed["accessibility"].as_str().expect("outline");
    assert!(
        outline.contains(&format!("Password: {} characters", PASSWORD.len())),
        "the page saw the password typed, not the placeholder:\n{outline}"
    );

    let (ok, outside) = call(&server, "navigate", json!({"url": "https://example.com/"})).await;
    assert!(!ok, "an address off the app's origin is refused: {outside}");
    assert_eq!(outside["error"], "out_of_scope");
    let (_, missing) = call(&server, "get_page", json!({"pageId": "nope"})).await;
    assert_eq!(
        missing,
        json!({"ok": false, "error": "Page not found: nope"})
    );
    let (ok, known) = call(&server, "list_known_pages", json!({})).await;
    assert!(ok);
    let ids: Vec<&str> = known["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|page| page["id"].as_str())
        .collect();
    assert_eq!(ids, ["home", "login"]);
    let (ok, context) = call(
        &server,
        "propose_test_cases_for_page",
        json!({"pageId": "login", "notes": "sign-in paths"}),
    )
    .await;
    assert!(ok && context["ok"] == true, "{context}");
    assert_eq!(context["notes"], "sign-in paths");

    // The agent writes the password itself into a step: prpd keeps only its placeholder.
    let (ok, finished) = call(
        &server,
        "finalize_test_plan",
        json!({
            "flows": [{"id": "sign-in", "name": "Sign in", "pagePath": ["home", "login"]}],
            "cases": [
                {"id": "login-ok", "name": "A member logs in", "type": "form", "priority": "p0",
                 "relatedPageIds": ["login"],
                 "preconditions": ["An account {{APP_USER}} / {{APP_PASSWORD}}"],
                 "steps": [{"description": format!("Type the password {PASSWORD}"), "expectedResult": "The notes open"}]},
                {"id": "login-short", "name": "A short password is refused", "type": "boundary",
                 "priority": "p1", "relatedPageIds": ["login"],
                 "steps": [{"description": "Type a 7-character password", "expectedResult": "The form says at least 8"}]}
            ]
        }),
    )
    .await;
    assert!(ok, "{finished}");
    let run_dir = Path::new(finished["runDir"].as_str().expect("runDir")).to_path_buf();
    assert!(
        run_dir.starts_with(repo.path().join(".prp-session/runs")),
        "{}",
        run_dir.display()
    );
    let spec = std::fs::read_to_string(run_dir.join("plan/specs/form-p0-a-member-logs-in.md"))
        .expect("the first case's spec");
    assert!(
        spec.contains("Type the password {{APP_PASSWORD}}"),
        "{spec}"
    );
    assert!(
        spec.contains("An account {{APP_USER}} / {{APP_PASSWORD}}"),
        "{spec}"
    );
    let summary = &finished["summary"];
    assert_eq!(summary["planner"], "agent");
    assert_eq!(summary["pages"], 2);
    assert_eq!(summary["typeCoverage"]["boundary"], 1);
    assert_eq!(summary["guardrails"]["maxSnapshotsPerRun"]["limit"], 20);
    let plan: Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("plan/test-plan.json")).expect("test-plan.json"),
    )
    .expect("json");
    assert_eq!(
        plan["configSnapshot"]["auth"]["passwordVar"],
        "APP_PASSWORD"
    );
    let graph: Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("plan-explore/graph.json")).expect("graph.json"),
    )
    .expect("json");
    assert!(
        graph["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .any(|edge| edge["from"] == "home" && edge["to"] == "login" && edge["via"] == "action"),
        "{graph}"
    );

    assert_eq!(stop(server).await, 0);
    assert!(
        wait_until(Duration::from_secs(10), || chromium_under(tmp.path())
            .is_empty()),
        "Chromium outlived prpd mcp: {:?}",
        chromium_under(tmp.path())
    );
    for (path, bytes) in files_under(&repo.path().join(".prp-session")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(PASSWORD),
            "the password is in {}",
            path.display()
        );
    }
    drop(site);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
async fn a_guardrail_ends_the_planning_session_and_prpd_mcp_exits_1() {
    let site = ExampleSite::serve();
    let repo = TestRepo::new();
    repo.file("prpd.toml", "[plan]\nmax_agent_turns = 2\n")
        .commit("config");
    let tmp = tempfile::tempdir().expect("tempdir");
    let server = start(repo.path(), tmp.path()).await;
    let (ok, _) = call(&server, "open_url", json!({"url": site.url()})).await;
    assert!(ok);
    let (ok, _) = call(&server, "list_known_pages", json!({})).await;
    assert!(ok);
    let (ok, refused) = call(&server, "observe_current_page", json!({})).await;
    assert!(!ok, "the third turn is past the limit");
    assert_eq!(refused["error"], "guardrail");
    assert_eq!(refused["guardrail"], "maxAgentTurnsPerRun");
    assert_eq!(
        (refused["limit"].as_u64(), refused["count"].as_u64()),
        (Some(2), Some(3))
    );
    let (ok, again) = call(&server, "list_known_pages", json!({})).await;
    assert!(
        !ok && again["guardrail"] == "maxAgentTurnsPerRun",
        "{again}"
    );
    let (ok, finalised) = call(
        &server,
        "finalize_test_plan",
        json!({"cases": [{"id": "x", "name": "x"}]}),
    )
    .await;
    assert!(!ok && finalised["error"] == "guardrail", "{finalised}");
    assert!(
        wait_until(Duration::from_secs(10), || chromium_under(tmp.path())
            .is_empty()),
        "the browser is closed when the session stops"
    );
    assert_eq!(
        stop(server).await,
        1,
        "prpd mcp exits 1 after a guardrail hit"
    );
    let summaries: Vec<_> = files_under(&repo.path().join(".prp-session/runs"))
        .into_iter()
        .filter(|(path, _)| path.ends_with("plan/plan-summary.json"))
        .collect();
    let [(_, summary)] = summaries.as_slice() else {
        panic!("one summary: {summaries:?}");
    };
    let summary: Value = serde_json::from_slice(summary).expect("json");
    assert_eq!(summary["truncatedBy"]["guardrail"], "maxAgentTurnsPerRun");
    assert_eq!(summary["testPlan"], Value::Null);
    drop(site);
}
