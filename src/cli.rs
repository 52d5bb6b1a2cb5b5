//! The command line: clap types, one `Args` struct per subcommand, and the dispatch that turns
//! a parsed command into library calls and an [`ExitCode`].

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::checklist::Checklist;
use crate::config::Config;
use crate::config_file::{self, ConfigError};
use crate::discover::{self, DetectError};
use crate::exit::ExitCode;
use crate::paths::SessionPaths;
use crate::prp::{self, PrpError};
use crate::qa::{self, QaRequest};
use crate::report;
use crate::status_block::Verdict;
use crate::tools_mapping::ToolsMapping;

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
    /// Detect the stacks of a repository and the commands that test, lint and build it.
    ///
    /// Example: `prpd detect --repo ../my-service --json`
    Detect(DetectArgs),
    /// Run the QA checklist against a repository and print the verdict and the report.
    ///
    /// Exit code 0 on APPROVE, 1 on REJECT, 2 on a usage or configuration error.
    /// Example: `prpd qa --repo . --prp PRPs/rate-limit.md`
    Qa(QaArgs),
}

/// Options shared by commands that work on one repository.
#[derive(Debug, Args)]
pub struct RepoArgs {
    /// The target repository (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct DetectArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
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
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Detect(args) => detect(&args),
        Command::Qa(args) => qa(&args),
    }
}

/// The exit code for an error that ended a command: configuration and input errors are the
/// user's to fix (2); anything else is prpd's own failure (4).
pub fn exit_code_for(error: &anyhow::Error) -> ExitCode {
    let is_input_error = error.chain().any(|cause| {
        cause.is::<ConfigError>()
            || cause.is::<DetectError>()
            || cause.is::<PrpError>()
            || cause.is::<UsageError>()
    });
    if is_input_error {
        ExitCode::UsageOrConfig
    } else {
        ExitCode::Internal
    }
}

/// A command-line argument that names something that is not there.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

fn repo_dir(args: &RepoArgs) -> anyhow::Result<PathBuf> {
    if !args.repo.is_dir() {
        return Err(UsageError(format!("--repo {}: not a directory", args.repo.display())).into());
    }
    args.repo
        .canonicalize()
        .with_context(|| format!("failed to resolve --repo {}", args.repo.display()))
}

fn detect(args: &DetectArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    let mapping = ToolsMapping::load(&repo)?;
    let detection = discover::detect(&repo, &mapping)?;
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
    let config = Config::load(&repo, args.config.as_deref())?;
    let checklist = Checklist::load(&repo)?;
    let mapping = ToolsMapping::load(&repo)?;
    let prp = args
        .prp
        .as_deref()
        .map(|path| load_prp(&repo, path))
        .transpose()?;
    let detection = discover::detect(&repo, &mapping)?;
    let session = SessionPaths::new(&repo);
    session
        .ensure()
        .with_context(|| format!("failed to create {}", session.root().display()))?;
    let run_dir = session.run_dir(&run_id("qa"));
    let request = QaRequest {
        repo: repo.clone(),
        prp_path: prp.as_ref().map(|(path, _)| path.clone()),
        prp: prp.map(|(_, prp)| prp),
        jobs: args.jobs.map_or(config.qa.jobs, usize::from),
        check_timeout: config.qa.check_timeout,
        grace: config.qa.grace,
        run_dir: run_dir.clone(),
        attempt: 1,
    };
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    let outcome = runtime.block_on(qa::run(&request, &checklist, detection))?;

    let markdown = report::markdown(&outcome);
    let block = report::status_block(&outcome, 1).to_string();
    let json = serde_json::to_string_pretty(&report::json(&outcome))?;
    write_file(&run_dir.join("qa-report.md"), &markdown)?;
    write_file(&run_dir.join("qa-report.json"), &json)?;
    if let Some(path) = &args.report {
        write_file(path, &markdown)?;
    }
    append(&session.phase_status_log(), &block)?;

    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{json}")?;
    } else {
        write!(stdout, "{markdown}\n{block}")?;
    }
    tracing::info!(run_dir = %run_dir.display(), "QA artifacts written");
    Ok(match outcome.verdict {
        Verdict::Approve => ExitCode::Success,
        Verdict::Reject => ExitCode::NotShipped,
    })
}

/// Reads and parses the PRP at `path` (as given, or relative to the repository).
fn load_prp(repo: &Path, path: &Path) -> anyhow::Result<(PathBuf, prp::Prp)> {
    let path = if path.exists() {
        path.to_path_buf()
    } else {
        repo.join(path)
    };
    let text = config_file::read(&path)?;
    let prp = prp::parse(&path, &text)?;
    Ok((path, prp))
}

/// A run id that sorts by time: `<kind>-<UTC timestamp>-<pid>`.
fn run_id(kind: &str) -> String {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace([':', '-'], "");
    format!("{kind}-{stamp}-{}", std::process::id())
}

fn write_file(path: &Path, contents: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("failed to create {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("failed to write {}", path.display()))
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("failed to open {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("failed to append to {}", path.display()))
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
