//! `prpd plan -u URL` and `prpd plan explore -u URL`: explore a running web app with a headless
//! Chromium and (for `plan`) write the baseline test plan and its specs (`prpd-web`).
//! Settings come from `[plan]` of `prpd.toml`, overridden by the flags; files go under the
//! repository's `.prp-session/runs/<plan-…>/` (or the current directory's, outside a
//! repository). Exit 0 when done, 1 when a guardrail cut the run short (named), 2 for a wrong
//! flag, configuration, start page or a missing Chromium. SIGTERM or Ctrl-C stops the run and
//! the browser with it.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;

use super::UsageError;
use prpd_base::config_file::ConfigFile;
use prpd_base::exit::ExitCode;
use prpd_base::paths::{SessionPaths, new_run_id};
use prpd_base::{repo, shutdown};
use prpd_protocols::test_plan::PlanConfig;
use prpd_run::config::Config;
use prpd_run::planner::{self, PlannerError};
use prpd_web::browser::{BrowserError, CdpError};
use prpd_web::config::{PlanSection, TEST_TYPES};
use prpd_web::{self as web_plan, ExploreError, PlanRunError, Planned, WalkOutcome};

#[derive(Debug, Args, Default)]
pub struct WebPlanArgs {
    /// The start page of the running app (default: `[plan] base_url`).
    #[arg(short = 'u', long = "url", value_name = "URL")]
    pub url: Option<String>,
    /// How many links deep to explore (default: `[plan] max_depth`, else 2).
    #[arg(short = 'd', long = "depth", value_name = "DEPTH")]
    pub depth: Option<u32>,
    /// The most pages to explore (default: `[plan] max_pages`, else 20).
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u32>,
    /// Explore only addresses matching this regular expression. Repeatable.
    #[arg(long = "include", value_name = "REGEX")]
    pub include: Vec<String>,
    /// Never visit addresses matching this regular expression. Repeatable.
    #[arg(long = "exclude", value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// The test types to plan, comma-separated (functional, form, navigation, responsive,
    /// boundary, security; default: all).
    #[arg(long, value_name = "TYPES", value_delimiter = ',')]
    pub test_types: Vec<String>,
    /// Guardrail: the most page snapshots.
    #[arg(long, value_name = "N")]
    pub max_snapshots: Option<u32>,
    /// The repository (or folder) whose `prpd.toml` and `.prp-session/` are used (default: the
    /// repository around the current directory, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// A configuration file instead of `<dir>/prpd.toml`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// `prpd plan` only: after the walk, the RED agent of prpd.toml proposes the plan (it may
    /// use `prpd mcp`'s planner tools on the same exploration) instead of prpd's baseline.
    #[arg(long)]
    pub agent: bool,
}

/// Which command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Explore,
    Plan,
}

pub fn run(args: &WebPlanArgs, mode: Mode) -> anyhow::Result<ExitCode> {
    let dir = match &args.dir {
        Some(dir) if !dir.is_dir() => {
            return Err(UsageError(format!("--dir {}: not a directory", dir.display())).into());
        }
        Some(dir) => dir.clone(),
        None => {
            let current = std::env::current_dir().context("cannot read the current directory")?;
            repo::root_of(&current).unwrap_or(current)
        }
    };
    if args.agent && mode == Mode::Explore {
        return Err(UsageError(
            "--agent plans; `prpd plan explore` only explores: use `prpd plan -u URL --agent`"
                .to_owned(),
        )
        .into());
    }
    let file = super::config::read(&dir, args.config.as_deref())?;
    let section = section(file.as_ref(), args)?;
    let agents = match (&file, args.agent) {
        (_, false) => None,
        (Some(file), true) => Some(Config::from_file(file)?),
        (None, true) => Some(Config::default()),
    };
    let Some(url) = args.url.clone().or_else(|| section.base_url.clone()) else {
        return Err(UsageError(
            "no start page: give `-u URL` or set `base_url` in `[plan]` of prpd.toml".to_owned(),
        )
        .into());
    };
    let config = web_plan::plan_config(&section, &url);
    let paths = SessionPaths::new(&dir);
    paths
        .ensure()
        .with_context(|| format!("cannot create {}", paths.root().display()))?;
    let run_id = new_run_id("plan");
    let run_dir = paths.run_dir(&run_id);
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(async {
        let _app = match &section.serve {
            Some(command) => {
                let log = run_dir.join("serve.log");
                web_plan::serve(command, &url, section.serve_timeout, &dir, &log)
                    .await
                    .map_err(|error| UsageError(format!("[plan] serve: {error}")))?
            }
            None => None,
        };
        let work = work(
            mode,
            &dir,
            agents.as_ref(),
            &run_dir,
            &run_id,
            config,
            section.tabs,
        );
        tokio::select! {
            result = work => result,
            () = shutdown::requested() => {
                eprintln!(
                    "prpd plan: stopped; the browser is closed. What was explored is in {}",
                    run_dir.display()
                );
                Ok(ExitCode::Internal)
            }
        }
    })
}

/// The exploration, and for `prpd plan` the plan: prpd's baseline, or the agent's when the
/// full configuration (`agents`) is given.
async fn work(
    mode: Mode,
    dir: &Path,
    agents: Option<&Config>,
    run_dir: &Path,
    run_id: &str,
    config: PlanConfig,
    tabs: NonZeroUsize,
) -> anyhow::Result<ExitCode> {
    match (mode, agents) {
        (Mode::Explore, _) => {
            let (exploration, outcome) = web_plan::explore_app(run_dir, run_id, config, tabs)
                .await
                .map_err(|error| input_or_failure(PlanRunError::from(error), run_dir))?;
            // The summary without a plan: pages, limits, guardrail counts and a hit.
            web_plan::finish(&exploration, None, &outcome, "none", run_dir)?;
            Ok(explored(run_dir, &exploration.graph, &outcome))
        }
        (Mode::Plan, None) => web_plan::plan_app(run_dir, run_id, config, tabs)
            .await
            .map(|planned| report(&planned))
            .map_err(|error| input_or_failure(error, run_dir)),
        (Mode::Plan, Some(full)) => plan_with_agent(dir, full, run_dir, run_id, config, tabs).await,
    }
}

/// The walk, then the planner agent's plan; a guardrail during the walk stops before the agent.
async fn plan_with_agent(
    dir: &Path,
    config: &Config,
    run_dir: &Path,
    run_id: &str,
    plan_config: PlanConfig,
    tabs: NonZeroUsize,
) -> anyhow::Result<ExitCode> {
    let (exploration, outcome) = web_plan::explore_app(run_dir, run_id, plan_config, tabs)
        .await
        .map_err(|error| input_or_failure(PlanRunError::from(error), run_dir))?;
    if outcome.guardrail.is_some() {
        let planned = web_plan::finish(&exploration, None, &outcome, "agent", run_dir)?;
        return Ok(report(&planned));
    }
    match planner::plan_with_agent(dir, config, run_dir, exploration).await {
        Ok(planned) => Ok(report(&planned)),
        Err(error @ (PlannerError::NoPlan { .. } | PlannerError::Refused { .. })) => {
            eprintln!("prpd plan: {error}");
            Ok(ExitCode::NotShipped)
        }
        Err(error) => Err(anyhow::Error::new(error).context(format!(
            "prpd plan failed (files so far: {})",
            run_dir.display()
        ))),
    }
}

/// `[plan]` of the configuration, with the flags applied.
fn section(file: Option<&ConfigFile>, args: &WebPlanArgs) -> anyhow::Result<PlanSection> {
    let mut section = match file {
        Some(file) => PlanSection::from_file(file)?.unwrap_or_default(),
        None => PlanSection::default(),
    };
    if let Some(depth) = args.depth {
        section.max_depth = depth;
    }
    if let Some(pages) = args.max_pages {
        if pages == 0 {
            return Err(UsageError("--max-pages must be at least 1".to_owned()).into());
        }
        section.max_pages = pages;
    }
    for pattern in args.include.iter().chain(&args.exclude) {
        regex::Regex::new(pattern).map_err(|error| {
            UsageError(format!("{pattern:?} is not a regular expression: {error}"))
        })?;
    }
    section
        .include_patterns
        .extend(args.include.iter().cloned());
    section
        .exclude_patterns
        .extend(args.exclude.iter().cloned());
    if !args.test_types.is_empty() {
        if let Some(unknown) = args
            .test_types
            .iter()
            .find(|name| !TEST_TYPES.contains(&name.as_str()))
        {
            return Err(UsageError(format!(
                "--test-types: {unknown:?} is not a test type; expected some of {}",
                TEST_TYPES.join(", ")
            ))
            .into());
        }
        section.test_types.clone_from(&args.test_types);
    }
    if let Some(snapshots) = args.max_snapshots {
        section.max_snapshots = Some(snapshots);
    }
    Ok(section)
}

/// Prints where the exploration is; exit 1 when a guardrail cut it short.
fn explored(run_dir: &Path, graph: &web_plan::ExplorationGraph, outcome: &WalkOutcome) -> ExitCode {
    let explore_dir = run_dir.join(web_plan::EXPLORE_DIR);
    println!(
        "Explored {} pages ({} links between them, {} addresses not followed).",
        graph.pages.len(),
        graph.edges.len(),
        graph.skipped.len()
    );
    println!("Graph:       {}", explore_dir.join("graph.json").display());
    println!("Snapshots:   {}", explore_dir.join("snapshots").display());
    println!(
        "Transcript:  {}",
        explore_dir.join("transcript.jsonl").display()
    );
    println!(
        "Summary:     {}",
        run_dir.join("plan").join(web_plan::SUMMARY_FILE).display()
    );
    limits(outcome);
    guardrail_exit(outcome.guardrail.as_ref())
}

/// Prints what the plan run wrote; exit 1 when a guardrail cut it short.
fn report(planned: &Planned) -> ExitCode {
    let summary = &planned.summary;
    println!(
        "Explored {} pages; planned {} cases ({}).",
        summary.pages,
        summary.cases,
        summary
            .type_coverage
            .iter()
            .filter(|(_, count)| **count > 0)
            .map(|(name, count)| format!("{count} {name}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let run_dir = &planned.run_dir;
    println!("Graph:       {}", run_dir.join(&summary.graph).display());
    if let Some(plan) = &summary.test_plan {
        println!("Test plan:   {}", run_dir.join(plan).display());
        println!("Specs:       {}", run_dir.join("plan/specs").display());
    }
    println!(
        "Summary:     {}",
        run_dir.join("plan").join(web_plan::SUMMARY_FILE).display()
    );
    limits(&summary.limits);
    guardrail_exit(planned.guardrail())
}

fn limits(outcome: &WalkOutcome) {
    if outcome.page_limit_reached {
        println!(
            "The page limit was reached: some addresses were not visited (see `skipped` in graph.json)."
        );
    }
    if outcome.depth_limit_reached {
        println!("The depth limit was reached: deeper addresses were not visited.");
    }
}

fn guardrail_exit(hit: Option<&web_plan::GuardrailHit>) -> ExitCode {
    match hit {
        Some(hit) => {
            eprintln!(
                "prpd plan: stopped early: {hit}. Raise `{}` in [plan] of prpd.toml (or narrow the exploration) and run again.",
                config_key(&hit.guardrail)
            );
            ExitCode::NotShipped
        }
        None => ExitCode::Success,
    }
}

/// The `[plan]` key of a guardrail named the seed's way.
fn config_key(guardrail: &str) -> &'static str {
    match guardrail {
        "maxAgentTurnsPerRun" => "max_agent_turns",
        "maxTokenPerRun" => "max_tokens",
        _ => "max_snapshots",
    }
}

/// A missing browser, a bad start page or pattern are the user's to fix (exit 2); the rest
/// is prpd's failure.
fn input_or_failure(error: PlanRunError, run_dir: &Path) -> anyhow::Error {
    let failed = || format!("prpd plan failed (files so far: {})", run_dir.display());
    let PlanRunError::Explore(error) = error else {
        return anyhow::Error::new(error).context(failed());
    };
    let users = matches!(
        &error,
        ExploreError::BadUrl { .. }
            | ExploreError::OutOfScope { .. }
            | ExploreError::Pattern(_)
            | ExploreError::Login(_)
            | ExploreError::Browser(
                BrowserError::Launch(_)
                    | BrowserError::Navigation { .. }
                    | BrowserError::Cdp(CdpError::Connect { .. })
            )
    );
    if users {
        UsageError(format!("{error} (files so far: {})", run_dir.display())).into()
    } else {
        anyhow::Error::new(error).context(failed())
    }
}
