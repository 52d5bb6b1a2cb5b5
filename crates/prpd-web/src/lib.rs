//! Test plans from a running web app: explore the app with a real browser ([`browser`], a
//! headless Chromium over the DevTools protocol) within a budget, and turn what was seen into a
//! `TestPlan` and one Markdown spec per case — what RED of a web project needs to know beyond the
//! PRP's words. `[plan]` of prpd.toml is read here ([`config`]).
//!
//! Theory of operation.
//!
//! 1. An [`Exploration`] (`exploration.rs`) holds the browser, the graph (`graph.rs`: the seed's
//!    `ExplorationGraph`), the guardrail counters (`budget.rs`) and the files of
//!    `runs/<id>/plan-explore/`. Addresses are judged by `scope.rs` (same origin,
//!    include/exclude patterns).
//! 2. With no agent, `walk.rs` explores breadth first within `max_depth` and `max_pages`,
//!    loading pages in a few tabs of the one browser at once (`tab_pool.rs`, each page read as
//!    `page_read.rs` says) and recording them in the order of one tab; with an agent, the planner tools of `prpd mcp` (the binary's `src/mcp_server/planner_tools.rs`) drive the
//!    same exploration one call at a time.
//! 3. The plan is either prpd's deterministic `baseline.rs` or the cases the agent finalised
//!    (read with the rules of `test_plan::normalise`); either way it is written with
//!    `test_plan::write_plan` under `runs/<id>/plan/` and summarised in `plan-summary.json`
//!    (`summary.rs`).
//! 4. A guardrail hit ends the phase it happened in; the summary records it and the command
//!    exits 1 naming it. The browser is closed on every path ([`Exploration::close`], or its
//!    process group killed when the exploration is dropped).
//! 5. In the loop, `in_run.rs` picks the specs of the pages a PRP names for RED's prompt and
//!    lists which cases have tests for the QA report.

mod agent_prompt;
mod baseline;
pub mod browser;
mod budget;
pub mod config;
mod exploration;
mod graph;
pub mod in_run;
mod login;
mod page_read;
mod planner;
mod scope;
mod serve;
mod summary;
mod tab_pool;
mod walk;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::PlanSection;
use prpd_base::files;
use prpd_protocols::test_plan::{
    self, CaseType, PlanAuth, PlanConfig, PlanError, PlanGuardrails, TestPlan, WriteError,
};

pub use agent_prompt::planner_prompt;
pub use baseline::baseline;
pub use budget::{Budget, GuardrailHit, estimate_tokens};
pub use exploration::{Arrival, EXPLORE_DIR, Exploration, ExploreError};
pub use graph::{ElementSummary, ExplorationGraph, PageNode};
pub use planner::PlannerSession;
pub use serve::{ServeError, serve};
pub use summary::{PlanSummary, SUMMARY_FILE, summarise};
pub use walk::{WalkOutcome, walk};

/// The variable that tells a `prpd mcp` (started by the planner agent of `prpd plan --agent`)
/// which run's exploration its planner tools continue.
pub const PLAN_RUN_VARIABLE: &str = "PRPD_PLAN_RUN";

/// A planning run failed.
#[derive(Debug, thiserror::Error)]
pub enum PlanRunError {
    #[error(transparent)]
    Explore(#[from] ExploreError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// What a planning run wrote.
#[derive(Debug, Clone)]
pub struct Planned {
    pub summary: PlanSummary,
    /// The run directory.
    pub run_dir: PathBuf,
    /// What was explored.
    pub graph: ExplorationGraph,
    /// The plan; `None` when a guardrail stopped the run first.
    pub plan: Option<TestPlan>,
}

impl Planned {
    /// The guardrail that cut the run short.
    pub fn guardrail(&self) -> Option<&GuardrailHit> {
        self.summary.truncated_by.as_ref()
    }
}

/// `prpd plan explore`: walks the app (in up to `tabs` tabs at once) and leaves
/// `plan-explore/`; the browser is closed whatever happens.
pub async fn explore_app(
    run_dir: &Path,
    run_id: &str,
    config: PlanConfig,
    tabs: NonZeroUsize,
) -> Result<(Exploration, WalkOutcome), ExploreError> {
    let mut exploration = Exploration::new(run_dir, run_id, config)?;
    let walked = match login::sign_in(&mut exploration).await {
        Ok(_) => walk(&mut exploration, tabs).await,
        Err(error) => Err(error),
    };
    exploration.close().await;
    Ok((exploration, walked?))
}

/// `prpd plan`: walks the app, then writes the baseline plan, its specs and the summary. A
/// guardrail hit during the walk leaves the graph and a summary without a plan.
pub async fn plan_app(
    run_dir: &Path,
    run_id: &str,
    config: PlanConfig,
    tabs: NonZeroUsize,
) -> Result<Planned, PlanRunError> {
    let (exploration, outcome) = explore_app(run_dir, run_id, config, tabs).await?;
    if outcome.guardrail.is_some() {
        return finish(&exploration, None, &outcome, "baseline", run_dir);
    }
    let plan = baseline(&exploration.graph, &exploration.config, run_id, &now());
    finish(&exploration, Some(&plan), &outcome, "baseline", run_dir)
}

/// The agent's plan (`finalize_test_plan`'s input: `{flows?, cases}` in the seed's shape),
/// normalised with the seed's rules and written as [`plan_app`] writes prpd's own.
pub fn finish_agent_plan(
    exploration: &Exploration,
    input: &Map<String, Value>,
    run_dir: &Path,
) -> Result<(Planned, Vec<String>), PlanRunError> {
    let normalised = test_plan::normalise(input)?;
    let warnings = normalised.warnings.clone();
    let mut plan = normalised.into_plan(&exploration.run_id, &now());
    plan.config_snapshot = Some(exploration.config.clone());
    let planned = finish(
        exploration,
        Some(&plan),
        &WalkOutcome::default(),
        "agent",
        run_dir,
    )?;
    Ok((planned, warnings))
}

/// Writes the plan (when there is one) and the summary of `exploration` under `run_dir`.
pub fn finish(
    exploration: &Exploration,
    plan: Option<&TestPlan>,
    outcome: &WalkOutcome,
    planner: &str,
    run_dir: &Path,
) -> Result<Planned, PlanRunError> {
    let plan_dir = run_dir.join(test_plan::PLAN_DIR);
    let plan = plan.map(|plan| redacted(exploration, plan));
    let specs = match &plan {
        Some(plan) => test_plan::write_plan(&plan_dir, plan)?
            .specs
            .iter()
            .filter_map(|spec| spec.strip_prefix(run_dir).ok())
            .map(|spec| spec.display().to_string())
            .collect(),
        None => Vec::new(),
    };
    let summary = summarise(exploration, plan.as_ref(), outcome, planner, specs);
    let path = plan_dir.join(SUMMARY_FILE);
    std::fs::create_dir_all(&plan_dir)
        .and_then(|()| {
            files::write_atomically(
                &path,
                serde_json::to_string_pretty(&summary)
                    .unwrap_or_default()
                    .as_bytes(),
            )
        })
        .map_err(|source| ExploreError::Io { path, source })?;
    Ok(Planned {
        summary,
        run_dir: run_dir.to_path_buf(),
        graph: exploration.graph.clone(),
        plan,
    })
}

/// `plan` with every credential value in its words replaced by its placeholder: case and flow
/// names, preconditions and steps are made from what the pages showed (a title, a link's
/// text), and a page may show who is signed in.
fn redacted(exploration: &Exploration, plan: &TestPlan) -> TestPlan {
    let mut plan = plan.clone();
    let redact_option = |text: &mut Option<String>| {
        if let Some(text) = text {
            *text = exploration.redact(text);
        }
    };
    for flow in &mut plan.flows {
        flow.name = exploration.redact(&flow.name);
        redact_option(&mut flow.description);
    }
    for case in &mut plan.cases {
        case.name = exploration.redact(&case.name);
        for precondition in &mut case.preconditions {
            *precondition = exploration.redact(precondition);
        }
        for step in &mut case.steps {
            step.description = exploration.redact(&step.description);
            redact_option(&mut step.expected_result);
        }
    }
    plan
}

/// The seed's `PlanConfig` of `[plan]`, exploring from `base_url`.
pub fn plan_config(section: &PlanSection, base_url: &str) -> PlanConfig {
    PlanConfig {
        base_url: base_url.to_owned(),
        max_depth: section.max_depth,
        max_pages: section.max_pages,
        include_patterns: section.include_patterns.clone(),
        exclude_patterns: section.exclude_patterns.clone(),
        test_types: section
            .test_types
            .iter()
            .filter_map(|name| serde_json::from_value::<CaseType>(Value::String(name.clone())).ok())
            .collect(),
        guardrails: PlanGuardrails {
            max_agent_turns_per_run: section.max_agent_turns,
            max_snapshots_per_run: section.max_snapshots,
            max_token_per_run: section.max_tokens,
        },
        auth: section.auth.as_ref().map(|auth| PlanAuth {
            login_url: auth.login_url.clone(),
            username_var: auth.username_var.clone(),
            password_var: auth.password_var.clone(),
            extra: None,
        }),
    }
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
