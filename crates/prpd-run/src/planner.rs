//! `prpd plan --agent`: the plan of a running web app proposed by an agent. After prpd's own
//! walk, the RED agent of prpd.toml (the one that writes tests) runs once with the planner
//! prompt (`web_plan::planner_prompt`) in `<run>/plan-agent/`; with `PRPD_PLAN_RUN` in its
//! environment, a `prpd mcp` it starts continues the same exploration with the planner tools.
//! Its plan is the one it handed to `finalize_test_plan`, else the `TestPlan` its answer ends
//! with; either is written like prpd's own. What prpd sends and what the agent answers (or the
//! usage it reports, when larger) count towards `max_tokens`.

use std::path::Path;
use std::time::SystemTime;

use crate::agent::{self, AgentError, Commands, Invocation};
use crate::config::Config;
use prpd_base::phase::Phase;
use prpd_protocols::test_plan::{self, PLAN_DIR, PLAN_FILE, TestPlan};
use prpd_web::{
    self as web_plan, Exploration, PLAN_RUN_VARIABLE, PlanRunError, Planned, WalkOutcome,
};

/// The agent's folder in the run directory.
pub const AGENT_DIR: &str = "plan-agent";

/// The agent gave no plan prpd could use.
#[derive(Debug, thiserror::Error)]
pub enum PlannerError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Plan(#[from] PlanRunError),
    #[error(
        "the planner agent gave no TestPlan: it did not call finalize_test_plan and its answer ends with no JSON plan ({note}); its output is in {}",
        log.display()
    )]
    NoPlan {
        note: String,
        log: std::path::PathBuf,
    },
    #[error("the planner agent's TestPlan was refused: {message}; its output is in {}", log.display())]
    Refused {
        message: String,
        log: std::path::PathBuf,
    },
}

/// Runs the planner agent on `exploration` (explored, its browser closed) and writes its plan.
pub async fn plan_with_agent(
    repo: &Path,
    config: &Config,
    run_dir: &Path,
    mut exploration: Exploration,
) -> Result<Planned, PlannerError> {
    let limits = WalkOutcome::default();
    // A guardrail hit leaves the summary that names it, and no plan.
    let truncated = |exploration: &Exploration| -> Result<Planned, PlannerError> {
        Ok(web_plan::finish(
            exploration,
            None,
            &limits,
            "agent",
            run_dir,
        )?)
    };
    let prompt = web_plan::planner_prompt(&exploration.graph, &exploration.config);
    if exploration.budget.spend_tokens(&prompt).is_err() {
        return truncated(&exploration);
    }
    let agent_dir = run_dir.join(AGENT_DIR);
    let started = SystemTime::now();
    let exe = std::env::current_exe()
        .map_or_else(|_| "prpd".to_owned(), |path| path.display().to_string());
    let extra_env = [
        (PLAN_RUN_VARIABLE.to_owned(), run_dir.display().to_string()),
        ("PRPD_EXE".to_owned(), exe),
    ];
    let report = agent::invoke(&Invocation {
        budget: None,
        phase: Phase::Red,
        iteration: 1,
        attempt: 1,
        run_id: &exploration.run_id.clone(),
        run_dir,
        repo,
        prp_path: Path::new(""),
        feedback_path: &agent_dir.join("feedback.md"),
        prompt: &prompt,
        config: config.agents.for_phase(Phase::Red),
        iteration_dir: &agent_dir,
        extra_env: &extra_env,
        group_file: None,
        commands: &Commands::default(),
    })
    .await?;
    exploration.reload_graph();
    let reported = report.usage.map_or(0, |usage| usage.billed_tokens());
    let answered = web_plan::estimate_tokens(&report.answer);
    if exploration.budget.spend(reported.max(answered)).is_err() {
        return truncated(&exploration);
    }
    let plan = match finalised_since(run_dir, started) {
        Some(plan) => plan,
        None => match test_plan::read_answer(&exploration.redact(&report.answer)) {
            Ok(Some(normalised)) => {
                let mut plan = normalised.into_plan(&exploration.run_id, &now());
                plan.config_snapshot = Some(exploration.config.clone());
                plan
            }
            Ok(None) => {
                return Err(PlannerError::NoPlan {
                    note: report.note,
                    log: report.log_path,
                });
            }
            Err(error) => {
                return Err(PlannerError::Refused {
                    message: error.to_string(),
                    log: report.log_path,
                });
            }
        },
    };
    Ok(web_plan::finish(
        &exploration,
        Some(&plan),
        &limits,
        "agent",
        run_dir,
    )?)
}

/// The plan a `prpd mcp` wrote for this run (`finalize_test_plan`) after `since`.
fn finalised_since(run_dir: &Path, since: SystemTime) -> Option<TestPlan> {
    let path = run_dir.join(PLAN_DIR).join(PLAN_FILE);
    let modified = std::fs::metadata(&path)
        .and_then(|meta| meta.modified())
        .ok()?;
    if modified < since {
        return None;
    }
    serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()
}

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
