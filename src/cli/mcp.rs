//! `prpd mcp`: serves prpd's protocols to an agent over stdio (`protocols/mcp_server`). The
//! client starts it (Claude Code: `claude mcp add prpd -- prpd mcp`); stdout belongs to the
//! protocol, so this command prints nothing else.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use crate::base::exit::ExitCode;
use crate::protocols::critical_points::StoreSettings;
use crate::protocols::mcp_server::{self, PrpdServer};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The project root plans are persisted under when `QA_PLAN_PERSIST=true` and
    /// `QA_PROJECT_ROOT` is not set (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub fn run(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let server = PrpdServer::new(StoreSettings::from_env(&root));
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(mcp_server::serve_stdio(server))?;
    Ok(ExitCode::Success)
}
