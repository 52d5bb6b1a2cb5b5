//! `prpd mcp`: serves prpd's protocols to an agent over stdio (`src/mcp_server`). The
//! client starts it (Claude Code: `claude mcp add prpd -- prpd mcp`); stdout belongs to the
//! protocol, so this command prints nothing else.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;

use super::UsageError;
use crate::mcp_server::{self, PrpdServer};
use prpd_base::exit::ExitCode;
use prpd_protocols::critical_points::StoreSettings;
use prpd_web::config::PlanSection;
use prpd_web::{PLAN_RUN_VARIABLE, PlannerSession};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The project root: plans are persisted under it when `QA_PLAN_PERSIST=true` and
    /// `QA_PROJECT_ROOT` is not set; its `prpd.toml`'s `[plan]` configures the planner tools,
    /// whose files go under its `.prp-session/runs/` (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub fn run(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let file = super::config::read(&root, None)?;
    let section = match &file {
        Some(file) => PlanSection::from_file(file)?.unwrap_or_default(),
        None => PlanSection::default(),
    };
    let planner = match std::env::var_os(PLAN_RUN_VARIABLE).filter(|dir| !dir.is_empty()) {
        Some(run_dir) => PlannerSession::attach(&root, section, Path::new(&run_dir))
            .map_err(|error| UsageError(format!("{PLAN_RUN_VARIABLE}: {error}")))?,
        None => PlannerSession::new(&root, section),
    };
    let server = PrpdServer::new(StoreSettings::from_env(&root), planner);
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    let ended = runtime.block_on(mcp_server::serve_stdio(server))?;
    if let Some(hit) = ended.planner_stopped_by {
        eprintln!("prpd mcp: the planning session stopped early: {hit}");
        return Ok(ExitCode::NotShipped);
    }
    Ok(ExitCode::Success)
}
