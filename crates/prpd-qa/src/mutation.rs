//! Test strength on the diff: how many of the small faults a mutation tool plants in the lines
//! a change touched make a test fail. Tests that pass whatever the code does (an assertion on a
//! constant, a test that only calls) approve a wrong implementation; surviving mutants name the
//! lines no test checks, which GREEN can act on.
//!
//! Theory of operation. The check judges a change, so it needs a base (inside a run, the run's
//! base; `prpd qa --base REF`); without one it has nothing to judge. `changed.rs` reads the
//! lines added or changed since the base, test files left out. For each language among them
//! whose tool is installed (`tool.rs`: cargo-mutants, mutmut, Stryker), prpd copies the tree
//! (`sandbox.rs`), runs the tool there through `prpd_base::process` in the measurement
//! environment, within the check's time limit, and reads its record (`cargo_mutants.rs`,
//! `mutmut.rs`, `stryker.rs`) into mutants of the changed lines; `mutant.rs` counts them into
//! the figures the check's validation reads (`mutation_score`, the share caught, in percent)
//! and names the first survivors.
//!
//! Nothing passes by absence: a missing tool is a skip that names it (never a pass), a tool
//! that fails or times out is a failure that says so, and a change whose mutants could not be
//! tested has no score, so its validation cannot hold.

mod cargo_mutants;
mod changed;
mod mutant;
mod mutmut;
mod sandbox;
mod stryker;
mod tool;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prpd_base::process::{self, EnvPolicy, Spec, Termination};

use crate::method::BaseDocs;
use crate::metrics::Metrics;
use crate::runner::one_line_tail;
use changed::ChangedLines;
use mutant::Tally;
use sandbox::Sandbox;
use tool::Tool;

/// The name of the check's action in a checklist (`metodo: mutation_testing`).
pub const METHOD_NAME: &str = "mutation_testing";

/// What the check is given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MutationRequest<'a> {
    /// The folder QA judges.
    pub(crate) repo: &'a Path,
    /// The base of the change under review, when there is one.
    pub(crate) base: Option<&'a BaseDocs>,
    /// The check's id, which names its logs.
    pub(crate) id: &'a str,
    /// Where its logs go (`<run_dir>/checks`).
    pub(crate) logs: &'a Path,
    /// How long all its tools together may run.
    pub(crate) timeout: Duration,
    /// Time between SIGTERM and SIGKILL when a tool is stopped.
    pub(crate) grace: Duration,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MutationOutcome {
    /// Mutants were tested; the check's validation decides.
    Measured { metrics: Metrics, detail: String },
    /// No change is under review, or it touched no line a tool mutates.
    NoChange(String),
    /// The change has lines to mutate, but no tool for them is installed.
    ToolMissing(String),
    /// A tool could not measure: it failed, left no record, or ran out of time.
    Failed(String),
}

/// What ran, for the check's result.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ran {
    /// The commands, as the report shows them.
    pub(crate) commands: Vec<String>,
    /// The log of the last tool.
    pub(crate) log: Option<PathBuf>,
    /// The last lines of the last tool's output.
    pub(crate) tail: String,
    /// The last tool's exit code.
    pub(crate) exit_code: Option<i32>,
}

/// Runs the mutation tools on the change under review.
pub(crate) async fn run(
    request: &MutationRequest<'_>,
) -> Result<(MutationOutcome, Ran), process::ProcessError> {
    let mut ran = Ran::default();
    let Some((base, revision)) = request.base.and_then(|base| Some((base, base.revision()?)))
    else {
        return Ok((
            MutationOutcome::NoChange(
                "not applicable: no change is under review, and this check mutates the lines a \
                 change touched (give `--base REF` to judge one)"
                    .to_owned(),
            ),
            ran,
        ));
    };
    let changed = match ChangedLines::since(request.repo, revision) {
        Ok(changed) => changed,
        Err(error) => {
            return Ok((
                MutationOutcome::Failed(format!(
                    "could not read the change {}: {error}",
                    base.since()
                )),
                ran,
            ));
        }
    };
    let wanted: Vec<Tool> = Tool::ALL
        .into_iter()
        .filter(|tool| !changed.with_extension(tool.extensions()).is_empty())
        .collect();
    if wanted.is_empty() {
        return Ok((
            MutationOutcome::NoChange(format!(
                "no Rust, Python, JavaScript or TypeScript source line changed {} (test files \
                 aside), so there is nothing to mutate",
                base.since()
            )),
            ran,
        ));
    }
    let (installed, missing): (Vec<Tool>, Vec<Tool>) = wanted
        .into_iter()
        .partition(|tool| tool.installed(request.repo).is_ok());
    let missing_note: Vec<String> = missing
        .iter()
        .map(|tool| {
            format!(
                "{} changed {} lines {} but {} is not installed ({})",
                changed.line_count(tool.extensions()),
                tool.language(),
                base.since(),
                tool.name(),
                tool.installed(request.repo).err().unwrap_or_default()
            )
        })
        .collect();
    if installed.is_empty() {
        return Ok((
            MutationOutcome::ToolMissing(format!(
                "the tool is missing: {}; install it to measure how many mutants the tests kill",
                missing_note.join("; ")
            )),
            ran,
        ));
    }
    let sandbox = match Sandbox::copy(request.repo) {
        Ok(sandbox) => sandbox,
        Err(error) => return Ok((MutationOutcome::Failed(error.to_string()), ran)),
    };
    let deadline = Instant::now() + request.timeout;
    let mut tally = Tally::default();
    let mut tools = Vec::new();
    for tool in installed {
        let found = run_tool(request, tool, &sandbox, &changed, deadline, &mut ran).await?;
        match found {
            Ok(mutants) => tally.add(mutants),
            Err(why) => return Ok((MutationOutcome::Failed(why), ran)),
        }
        tools.push(tool.name());
    }
    let mut detail = format!(
        "{} on the lines changed {}: {}",
        tools.join(" and "),
        base.since(),
        tally.summary()
    );
    if !missing_note.is_empty() {
        let _ = write!(detail, " (not measured: {})", missing_note.join("; "));
    }
    Ok((
        MutationOutcome::Measured {
            metrics: tally.metrics(),
            detail,
        },
        ran,
    ))
}

/// Runs one tool in the copy until `deadline`: its mutants, or why it measured nothing.
async fn run_tool(
    request: &MutationRequest<'_>,
    tool: Tool,
    sandbox: &Sandbox,
    changed: &ChangedLines,
    deadline: Instant,
    ran: &mut Ran,
) -> Result<Result<Vec<mutant::Mutant>, String>, process::ProcessError> {
    let argv = match tool.prepare(sandbox.path(), changed) {
        Ok(argv) => argv,
        Err(why) => return Ok(Err(format!("{} could not be prepared: {why}", tool.name()))),
    };
    let command = argv.join(" ");
    ran.commands.push(command.clone());
    let log = request
        .logs
        .join(format!("{}-{}.log", request.id, tool.name().to_lowercase()));
    let mut spec = Spec::argv(argv, sandbox.path(), &log);
    spec.env_policy = EnvPolicy::Measurement {
        home: log.with_extension("home"),
    };
    spec.timeout = deadline.saturating_duration_since(Instant::now());
    spec.grace = request.grace;
    let outcome = process::run(spec).await?;
    ran.log = Some(outcome.log_path.clone());
    ran.tail.clone_from(&outcome.tail);
    ran.exit_code = outcome.exit_code();
    let exit_code = match outcome.termination {
        Termination::Exited(code) => code,
        Termination::Signaled(signal) => {
            return Ok(Err(format!("`{command}` was killed by signal {signal}")));
        }
        Termination::Stopped => return Ok(Err(format!("`{command}` was stopped by prpd"))),
        Termination::TimedOut => {
            return Ok(Err(format!(
                "`{command}` did not finish within the check's {} limit; its process group was \
                 stopped, so there is no score (raise the check's `timeout`)",
                humantime::format_duration(request.timeout)
            )));
        }
    };
    let tail = || one_line_tail(&outcome.tail, 5);
    match tool.results(sandbox.path(), changed) {
        Ok(mutants) if mutants.is_empty() && exit_code != 0 => Ok(Err(format!(
            "`{command}` exited {exit_code} without testing a mutant; last lines: {}",
            tail()
        ))),
        Ok(mutants) => Ok(Ok(mutants)),
        Err(why) => Ok(Err(format!(
            "`{command}` exited {exit_code} and left no record prpd can read: {why}; last \
             lines: {}",
            tail()
        ))),
    }
}
