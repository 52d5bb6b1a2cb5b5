//! The `TestPlan` as seed `001_…` defines it (`TestPlan`, `FlowPlan`, `TestCasePlan`,
//! `PlanConfig`), as serde types whose JSON names are the seed's (camelCase: `relatedPageIds`,
//! `markdownPath`, `expectedResult`, `runId`, `generatedAt`, `configSnapshot`), so that
//! `plan/test-plan.json` reads as the seed's tools expect and a plan built another way (from a
//! running web app, issue 15) is the same value. These types hold a plan that is already
//! normalised (`normalise.rs` builds them from what an agent wrote); they carry no rule of
//! their own beyond the names of the test types and priorities.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// A whole test plan: the seed's `TestPlan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestPlan {
    /// The run the plan belongs to.
    pub run_id: String,
    /// When prpd accepted the plan, RFC 3339 (`2025-01-15T10:30:00Z`).
    pub generated_at: String,
    /// The configuration the plan was built with, when one was (a plan from a running web
    /// app); a RED agent's plan has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_snapshot: Option<PlanConfig>,
    /// Groups of related cases, in the agent's order.
    #[serde(default)]
    pub flows: Vec<FlowPlan>,
    /// The cases, in the agent's order; never empty once normalised.
    pub cases: Vec<TestCasePlan>,
}

/// A group of related cases: the seed's `FlowPlan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlowPlan {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The pages (or modules) the flow goes through, in order.
    #[serde(default)]
    pub page_path: Vec<String>,
}

/// One test case: the seed's `TestCasePlan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestCasePlan {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub case_type: CaseType,
    pub priority: Priority,
    /// The pages (or modules) the case touches.
    #[serde(default)]
    pub related_page_ids: Vec<String>,
    /// Where the case's Markdown spec goes, relative to `plan/specs/`; always a safe relative
    /// path once normalised.
    pub markdown_path: String,
    #[serde(default)]
    pub preconditions: Vec<String>,
    #[serde(default)]
    pub steps: Vec<StepPlan>,
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepPlan {
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_result: Option<String>,
}

/// The six kinds of test the seed names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseType {
    Functional,
    Form,
    Navigation,
    Responsive,
    Boundary,
    Security,
}

impl CaseType {
    /// Every type, in the seed's order.
    pub const ALL: [CaseType; 6] = [
        CaseType::Functional,
        CaseType::Form,
        CaseType::Navigation,
        CaseType::Responsive,
        CaseType::Boundary,
        CaseType::Security,
    ];

    /// The type's JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseType::Functional => "functional",
            CaseType::Form => "form",
            CaseType::Navigation => "navigation",
            CaseType::Responsive => "responsive",
            CaseType::Boundary => "boundary",
            CaseType::Security => "security",
        }
    }
}

impl fmt::Display for CaseType {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// How urgent a case is: `p0` the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    P0,
    P1,
    P2,
}

impl Priority {
    /// Every priority, most urgent first.
    pub const ALL: [Priority; 3] = [Priority::P0, Priority::P1, Priority::P2];

    /// The priority's JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::P0 => "p0",
            Priority::P1 => "p1",
            Priority::P2 => "p2",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The settings a plan built by exploring a running web app was made with: the seed's
/// `PlanConfig`, kept in [`TestPlan::config_snapshot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanConfig {
    pub base_url: String,
    /// The deepest link level explored.
    pub max_depth: u32,
    /// The most pages explored.
    pub max_pages: u32,
    #[serde(default)]
    pub include_patterns: Vec<String>,
    #[serde(default)]
    pub exclude_patterns: Vec<String>,
    /// The kinds of test asked for.
    #[serde(default)]
    pub test_types: Vec<CaseType>,
    #[serde(default)]
    pub guardrails: PlanGuardrails,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<PlanAuth>,
}

/// The limits of one planning run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanGuardrails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_agent_turns_per_run: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snapshots_per_run: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_token_per_run: Option<u64>,
}

/// How a planning run logs in: the *names* of the variables that hold the credentials, never
/// the credentials themselves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_var: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_var: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Json>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_names_are_the_seeds() {
        let plan = TestPlan {
            run_id: "r1".to_owned(),
            generated_at: "2025-01-15T10:30:00Z".to_owned(),
            config_snapshot: Some(PlanConfig {
                base_url: "https://example.test".to_owned(),
                max_depth: 2,
                max_pages: 10,
                include_patterns: vec![],
                exclude_patterns: vec!["/logout".to_owned()],
                test_types: vec![CaseType::Form],
                guardrails: PlanGuardrails {
                    max_agent_turns_per_run: Some(20),
                    ..PlanGuardrails::default()
                },
                auth: Some(PlanAuth {
                    password_var: Some("PASSWORD".to_owned()),
                    ..PlanAuth::default()
                }),
            }),
            flows: vec![FlowPlan {
                id: "f".to_owned(),
                name: "Flow".to_owned(),
                description: None,
                page_path: vec!["login".to_owned()],
            }],
            cases: vec![TestCasePlan {
                id: "c".to_owned(),
                name: "Case".to_owned(),
                case_type: CaseType::Security,
                priority: Priority::P0,
                related_page_ids: vec!["login".to_owned()],
                markdown_path: "security-p0-case.md".to_owned(),
                preconditions: vec![],
                steps: vec![StepPlan {
                    description: "Open".to_owned(),
                    expected_result: Some("Shown".to_owned()),
                }],
            }],
        };
        let json = serde_json::to_value(&plan).expect("serialises");
        for key in ["runId", "generatedAt", "configSnapshot", "flows", "cases"] {
            assert!(json.get(key).is_some(), "{key} in {json}");
        }
        let config = &json["configSnapshot"];
        for key in [
            "baseUrl",
            "maxDepth",
            "maxPages",
            "includePatterns",
            "excludePatterns",
            "testTypes",
        ] {
            assert!(config.get(key).is_some(), "{key} in {config}");
        }
        assert_eq!(config["guardrails"]["maxAgentTurnsPerRun"], 20);
        assert_eq!(config["auth"]["passwordVar"], "PASSWORD");
        assert_eq!(json["flows"][0]["pagePath"][0], "login");
        let case = &json["cases"][0];
        assert_eq!(case["type"], "security");
        assert_eq!(case["priority"], "p0");
        assert_eq!(case["relatedPageIds"][0], "login");
        assert_eq!(case["markdownPath"], "security-p0-case.md");
        assert_eq!(case["steps"][0]["expectedResult"], "Shown");
        let back: TestPlan = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, plan);
    }

    #[test]
    fn a_plan_without_a_configuration_leaves_the_key_out() {
        let plan = TestPlan {
            run_id: "r1".to_owned(),
            generated_at: "now".to_owned(),
            config_snapshot: None,
            flows: vec![],
            cases: vec![],
        };
        let json = serde_json::to_value(&plan).expect("serialises");
        assert!(json.get("configSnapshot").is_none(), "{json}");
    }
}
