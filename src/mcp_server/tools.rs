//! The critical-points tools `prpd mcp` offers, as an MCP client lists them: names,
//! descriptions and input schemas, written out by hand so that they say exactly what the store
//! accepts. The planner tools are in `planner_tools.rs`.

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Value, json};

pub const QA_PLAN: &str = "qa_plan";
pub const VERIFY_PLAN: &str = "verify_plan";
pub const NAMES: [&str; 2] = [QA_PLAN, VERIFY_PLAN];

/// What the server tells the client about itself.
pub const INSTRUCTIONS: &str = "prpd judges work against criteria declared before it is done. \
Call qa_plan with the task and its critical points before you act; when done, call verify_plan \
with the plan_id and the evidence (test result rows, scan findings, log lines, screenshot \
paths). Each point passes only when some evidence row contains its verification_hint as a whole \
name and no row containing it reports a failure or a test that did not run (skipped, ignored, \
pending, todo, xfail, not written). To plan tests for a running web app, explore it with \
open_url, click, fill, navigate and observe_current_page (a headless Chromium; every page is \
recorded with a screenshot and its accessibility tree), read list_known_pages and \
propose_test_cases_for_page, then call finalize_test_plan with the cases: prpd writes the plan \
and one Markdown spec per case. Write credentials only as placeholders ({{PASSWORD}}).";

const QA_PLAN_DESCRIPTION: &str = "Store a critical-points checklist for a task before doing \
it; later call verify_plan with evidence to get a pass/fail verdict per point. Plans live 30 \
minutes, at most 50 are kept (least recently used evicted first); with QA_PROJECT_ROOT set (or \
QA_PLAN_PERSIST=true) each plan is also written to <root>/test-results/plans/<plan_id>.json \
and verify_plan reads it back after a restart, unless it has expired. Returns {plan_id (12 hex \
digits), task, kind, critical_points [{id, description, verification_hint}], created_at, \
expires_at, persisted_to}. Errors: no_task, no_critical_points, bad_critical_points (duplicate \
id, missing description, wrong type), bad_kind.";

const VERIFY_PLAN_DESCRIPTION: &str = "Judge evidence against a plan from qa_plan. A point \
passes when at least one evidence row contains its verification_hint as a whole name (case \
and spacing ignored; test_login is not found in test_login_page) and no row containing it \
reports a failure (passed: false, or FAILED / fail / not ok / ERROR / ✗ in its text) or a test \
that did not run (skipped, ignored, pending, todo, xfail, xpass, not written: no support, \
whatever passed says); a point no row mentions fails. Returns {plan_id, task, kind, verdict \
(pass|fail), passed, failed, unverified, points [{id, description, verification_hint, verdict, \
matched, contradicted, reason}]}. Errors: bad_plan_id, unknown_plan, plan_expired, \
bad_evidence.";

/// Every critical-points tool, for `tools/list`.
pub fn all() -> Vec<Tool> {
    vec![
        Tool::new(QA_PLAN, QA_PLAN_DESCRIPTION, schema(qa_plan_schema())),
        Tool::new(
            VERIFY_PLAN,
            VERIFY_PLAN_DESCRIPTION,
            schema(verify_plan_schema()),
        ),
    ]
}

pub(super) fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn qa_plan_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task": {
                "type": "string",
                "description": "Required. The natural-language goal: what the user wants done. Echoed back by verify_plan."
            },
            "critical_points": {
                "type": "array",
                "minItems": 1,
                "description": "Required, non-empty. Each entry is a string (used as description and verification_hint) or an object {id?, description, verification_hint?}. Ids default to CP1..CPn; verification_hint defaults to the description: pick a substring that will literally appear in the evidence.",
                "items": {
                    "anyOf": [
                        {"type": "string"},
                        {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "description": {"type": "string"},
                                "verification_hint": {"type": "string"}
                            },
                            "required": ["description"]
                        }
                    ]
                }
            },
            "kind": {
                "type": "string",
                "enum": ["test", "scan", "log", "screenshot", "mixed"],
                "description": "Optional. Which evidence stream to expect. Omit if unsure."
            }
        },
        "required": ["task", "critical_points"]
    })
}

fn verify_plan_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "plan_id": {
                "type": "string",
                "description": "Required. The 12 hex digits qa_plan returned."
            },
            "evidence": {
                "description": "Required. The rows to judge: a list of strings or objects {text, source?, passed?}, or one string with a row per line.",
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"type": "string"},
                                {
                                    "type": "object",
                                    "properties": {
                                        "text": {"type": "string"},
                                        "source": {"type": "string"},
                                        "passed": {"type": "boolean"}
                                    },
                                    "required": ["text"]
                                }
                            ]
                        }
                    }
                ]
            }
        },
        "required": ["plan_id", "evidence"]
    })
}
