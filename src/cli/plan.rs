//! `prpd plan`: with `-u URL` or `explore`, a test plan from a running web app
//! (`src/cli/web_plan.rs`); `create` / `verify`, the critical-points protocol of `prpd mcp` for
//! scripts. Each command is its own process, so plans always go to disk, under
//! `<root>/test-results/plans/` (the root: `--root`, else `QA_PROJECT_ROOT`, else the
//! repository around the current directory, else the current directory); results are JSON on
//! stdout.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::UsageError;
use super::web_plan::{self, Mode, WebPlanArgs};
use prpd_base::exit::ExitCode;
use prpd_base::repo;
use prpd_protocols::critical_points::store::{self, CAPACITY, TTL};
use prpd_protocols::critical_points::verdict::PlanStatus;
use prpd_protocols::critical_points::{PlanStore, StoreSettings, table};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: Option<PlanCommand>,
    /// With no subcommand: explore the running web app and write its test plan.
    #[command(flatten)]
    pub web: WebPlanArgs,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Explore a running web app with a headless Chromium: every page reached is snapshotted
    /// (JPEG, accessibility tree, metadata) and recorded with its links, forms and elements in
    /// `.prp-session/runs/<id>/plan-explore/` (`graph.json`, `snapshots/`, `transcript.jsonl`).
    ///
    /// Example: `prpd plan explore -u http://127.0.0.1:3000 -d 2 --max-pages 30`
    Explore(WebPlanArgs),
    /// Declare a task's critical points before doing it (`qa_plan`); prints the plan as JSON.
    ///
    /// Example: `prpd plan create --task "add login" --point "test_login passes"
    /// --point "0 lint problems" --kind test`, or `--request plan.json` with the tool's JSON
    /// input.
    Create(CreateArgs),
    /// Judge evidence against a plan (`verify_plan`); prints the verdict as JSON. Exits 0 when
    /// every point passes, 1 when one fails.
    ///
    /// Example: `npm test 2>&1 | prpd plan verify 3f2a9c01d4e7 --evidence-file -`
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
pub struct RootArgs {
    /// Where plans are kept: `<DIR>/test-results/plans/` (default: `QA_PROJECT_ROOT`, else the
    /// repository around the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// What the work is for.
    #[arg(long)]
    pub task: Option<String>,
    /// A critical point; its text is also the hint looked for in the evidence. Repeatable.
    #[arg(long = "point", value_name = "TEXT")]
    pub points: Vec<String>,
    /// Which evidence stream to expect: test, scan, log, screenshot or mixed.
    #[arg(long)]
    pub kind: Option<String>,
    /// The whole `qa_plan` input as JSON (`-`: stdin), instead of the flags.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["task", "points", "kind"])]
    pub request: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The plan's id, as `prpd plan create` printed it.
    pub plan_id: String,
    /// An evidence row. Repeatable.
    #[arg(long = "evidence", value_name = "ROW")]
    pub evidence: Vec<String>,
    /// Evidence rows from a file (`-`: stdin): a JSON list as `verify_plan` takes it, or plain
    /// text, one row per line.
    #[arg(long, value_name = "FILE")]
    pub evidence_file: Option<PathBuf>,
    /// Print the per-point Markdown table instead of JSON.
    #[arg(long)]
    pub markdown: bool,
}

pub fn run(args: PlanArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        None => web_plan::run(&args.web, Mode::Plan),
        Some(PlanCommand::Explore(web)) => web_plan::run(&web, Mode::Explore),
        Some(PlanCommand::Create(create)) => run_create(&create),
        Some(PlanCommand::Verify(verify)) => run_verify(&verify),
    }
}

fn run_create(args: &CreateArgs) -> anyhow::Result<ExitCode> {
    let request = if let Some(path) = &args.request {
        let text = read_input(path)?;
        serde_json::from_str::<Value>(&text).map_err(|error| {
            UsageError(format!(
                "{}:{}:{}: not JSON: {error}; expected the qa_plan input {{task, critical_points, kind?}}",
                path.display(),
                error.line(),
                error.column()
            ))
        })?
    } else {
        let mut request = json!({ "critical_points": args.points });
        if let Some(task) = &args.task {
            request["task"] = json!(task);
        }
        if let Some(kind) = &args.kind {
            request["kind"] = json!(kind);
        }
        request
    };
    let mut plans = PlanStore::new(settings(&args.root)?);
    match plans.create(&request, SystemTime::now()) {
        Ok(plan) => {
            if plan.persisted_to.is_none() {
                return Err(anyhow::anyhow!(
                    "the plan could not be written under {} (see the log above); `prpd plan verify` would not find it",
                    plans_location(&args.root)?.display()
                ));
            }
            println!("{}", serde_json::to_string_pretty(&plan)?);
            Ok(ExitCode::Success)
        }
        Err(error) => {
            println!("{}", error.to_json());
            Err(UsageError(format!("qa_plan refused the plan: {error}")).into())
        }
    }
}

fn run_verify(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let mut rows: Vec<Value> = args.evidence.iter().map(|row| json!(row)).collect();
    if let Some(path) = &args.evidence_file {
        let text = read_input(path)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(list)) => rows.extend(list),
            _ => rows.extend(
                text.lines()
                    .filter(|line| !line.trim().is_empty())
                    .map(|line| json!(line)),
            ),
        }
    }
    let mut plans = PlanStore::new(settings(&args.root)?);
    match plans.verify(&args.plan_id, Some(&Value::Array(rows)), SystemTime::now()) {
        Ok(verdict) => {
            if args.markdown {
                print!("{}", table::markdown(&verdict));
            } else {
                println!("{}", serde_json::to_string_pretty(&verdict)?);
            }
            Ok(match verdict.verdict {
                PlanStatus::Pass => ExitCode::Success,
                PlanStatus::Fail => ExitCode::NotShipped,
            })
        }
        Err(error) => {
            println!("{}", error.to_json());
            Err(UsageError(format!("verify_plan refused: {error}")).into())
        }
    }
}

fn settings(root: &RootArgs) -> anyhow::Result<StoreSettings> {
    Ok(StoreSettings {
        ttl: TTL,
        capacity: CAPACITY,
        persist_dir: Some(plans_location(root)?),
    })
}

fn plans_location(root: &RootArgs) -> anyhow::Result<PathBuf> {
    let root = match (&root.root, std::env::var_os("QA_PROJECT_ROOT")) {
        (Some(root), _) => root.clone(),
        (None, Some(root)) if !root.is_empty() => PathBuf::from(root),
        _ => {
            let current = std::env::current_dir().context("cannot read the current directory")?;
            repo::root_of(&current).unwrap_or(current)
        }
    };
    Ok(store::plans_dir(&root))
}

fn read_input(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("failed to read stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path)
        .map_err(|error| UsageError(format!("{}: cannot read: {error}", path.display())).into())
}
