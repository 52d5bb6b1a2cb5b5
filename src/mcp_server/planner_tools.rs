//! The planner tools `prpd mcp` offers (seed `001_…`): names, descriptions and input schemas,
//! written out by hand so that they say exactly what `web_plan::PlannerSession` accepts.

use rmcp::model::Tool;
use serde_json::{Value, json};

use super::tools::schema;

pub const OPEN_URL: &str = "open_url";
pub const OBSERVE_CURRENT_PAGE: &str = "observe_current_page";
pub const LIST_KNOWN_PAGES: &str = "list_known_pages";
pub const GET_PAGE: &str = "get_page";
pub const NAVIGATE: &str = "navigate";
pub const CLICK: &str = "click";
pub const FILL: &str = "fill";
pub const SCROLL: &str = "scroll";
pub const WAIT: &str = "wait";
pub const PROPOSE_TEST_CASES_FOR_PAGE: &str = "propose_test_cases_for_page";
pub const FINALIZE_TEST_PLAN: &str = "finalize_test_plan";

/// Every planner tool's name.
pub const NAMES: [&str; 11] = [
    OPEN_URL,
    OBSERVE_CURRENT_PAGE,
    LIST_KNOWN_PAGES,
    GET_PAGE,
    NAVIGATE,
    CLICK,
    FILL,
    SCROLL,
    WAIT,
    PROPOSE_TEST_CASES_FOR_PAGE,
    FINALIZE_TEST_PLAN,
];

const PAGE_VIEW: &str = "Returns the page as prpd recorded it: {ok, pageId, url, title, status, \
depth, snapshotRef, screenshot (the JPEG's path, 1024 px wide), elementCounts, elements [{id, \
kind, text, locator, target, field}] (the first 60), accessibility (the accessibility tree as an \
outline)}. Each call that reads a page is a snapshot (guardrail maxSnapshotsPerRun); each tool \
call is a turn (maxAgentTurnsPerRun); results count towards maxTokenPerRun.";

/// Every planner tool, for `tools/list`.
pub fn all() -> Vec<Tool> {
    let element_target = json!({
        "element": {"type": "string", "description": "An element id from a page view (e.g. login/e3); the element must be on the current page."},
        "selector": {"type": "string", "description": "A CSS selector, instead of element."}
    });
    let with_target = |mut extra: Value, required: &[&str]| {
        let mut properties = element_target.clone();
        if let (Some(properties), Some(extra)) = (properties.as_object_mut(), extra.as_object_mut())
        {
            properties.append(extra);
        }
        json!({"type": "object", "properties": properties, "required": required})
    };
    let url = json!({"type": "object", "properties": {"url": {"type": "string", "description": "An address on the app's origin (absolute, or relative to the base URL)."}}, "required": ["url"]});
    let page_id = |notes: bool| {
        let mut properties = json!({"pageId": {"type": "string", "description": "A page id from list_known_pages."}});
        if notes {
            properties["notes"] = json!({"type": "string", "description": "Optional notes on what to test; echoed back."});
        }
        json!({"type": "object", "properties": properties, "required": ["pageId"]})
    };
    let nothing = json!({"type": "object", "properties": {}});
    vec![
        tool(
            OPEN_URL,
            &format!(
                "Open an address of the app (the first call's origin is the app's, unless [plan] base_url says otherwise) and record the page. {PAGE_VIEW}"
            ),
            url.clone(),
        ),
        tool(
            OBSERVE_CURRENT_PAGE,
            &format!(
                "Snapshot the page the browser shows now (after actions) and record it. {PAGE_VIEW}"
            ),
            nothing.clone(),
        ),
        tool(
            LIST_KNOWN_PAGES,
            "List the pages recorded so far: {pages [{id, url, title, depth, snapshotRef}]}.",
            nothing,
        ),
        tool(
            GET_PAGE,
            "A recorded page's details: {ok, page} or {ok: false, error: \"Page not found: <id>\"}.",
            page_id(false),
        ),
        tool(
            NAVIGATE,
            &format!(
                "Go to an address from the current page (recorded as an edge of the graph). {PAGE_VIEW}"
            ),
            url,
        ),
        tool(
            CLICK,
            &format!(
                "Click an element; if a new page loads, it is recorded with an edge from the current page. {PAGE_VIEW}"
            ),
            with_target(json!({}), &[]),
        ),
        tool(
            FILL,
            "Type a value into a field (replacing its content). Credentials must be placeholders such as {{USERNAME}} or {{PASSWORD}} (the names [plan.auth] gives): prpd types the value of that environment variable and never shows, logs or writes it. Returns {ok, selector, value (as given)}.",
            with_target(json!({"value": {"type": "string"}}), &["value"]),
        ),
        tool(
            SCROLL,
            "Scroll the page by pixels (negative: up; default 600). Returns {ok, scrolledBy}.",
            json!({"type": "object", "properties": {"pixels": {"type": "integer"}}}),
        ),
        tool(
            WAIT,
            "Wait up to ms milliseconds (at most 10000, default 1000), or until text appears on the page. Returns {ok, waitedMs, found}.",
            json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}, "text": {"type": "string"}}}),
        ),
        tool(
            PROPOSE_TEST_CASES_FOR_PAGE,
            "Page context for designing test cases: {ok, page, notes, caseTypes (the types asked for; empty: all)}. Design the cases yourself, then call finalize_test_plan.",
            page_id(true),
        ),
        tool(
            FINALIZE_TEST_PLAN,
            "Finish: give the whole TestPlan {flows?, cases}. Each case {id, name, type (functional|form|navigation|responsive|boundary|security), priority (p0|p1|p2), relatedPageIds, markdownPath?, preconditions?, steps [{description, expectedResult?}]}; write credentials as placeholders. prpd normalises it (defaults are warnings), writes plan/test-plan.json, one Markdown spec per case under plan/specs/ and plan/plan-summary.json, and returns {ok, runDir, testPlan, specs, summary, warnings}.",
            finalize_schema(),
        ),
    ]
}

fn tool(name: &'static str, description: &str, input: Value) -> Tool {
    Tool::new(name, description.to_owned(), schema(input))
}

fn finalize_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "flows": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "name": {"type": "string"}, "description": {"type": "string"},
                "pagePath": {"type": "array", "items": {"type": "string"}}
            }, "required": ["id", "name"]}},
            "cases": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "name": {"type": "string"},
                "type": {"type": "string", "enum": ["functional", "form", "navigation", "responsive", "boundary", "security"]},
                "priority": {"type": "string", "enum": ["p0", "p1", "p2"]},
                "relatedPageIds": {"type": "array", "items": {"type": "string"}},
                "markdownPath": {"type": "string"},
                "preconditions": {"type": "array", "items": {"type": "string"}},
                "steps": {"type": "array", "items": {"type": "object", "properties": {
                    "description": {"type": "string"}, "expectedResult": {"type": "string"}
                }, "required": ["description"]}}
            }, "required": ["id", "name", "type", "priority"]}}
        },
        "required": ["cases"]
    })
}
