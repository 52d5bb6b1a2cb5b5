//! The command line: clap types, one `Args` struct per subcommand, and the dispatch that turns
//! a parsed command into library calls and an [`ExitCode`].

mod agent_check;
mod config;
pub mod demo;
mod foreground;
pub mod init;
mod mcp;
pub mod memory;
mod plan;
mod receipt;
pub mod status;
mod ui;
mod usage;
mod verify;
mod watch;
mod web_plan;

pub use usage::UsageError;

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use prpd_base::config_file::ConfigError;
use prpd_base::exit::ExitCode;
use prpd_base::process;
use prpd_base::repo::{self, NotInRepository};
use prpd_base::status_block::Verdict;
use prpd_protocols::verify_tasks::{TasksFileError, VerifyError};
use prpd_prp::PrpError;
use prpd_qa::config::QaSettings;
use prpd_qa::discover::DetectError;
use prpd_qa::method::BaseDocsError;
use prpd_qa::settings;
use prpd_qa::standalone::{self, ReportNotWritable, StandaloneRequest};
use prpd_qa::tools_mapping::ToolsMapping;
use prpd_run::driver::{DriveError, InputChanges, Output};
use prpd_run::prompt::PromptError;
use prpd_run::record::{Delivery, RunError};
use prpd_run::session::{self, SessionError, SessionFailure};
use prpd_watch::daemon::DaemonError;
use prpd_watch::queue::QueueError;

/// prpd drives AI coding agents through RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP and
/// decides from its own measurements when each phase is done.
#[derive(Debug, Parser)]
#[command(name = "prpd", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// More log output on stderr (-v debug, -vv trace). `PRPD_LOG` takes a full filter.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented prpd.toml for the agent CLI found on PATH (claude, codex, aider, in
    /// that order; otherwise the scripted demo agents), check that it loads, and show the
    /// commands prpd will measure.
    ///
    /// An existing prpd.toml is left alone unless `--force` is given.
    /// Example: `prpd init` (or `prpd init --agent codex`)
    Init(InitArgs),
    /// Detect the stacks of a repository and the commands that test, lint and build it.
    ///
    /// Example: `prpd detect --repo ../my-service --json`
    Detect(DetectArgs),
    /// Run the QA checklist against a repository and print the verdict and the report.
    ///
    /// Exit code 0 on APPROVE, 1 on REJECT, 2 on a usage or configuration error.
    /// Example: `prpd qa --repo . --prp PRPs/rate-limit.md`
    Qa(QaArgs),
    /// Run one PRP through RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP in the foreground.
    ///
    /// Prints a status block per iteration. Exit code 0 SHIPPED, 1 ABORTED (or interrupted:
    /// `prpd resume` continues), 2 usage or configuration error, 3 ESCALATED.
    /// Example: `prpd run PRPs/rate-limit.md --repo ../my-service`
    Run(RunArgs),
    /// Show every run in a table, then one in full (default: the latest unfinished): its PRP,
    /// phase and iteration, whether a prpd is driving it or it was interrupted, breakers, the
    /// last verdict with its blocking items, usage, its worktree and reports.
    Status(StatusArgs),
    /// Show what an iteration of a run changed, as a unified diff of its snapshots.
    ///
    /// Iterations are numbered in run order, as their directories under
    /// `.prp-session/runs/<id>/iterations/` are. Example: `prpd diff 3`
    Diff(DiffArgs),
    /// Show what each agent call of a run cost and what came of it: the agent, the model its
    /// CLI reported, tokens by kind, cost (reported, priced from `[prices]`, or unknown), wall
    /// time, the measured verdict and why the phase went round again.
    ///
    /// Example: `prpd receipt` (the latest run) or `prpd receipt <RUN> --json`
    Receipt(ReceiptArgs),
    /// Continue a run (default: the only unfinished one): after a stop or crash from its last
    /// saved step; after an
    /// escalation as a human decision (the QA attempt counter resets, an open breaker gets one
    /// probe iteration).
    Resume(ResumeArgs),
    /// Abort a run (default: the only unfinished one; a running prpd stops after its current
    /// step).
    Abort(AbortArgs),
    /// Run the whole loop on the bundled example with scripted agents: no network, no API key.
    ///
    /// Example: `prpd demo` (or `cargo run --release -- demo`)
    Demo(DemoArgs),
    /// Run as a daemon: take the repository's lock, resume interrupted runs, then watch the
    /// files. A new or changed PRP under `PRPs/` queues a run; `prpd status`, `resume`, `abort`
    /// and `queue` talk to it through `.prp-session/prpd.sock`. Logs go to stderr and, as JSON
    /// lines, to `.prp-session/prpd.log`. SIGTERM or Ctrl-C stops it (exit 0); the next start
    /// resumes the run.
    ///
    /// Example: `prpd watch --repo ~/src/app`
    Watch(WatchArgs),
    /// The dashboard: the repository's runs in a browser — their timelines, iterations, diffs,
    /// receipts and reports, live — with Resume and Abort (through the daemon). Prints the URL
    /// with the access token; an action without the token is refused.
    ///
    /// Example: `prpd ui` (or `prpd watch --ui 127.0.0.1:7420` to serve it from the daemon)
    Ui(ui::UiArgs),
    /// Show the PRPs waiting for the daemon, or queue one.
    ///
    /// Example: `prpd queue PRPs/rate-limit.md`
    Queue(QueueArgs),
    /// Search what earlier runs taught prpd, add a lesson, or show the store's figures.
    ///
    /// Example: `prpd memory search "rate limiter" --kind bugs`
    Memory(memory::MemoryArgs),
    /// Serve prpd's protocols to an agent as an MCP server over stdio: `qa_plan` and
    /// `verify_plan` (critical points declared up front, judged against evidence).
    ///
    /// Example: `claude mcp add prpd -- prpd mcp`
    Mcp(mcp::McpArgs),
    /// Test plans from a running web app (`plan -u URL`, `plan explore -u URL`: a headless
    /// Chromium explores it; the plan, its specs and a summary go under
    /// `.prp-session/runs/<id>/plan/`), and critical points for scripts (`plan create`,
    /// `plan verify`; kept under `test-results/plans/`).
    ///
    /// Exit code 0 when done, 1 when a guardrail or a failing point stopped it, 2 for input to fix.
    /// Example: `prpd plan -u http://127.0.0.1:3000 -d 2`
    Plan(plan::PlanArgs),
    /// Run a task list's `[VERIFY]` tasks now, without an agent: their commands, the local CI,
    /// the remote CI of HEAD, the AC checklist. Each prints the seed's report ending in
    /// `VERIFICATION_PASS` or `VERIFICATION_FAIL`, is appended to `.progress.md` beside the file,
    /// and has its checkbox ticked only when it passed.
    ///
    /// Exit code 0 when every task passed, 1 when one failed, 2 for a file to fix.
    /// Example: `prpd verify specs/word-stats/tasks.md --task V4`
    Verify(verify::VerifyArgs),
}

/// Options shared by commands that work on one repository.
#[derive(Debug, Args)]
pub struct RepoArgs {
    /// The target repository, taken as given (default: the root of the git repository around
    /// the current directory, found as git finds it).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Write the configuration for this agent instead of the first one found on PATH.
    #[arg(long, value_enum)]
    pub agent: Option<init::AgentChoice>,
    /// Overwrite an existing prpd.toml.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct DetectArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The prpd.toml whose `[commands]` apply (default: `<repo>/prpd.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct QaArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The PRP the work implements; enables the acceptance-criteria check and lets the
    /// documentation checks look for the feature by name.
    #[arg(long, value_name = "FILE")]
    pub prp: Option<PathBuf>,
    /// The commit the change under review starts from (a branch, tag or commit): the
    /// documentation checks judge only what was added since. Without `--prp` or `--base` there
    /// is no change to judge and they are reported as not applicable.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// The prpd.toml to use (default: `<repo>/prpd.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the JSON report instead of the Markdown report and status block.
    #[arg(long)]
    pub json: bool,
    /// How many checks run at once (default: `qa.jobs` of prpd.toml, else 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Also write the Markdown report to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Gate one sub-project: the commands its folder declares (relative to the repository,
    /// as `prpd detect` lists them). Example: `prpd qa --path services/api`
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// Options of the commands that drive a run.
#[derive(Debug, Args)]
pub struct DriveArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The prpd.toml to use (default: `<repo>/prpd.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print only a final JSON summary instead of the status blocks.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The PRP to run (a Markdown file inside the repository).
    pub prp: PathBuf,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Work in your working tree instead of a worktree of the run's own (the run then needs a
    /// clean tree, and one run at a time works in place).
    #[arg(long)]
    pub in_place: bool,
    /// With --in-place: start although the working tree has uncommitted changes; they become
    /// part of the run's starting point and stay out of the pull request (without it, prpd
    /// lists them and stops). A run in its own worktree never looks at your changes.
    #[arg(long)]
    pub allow_dirty: bool,
    /// The commit the run's worktree starts from: a branch, tag or commit (default: what HEAD
    /// names now). The pull request's base is that branch.
    #[arg(long, value_name = "REF", conflicts_with = "in_place")]
    pub base: Option<String>,
    /// Ship only locally: commit, branch, push when `[ship] remote` is a local path, and write
    /// the pull request's title and body to `.prp-session/runs/<id>/pr.md`; no network, no token.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run to show in full (default: the latest unfinished run, else the latest run).
    pub run: Option<String>,
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReceiptArgs {
    /// The run (default: the latest unfinished run, else the latest run).
    pub run: Option<String>,
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Print the receipt as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The iteration (default: the last one).
    pub iteration: Option<u32>,
    /// The run (default: the only unfinished run, else the latest).
    #[arg(long)]
    pub run: Option<String>,
    #[command(flatten)]
    pub repo: RepoArgs,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run to resume (default: the only unfinished run).
    pub run: Option<String>,
    /// Continue although `prpd.toml`, `qa-checklist.yml`, `qa-tools-mapping.yml` or
    /// `.prpd/prompts/` changed since the run started (recorded in the run's summary).
    #[arg(long)]
    pub reload_config: bool,
    /// Raise the budget that stopped the run by N: dollars for `max_cost_usd` or
    /// `max_cost_usd_per_day` (today only), tokens for `max_tokens` or `max_tokens_per_day`.
    /// Example: `prpd resume --budget +5`
    #[arg(long, value_name = "+N", allow_hyphen_values = true)]
    pub budget: Option<String>,
    #[command(flatten)]
    pub drive: DriveArgs,
}

#[derive(Debug, Args)]
pub struct AbortArgs {
    /// The run to abort (default: the only unfinished run).
    pub run: Option<String>,
    #[command(flatten)]
    pub repo: RepoArgs,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The prpd.toml to use (default: `<repo>/prpd.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve the dashboard from the daemon at ADDR (`127.0.0.1:7420`; port 0 picks a free one;
    /// `prpd ui` prints its URL with the token).
    #[arg(long, value_name = "ADDR")]
    pub ui: Option<String>,
    /// Allow a `--ui` address off the loopback interface (plain HTTP: unencrypted).
    #[arg(long, requires = "ui")]
    pub public: bool,
}

#[derive(Debug, Args)]
pub struct QueueArgs {
    /// A PRP to queue (a Markdown file inside the repository).
    pub prp: Option<PathBuf>,
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Print `{message, queue}` as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to create the demo repository (an empty or missing directory; default: a new
    /// temporary directory, kept afterwards so you can look at it).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print only a final JSON summary instead of the status blocks.
    #[arg(long)]
    pub json: bool,
    /// Only create the demo repository (committed, its bare remote beside it) and print how to
    /// run it, e.g. with `prpd watch`.
    #[arg(long, conflicts_with = "json")]
    pub no_run: bool,
}

/// Runs the parsed command. First prpd becomes a child subreaper, before it starts any child: a
/// process that escapes an agent's process group then re-parents to prpd, which stops it when
/// the agent ends ([`process::stop_leftovers`]).
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Err(error) = process::become_subreaper() {
        tracing::warn!(%error, "cannot become a child subreaper; processes that escape an agent's process group may outlive it");
    }
    match cli.command {
        Command::Init(args) => {
            let message = init::init(&init::InitRequest {
                repo: repo_dir(&args.repo)?,
                agent: args.agent,
                force: args.force,
            })?;
            print!("{message}");
            Ok(ExitCode::Success)
        }
        Command::Detect(args) => detect(&args),
        Command::Qa(args) => qa(&args),
        Command::Run(args) => {
            let options =
                session_options(&args.drive.repo, args.drive.config.clone(), args.drive.json)?;
            config::read(&options.repo, options.config.as_deref())?;
            let place = if args.in_place {
                session::Place::InPlace {
                    dirty: if args.allow_dirty {
                        session::DirtyTree::Allow
                    } else {
                        session::DirtyTree::Refuse
                    },
                }
            } else {
                session::Place::Worktree {
                    base: args.base.clone(),
                    base_branch: None,
                }
            };
            let start = session::Start {
                place,
                delivery: if args.dry_run {
                    Delivery::DryRun
                } else {
                    Delivery::Live
                },
            };
            foreground::drive_in_foreground(
                args.drive.json,
                session::run(&options, &args.prp, start, None),
            )
        }
        Command::Status(args) => status(&args),
        Command::Receipt(args) => receipt::receipt(&args),
        Command::Diff(args) => {
            let patch = session::diff(&repo_dir(&args.repo)?, args.run.as_deref(), args.iteration)?;
            if patch.is_empty() {
                eprintln!("prpd: the iteration changed nothing");
            }
            print!("{patch}");
            Ok(ExitCode::Success)
        }
        Command::Resume(args) => resume(&args),
        Command::Abort(args) => abort(&args),
        Command::Watch(args) => {
            let ui = args
                .ui
                .as_deref()
                .map(|text| ui::bind_address(text, ui::exposure(args.public)))
                .transpose()?;
            watch::watch(
                repo_dir(&args.repo)?,
                args.config,
                ui.map(|address| (address, ui::exposure(args.public))),
            )
        }
        Command::Ui(args) => ui::ui(&repo_dir(&args.repo)?, &args),
        Command::Queue(args) => {
            watch::queue(&repo_dir(&args.repo)?, args.prp.as_deref(), args.json)
        }
        Command::Demo(args) => demo::run(
            args.dir.as_deref(),
            output(args.json, cli.verbose),
            args.no_run,
        ),
        Command::Memory(args) => memory::run(args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Plan(args) => plan::run(args),
        Command::Verify(args) => verify::verify(&args),
    }
}

/// Where the daemon's JSON log goes (`prpd watch` only): `.prp-session/prpd.log` of the
/// repository it watches. A repository that cannot be resolved logs nowhere but stderr; the
/// command itself reports why.
pub fn daemon_log(cli: &Cli) -> Option<PathBuf> {
    let Command::Watch(args) = &cli.command else {
        return None;
    };
    let repo = repo_dir(&args.repo).ok()?;
    Some(prpd_base::paths::SessionPaths::new(&repo).daemon_log())
}

fn session_options(
    repo: &RepoArgs,
    config: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<session::Options> {
    Ok(session::Options {
        repo: repo_dir(repo)?,
        config,
        output: drive_output(json),
    })
}

/// What `prpd demo` prints while the run goes: only the final JSON summary, the full status
/// blocks (`-v`), or one line per phase.
fn output(json: bool, verbose: u8) -> Output {
    match (json, verbose) {
        (true, _) => Output::Quiet,
        (false, 0) => Output::PhaseLines,
        (false, _) => Output::StatusBlocks,
    }
}

/// Status blocks while the run goes, or only the final JSON summary.
fn drive_output(json: bool) -> Output {
    if json {
        Output::Quiet
    } else {
        Output::StatusBlocks
    }
}

fn status(args: &StatusArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    let daemon = watch::ask(&repo, &watch::Request::Status)?.map(|reply| reply.daemon);
    let queue = match &daemon {
        Some(daemon) => daemon.queue.clone(),
        None => watch::saved_queue(&repo)?,
    };
    let listed = session::status(&repo)?;
    let lines: Vec<status::RunLine> = listed
        .iter()
        .map(|run| {
            status::RunLine::of(
                &run.run_id,
                run.record.as_ref().map_err(ToString::to_string),
            )
        })
        .collect();
    let unfinished = |run: &session::Listed| {
        run.record
            .as_ref()
            .map_or(true, |record| !record.is_finished())
    };
    let shown = match &args.run {
        Some(asked) => Some(
            listed
                .iter()
                .position(|run| &run.run_id == asked)
                .ok_or_else(|| session::SessionError::NoSuchRun {
                    run_id: asked.clone(),
                    repo: repo.clone(),
                })?,
        ),
        None => listed
            .iter()
            .rposition(unfinished)
            .or(listed.len().checked_sub(1)),
    };
    let Some(shown) = shown.and_then(|index| listed.into_iter().nth(index)) else {
        if args.json && daemon.is_none() && queue.is_empty() {
            println!("null");
        } else if args.json {
            println!(
                "{}",
                serde_json::json!({ "run_id": null, "daemon": daemon, "queue": queue })
            );
        } else {
            println!("No run in {}.", repo.display());
            print!("{}", status::daemon_lines(daemon.as_ref(), &queue));
        }
        return Ok(ExitCode::Success);
    };
    let record = match shown.record {
        Ok(record) => record,
        Err(refused) => {
            if !args.json {
                print!("{}", status::run_table(&lines));
            }
            return Err(refused.into());
        }
    };
    let status = status::Status::of(&repo, &record, daemon, queue, lines)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &status)?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", status.render(&record))?;
    }
    Ok(ExitCode::Success)
}

/// `prpd resume`: through the daemon when one watches the repository, else in the foreground.
fn resume(args: &ResumeArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.drive.repo)?;
    let budget = args
        .budget
        .as_deref()
        .map(prpd_run::budget::parse_raise)
        .transpose()
        .map_err(UsageError)?;
    let request = watch::Request::Resume {
        run: args.run.clone(),
        reload_config: args.reload_config,
        budget,
    };
    if let Some(reply) = watch::ask(&repo, &request)? {
        return watch::answered(&reply);
    }
    let options = session_options(&args.drive.repo, args.drive.config.clone(), args.drive.json)?;
    foreground::drive_in_foreground(
        args.drive.json,
        session::resume(
            &options,
            args.run.as_deref(),
            if args.reload_config {
                InputChanges::Reload
            } else {
                InputChanges::Refuse
            },
            session::Resumption::Human,
            budget,
        ),
    )
}

fn abort(args: &AbortArgs) -> anyhow::Result<ExitCode> {
    let options = session_options(&args.repo, None, true)?;
    let request = watch::Request::Abort {
        run: args.run.clone(),
    };
    if let Some(reply) = watch::ask(&options.repo, &request)? {
        return watch::answered(&reply);
    }
    match session::abort(&options, args.run.as_deref())? {
        session::Aborted::Now { run_id } => println!("Run {run_id} aborted."),
        session::Aborted::Requested { run_id } => println!(
            "Run {run_id} is being driven by another prpd; it was asked to abort after its current step."
        ),
    }
    Ok(ExitCode::Success)
}

/// The exit code for an error that ended a command: configuration and input errors are the
/// user's to fix (2); anything else is prpd's own failure (4).
pub fn exit_code_for(error: &anyhow::Error) -> ExitCode {
    let is_input_error = error.chain().any(|cause| {
        cause.is::<ConfigError>()
            || cause.is::<DetectError>()
            || cause.is::<PrpError>()
            || cause.is::<UsageError>()
            || cause.is::<NotInRepository>()
            || cause.is::<ReportNotWritable>()
            || cause.is::<SessionError>()
            || cause.is::<TasksFileError>()
            || cause
                .downcast_ref::<VerifyError>()
                .is_some_and(VerifyError::is_users_to_fix)
            || matches!(
                cause.downcast_ref::<DaemonError>(),
                Some(DaemonError::Config(_) | DaemonError::Queue(QueueError::Corrupt { .. }))
            )
            || matches!(
                cause.downcast_ref::<BaseDocsError>(),
                Some(BaseDocsError::UnknownRevision { .. } | BaseDocsError::NotARepository { .. })
            )
            || matches!(
                cause.downcast_ref::<SessionFailure>(),
                Some(
                    SessionFailure::Request(_)
                        | SessionFailure::Record(
                            RunError::OtherVersion { .. } | RunError::Corrupt { .. }
                        )
                        | SessionFailure::Drive(
                            DriveError::Detect(_)
                                | DriveError::InputsChanged { .. }
                                | DriveError::Prompt(PromptError::UnknownPlaceholder { .. })
                        )
                )
            )
    });
    if is_input_error {
        ExitCode::UsageOrConfig
    } else {
        ExitCode::Internal
    }
}

/// The repository a command works on: `--repo DIR` as given (it must be a directory inside a
/// git repository), else the root of the git repository around the current directory.
fn repo_dir(args: &RepoArgs) -> anyhow::Result<PathBuf> {
    let Some(dir) = &args.repo else {
        let current = std::env::current_dir()
            .map_err(|error| UsageError(format!("cannot read the current directory: {error}")))?;
        return Ok(repo::root_of(&current)?);
    };
    if !dir.is_dir() {
        return Err(UsageError(format!("--repo {}: not a directory", dir.display())).into());
    }
    repo::root_of(dir)?;
    dir.canonicalize()
        .with_context(|| format!("failed to resolve --repo {}", dir.display()))
}

fn detect(args: &DetectArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    let config = match config::read(&repo, args.config.as_deref())? {
        Some(file) => QaSettings::from_file(&file)?,
        None => QaSettings::default(),
    };
    let mapping = ToolsMapping::load(&repo)?;
    let detection = settings::detect(&repo, &mapping, &config.gate)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &detection)?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", detection.render_table())?;
    }
    Ok(ExitCode::Success)
}

fn qa(args: &QaArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    config::read(&repo, args.config.as_deref())?;
    let result = standalone::check(&StandaloneRequest {
        repo,
        config: args.config.clone(),
        prp: args.prp.clone(),
        base: args.base.clone(),
        jobs: args.jobs,
        report: args.report.clone(),
        path: args.path.clone(),
    })?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", result.json)?;
    } else {
        write!(stdout, "{}\n{}", result.markdown, result.status_block)?;
    }
    Ok(match result.outcome.verdict {
        Verdict::Approve => ExitCode::Success,
        Verdict::Reject => ExitCode::NotShipped,
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
