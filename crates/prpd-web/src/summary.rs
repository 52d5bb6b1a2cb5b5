//! `plan/plan-summary.json` (seed `001_…`, Phase 3): what a planning run produced and how it
//! ended — pages, cases, the test types covered, the limits reached, the guardrails with their
//! counts and the one that cut the run short, and where the files are.

use std::collections::BTreeMap;

use serde::Serialize;

use prpd_protocols::test_plan::{CaseType, PlanGuardrails, TestPlan};

use super::budget::GuardrailHit;
use super::exploration::Exploration;
use super::walk::WalkOutcome;

/// The summary file's name, in the plan directory.
pub const SUMMARY_FILE: &str = "plan-summary.json";

/// A planning run's summary.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanSummary {
    pub run_id: String,
    pub base_url: String,
    pub generated_at: String,
    /// `baseline` (prpd's own plan), `agent` (the planner agent's or an MCP client's), or
    /// `none` (`prpd plan explore`: no plan was asked for).
    pub planner: String,
    pub pages: usize,
    pub edges: usize,
    pub skipped_links: usize,
    pub cases: usize,
    /// Cases per test type, every type listed (0 when none).
    pub type_coverage: BTreeMap<String, usize>,
    #[serde(flatten)]
    pub limits: WalkOutcome,
    /// Each guardrail's count and limit (`null`: no limit).
    pub guardrails: BTreeMap<String, GuardrailCount>,
    /// The guardrail that cut the run short.
    pub truncated_by: Option<GuardrailHit>,
    /// Paths relative to the run directory.
    pub graph: String,
    pub test_plan: Option<String>,
    pub specs: Vec<String>,
}

/// One guardrail's state.
#[derive(Debug, Clone, Serialize)]
pub struct GuardrailCount {
    pub count: u64,
    pub limit: Option<u64>,
}

/// The summary of `exploration` and the plan made from it (none when a guardrail stopped the
/// run first).
pub fn summarise(
    exploration: &Exploration,
    plan: Option<&TestPlan>,
    limits: &WalkOutcome,
    planner: &str,
    specs: Vec<String>,
) -> PlanSummary {
    let (graph, budget, config) = (&exploration.graph, &exploration.budget, &exploration.config);
    let mut type_coverage: BTreeMap<String, usize> = CaseType::ALL
        .iter()
        .map(|case_type| (case_type.as_str().to_owned(), 0))
        .collect();
    for case in plan.iter().flat_map(|plan| &plan.cases) {
        *type_coverage
            .entry(case.case_type.as_str().to_owned())
            .or_default() += 1;
    }
    let limit = |pick: fn(&PlanGuardrails) -> Option<u64>| pick(&config.guardrails);
    let guardrails = BTreeMap::from([
        (
            "maxAgentTurnsPerRun".to_owned(),
            GuardrailCount {
                count: budget.agent_turns,
                limit: limit(|limits| limits.max_agent_turns_per_run.map(u64::from)),
            },
        ),
        (
            "maxSnapshotsPerRun".to_owned(),
            GuardrailCount {
                count: budget.snapshots,
                limit: limit(|limits| limits.max_snapshots_per_run.map(u64::from)),
            },
        ),
        (
            "maxTokenPerRun".to_owned(),
            GuardrailCount {
                count: budget.tokens,
                limit: limit(|limits| limits.max_token_per_run),
            },
        ),
    ]);
    PlanSummary {
        run_id: exploration.run_id.clone(),
        base_url: config.base_url.clone(),
        generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        planner: planner.to_owned(),
        pages: graph.pages.len(),
        edges: graph.edges.len(),
        skipped_links: graph.skipped.len(),
        cases: plan.map_or(0, |plan| plan.cases.len()),
        type_coverage,
        limits: limits.clone(),
        guardrails,
        truncated_by: budget.hit.clone().or_else(|| limits.guardrail.clone()),
        graph: "plan-explore/graph.json".to_owned(),
        test_plan: plan.map(|_| "plan/test-plan.json".to_owned()),
        specs,
    }
}
