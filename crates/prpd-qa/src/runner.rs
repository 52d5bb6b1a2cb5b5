//! The QA gate: run the checklist against a repository and reach a verdict from what prpd
//! measured itself (DESIGN §6).
//!
//! Theory of operation: the checklist names checks; a check is either a shell command (whose
//! `{detected_<kind>_command}` placeholders are filled from command discovery) or a built-in method
//! run in-process. Commands go through [`prpd_base::process`] in parallel up to `jobs`; their full
//! output lands in a log under the run directory and [`crate::metrics`] reads figures out of it.
//! Each check's validation expression is then evaluated against those figures.
//!
//! No vacuous approval: a placeholder that discovery could not fill, a tool that is not
//! installed, a test command that ran no test, a figure that could not be measured, an empty
//! checklist — each is a failure with a message that says so, unless the checklist marks the
//! check `optional`, in which case it is a visible skip.

mod earlier;
mod earlier_checks;
mod mutation;
mod test_run;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::checklist::{Action, CheckSpec, Checklist, Evaluation, Severity};
use crate::command::CommandKind;
use crate::discover::{self, Detection, Discovered};
use crate::junit;
use crate::memory_context::MemorySection;
use crate::method::{self, BaseDocs, Method, MethodContext, MethodOutcome, Trace};
use crate::metrics::{self, Metrics};
use crate::missing_tool;
use crate::requirement_checks;
use crate::test_names;
use prpd_base::process::{self, Spec, Termination};
use prpd_base::status_block::Verdict;
use prpd_prp::Prp;

pub use earlier::{EarlierRun, log_fingerprint};

/// How many QA REJECTs a run takes before it escalates.
pub const MAX_QA_ATTEMPTS: u32 = 3;

/// What to check and where to put the artifacts.
#[derive(Debug, Clone)]
pub struct QaRequest {
    /// The repository under test; checks run with it as working directory.
    pub repo: PathBuf,
    /// The PRP the work implements, for the acceptance-criteria and documentation checks.
    pub prp: Option<Prp>,
    /// Where the PRP was read from, for the report.
    pub prp_path: Option<PathBuf>,
    /// How many checks run at once.
    pub jobs: usize,
    /// How long one check may run.
    pub check_timeout: Duration,
    /// Time between SIGTERM and SIGKILL for a stopped check.
    pub grace: Duration,
    /// Where check logs are written (`<run_dir>/checks/<id>.log`).
    pub run_dir: PathBuf,
    /// The QA attempt this is (1..=3), for the report.
    pub attempt: u32,
    /// Inside a run: the documentation at the run's base (see [`BaseDocs`]).
    pub base_docs: Option<BaseDocs>,
    /// Inside a run: commands prpd already ran on this very tree; a check whose command is one
    /// of them reads that run's log instead of running it again.
    pub earlier_runs: Vec<EarlierRun>,
    /// `[qa] junit`: the JUnit report the test command writes, read instead of its console.
    pub junit: Option<String>,
}

/// The result of one QA pass.
#[derive(Debug, Clone)]
pub struct QaOutcome {
    pub verdict: Verdict,
    pub checks: Vec<CheckResult>,
    pub detection: Detection,
    pub feature: String,
    pub prp_path: Option<PathBuf>,
    pub attempt: u32,
    pub finished_at: SystemTime,
    /// What the memory answered before this QA, filled by whoever asked it (`None`: no
    /// memory is configured).
    pub memory: Option<MemorySection>,
    /// Sections other parts of prpd add to the report after the checklist (inside a run: the
    /// critical points, point by point).
    pub sections: Vec<ReportSection>,
}

/// A titled piece of Markdown the report shows after the checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSection {
    pub title: String,
    pub markdown: String,
}

impl QaOutcome {
    /// How many blocking checks failed.
    pub fn blocking_failed(&self) -> usize {
        self.count(CheckStatus::Fail)
    }

    /// How many warning checks failed.
    pub fn warnings(&self) -> usize {
        self.count(CheckStatus::Warn)
    }

    /// How many checks passed.
    pub fn passing(&self) -> usize {
        self.count(CheckStatus::Pass)
    }

    /// Adds a check prpd ran outside the checklist (inside a run: the fail-to-pass proof);
    /// a blocking failure turns the verdict into REJECT.
    pub fn add_check(&mut self, check: CheckResult) {
        if check.status == CheckStatus::Fail {
            self.verdict = Verdict::Reject;
        }
        self.checks.push(check);
    }

    /// Puts `check` in place of the check with its id (inside a run: the test check judged
    /// again after a second run on the same tree), and the verdict with what the checks now
    /// say.
    pub fn replace_check(&mut self, check: CheckResult) {
        if let Some(old) = self.checks.iter_mut().find(|old| old.id == check.id) {
            *old = check;
        }
        let failed = self.count(CheckStatus::Fail) > 0;
        self.verdict = if failed {
            Verdict::Reject
        } else {
            Verdict::Approve
        };
    }

    fn count(&self, status: CheckStatus) -> usize {
        self.checks
            .iter()
            .filter(|check| check.status == status)
            .count()
    }
}

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// The check ran and its validation holds.
    Pass,
    /// A blocking check failed: the verdict is REJECT.
    Fail,
    /// A warning check failed: reported, not blocking.
    Warn,
    /// A check that did not run: an optional check that could not apply (no command found,
    /// tool missing, no PRP), a documentation check with no change to judge, or a check the
    /// repository disabled. The detail says which; a skip never counts as a pass.
    Skip,
}

/// What one check did and found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub id: String,
    pub category: String,
    pub criterion: String,
    pub blocking: bool,
    pub status: CheckStatus,
    /// The command that ran, placeholders filled (`None` for methods).
    pub command: Option<String>,
    /// Where the command came from (`package.json scripts.test`, …).
    pub source: Option<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub metrics: Metrics,
    /// One line a person can act on: why it passed, failed or was skipped.
    pub detail: String,
    /// The tests the output names as failing (test checks only).
    pub failing_tests: Vec<String>,
    /// The last lines of the command's output.
    pub output_tail: String,
    /// The full output of the command.
    pub log: Option<PathBuf>,
    /// Set when the command was not run again because the same tree was measured before:
    /// where its result came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
}

/// QA could not be carried out at all (as opposed to a REJECT, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum QaError {
    #[error("failed to create the run directory {}", path.display())]
    RunDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to run check {id}")]
    Process {
        id: String,
        #[source]
        source: process::ProcessError,
    },
    #[error("check {id} stopped unexpectedly")]
    Join {
        id: String,
        #[source]
        source: tokio::task::JoinError,
    },
}

/// Runs every check of `checklist` and gives the verdict.
pub async fn run(
    request: &QaRequest,
    checklist: &Checklist,
    detection: Detection,
) -> Result<QaOutcome, QaError> {
    let checks_dir = request.run_dir.join("checks");
    std::fs::create_dir_all(&checks_dir).map_err(|source| QaError::RunDir {
        path: checks_dir.clone(),
        source,
    })?;
    let request = Arc::new(request.clone());
    let detection = Arc::new(detection);
    // The build runs before everything else: a test command that builds into the same
    // directory (`cmake --build build && ctest`, `make && make test`) would race with it.
    // The PRP's command criteria run as checks of their own, after the checklist's.
    let requirement_checks = request
        .prp
        .as_ref()
        .map(|prp| requirement_checks::requirement_checks(prp, &request.repo))
        .unwrap_or_default();
    // Only the test names of checks that run the tests are evidence of a requirement.
    let test_checks: BTreeSet<String> = checklist
        .checks
        .iter()
        .filter(|spec| spec.placeholders().contains(&"test"))
        .chain(&requirement_checks)
        .map(|spec| spec.id.clone())
        .collect();
    let all: Vec<(usize, CheckSpec)> = checklist
        .checks
        .iter()
        .cloned()
        .chain(requirement_checks)
        .enumerate()
        .collect();
    // Methods run last: F2 reads the tests that the commands ran.
    let (methods, commands): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|(_, spec)| matches!(spec.action, Action::Method(_)));
    let (builds, others): (Vec<_>, Vec<_>) = commands
        .into_iter()
        .partition(|(_, spec)| spec.placeholders().contains(&"build"));
    let mut results: BTreeMap<usize, CheckResult> = BTreeMap::new();
    let no_trace_yet = Arc::new(None);
    for batch in [builds, others] {
        results.extend(run_batch(&request, &detection, batch, &no_trace_yet).await?);
    }
    let results_so_far: Vec<CheckResult> = results.values().cloned().collect();
    let trace = request.prp.as_ref().map(|prp| {
        let evidence = earlier_checks::evidence(&results_so_far, &test_checks);
        method::trace(prp, &evidence, &request.repo)
    });
    let trace = Arc::new(trace);
    results.extend(run_batch(&request, &detection, methods, &trace).await?);
    let mut checks: Vec<CheckResult> = results.into_values().collect();
    if checks.is_empty() {
        checks.push(empty_checklist());
    }
    let mut sections = Vec::new();
    if let Some(trace) = trace.as_ref() {
        sections.push(ReportSection {
            title: "Requirements".to_owned(),
            markdown: method::requirements_section(trace),
        });
    }
    let verdict = if checks.iter().any(|check| check.status == CheckStatus::Fail) {
        Verdict::Reject
    } else {
        Verdict::Approve
    };
    let feature = request
        .prp
        .as_ref()
        .map_or_else(|| repo_name(&request.repo), |prp| prp.title.clone());
    Ok(QaOutcome {
        verdict,
        checks,
        detection: Arc::unwrap_or_clone(detection),
        feature,
        prp_path: request.prp_path.clone(),
        attempt: request.attempt,
        finished_at: SystemTime::now(),
        memory: None,
        sections,
    })
}

/// Runs `checks` (each with its index in the checklist) in parallel up to `jobs`.
async fn run_batch(
    request: &Arc<QaRequest>,
    detection: &Arc<Detection>,
    checks: Vec<(usize, CheckSpec)>,
    trace: &Arc<Option<Trace>>,
) -> Result<BTreeMap<usize, CheckResult>, QaError> {
    let permits = Arc::new(Semaphore::new(request.jobs.max(1)));
    let mut tasks = JoinSet::new();
    for (index, spec) in checks {
        let request = Arc::clone(request);
        let detection = Arc::clone(detection);
        let permits = Arc::clone(&permits);
        let trace = Arc::clone(trace);
        tasks.spawn(prpd_base::process::owner::carried(async move {
            let _permit = permits.acquire_owned().await;
            let id = spec.id.clone();
            (
                index,
                id,
                run_check(&request, &detection, &spec, trace.as_ref().as_ref()).await,
            )
        }));
    }
    let mut results = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (index, id, result) = joined.map_err(|source| QaError::Join {
            id: "?".to_owned(),
            source,
        })?;
        let result = result.map_err(|source| QaError::Process { id, source })?;
        results.insert(index, result);
    }
    Ok(results)
}

/// A checklist with no checks would approve anything: that is a failure of its own.
fn empty_checklist() -> CheckResult {
    CheckResult {
        id: "CHECKLIST".to_owned(),
        category: "Checklist".to_owned(),
        criterion: "The checklist has at least one check".to_owned(),
        blocking: true,
        status: CheckStatus::Fail,
        command: None,
        source: None,
        exit_code: None,
        duration_ms: 0,
        metrics: Metrics::default(),
        detail: "the checklist has no checks, so nothing was verified".to_owned(),
        failing_tests: Vec::new(),
        output_tail: String::new(),
        log: None,
        reused_from: None,
    }
}

fn repo_name(repo: &Path) -> String {
    repo.canonicalize()
        .ok()
        .and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| repo.display().to_string())
}

async fn run_check(
    request: &QaRequest,
    detection: &Detection,
    spec: &CheckSpec,
    trace: Option<&Trace>,
) -> Result<CheckResult, process::ProcessError> {
    let mut result = CheckResult {
        id: spec.id.clone(),
        category: spec.category.to_string(),
        criterion: spec.criterion.clone(),
        blocking: spec.severity == Severity::Blocking,
        status: CheckStatus::Pass,
        command: None,
        source: None,
        exit_code: None,
        duration_ms: 0,
        metrics: Metrics::default(),
        detail: String::new(),
        failing_tests: Vec::new(),
        output_tail: String::new(),
        log: None,
        reused_from: None,
    };
    if let Some(note) = &spec.disabled {
        result.detail.clone_from(note);
        result.status = CheckStatus::Skip;
        return Ok(result);
    }
    let finding = match &spec.action {
        Action::Command(template) => {
            let finding = run_command(request, detection, spec, template, &mut result).await?;
            with_fallback_note(finding, template, detection)
        }
        Action::Method(method) => run_method(request, spec, *method, trace, &mut result),
        Action::Mutation => mutation::run_mutation(request, spec, &mut result).await?,
    };
    result.status = match finding {
        Finding::Pass(detail) => {
            result.detail = detail;
            CheckStatus::Pass
        }
        Finding::Fail(detail) => {
            result.detail = detail;
            if result.blocking {
                CheckStatus::Fail
            } else {
                CheckStatus::Warn
            }
        }
        Finding::NothingToJudge(detail) => {
            result.detail = detail;
            CheckStatus::Skip
        }
        Finding::Inapplicable(detail) => {
            result.detail = detail;
            if spec.optional {
                CheckStatus::Skip
            } else if result.blocking {
                CheckStatus::Fail
            } else {
                CheckStatus::Warn
            }
        }
    };
    if let Some(note) = &result.reused_from {
        result.detail = format!("{} ({note})", result.detail);
    }
    Ok(result)
}

/// Runs `spec`'s command, unless the request holds an earlier run of the same command on the
/// same tree: then that run's log is read, and the check's detail says so.
async fn run_or_reuse(
    request: &QaRequest,
    spec: Spec,
    result: &mut CheckResult,
) -> Result<process::Outcome, process::ProcessError> {
    let command = result.command.as_deref().unwrap_or_default();
    let earlier = request
        .earlier_runs
        .iter()
        .find(|run| run.command == command);
    if let Some((earlier, outcome)) = earlier.and_then(|run| Some((run, run.outcome()?))) {
        result.reused_from = Some(earlier.note());
        return Ok(outcome);
    }
    process::run(spec).await
}

/// What to do about a missing tool: install it, or (when the checklist does not already say
/// so) mark the check optional so that it is skipped where the tool is absent.
fn install_hint(spec: &CheckSpec) -> String {
    if spec.optional {
        "install it to run this check (it is optional, so it is skipped meanwhile)".to_owned()
    } else {
        format!("install it or mark {} optional", spec.id)
    }
}

/// What a check found, before severity turns it into a status.
enum Finding {
    Pass(String),
    Fail(String),
    /// The check could not be carried out (nothing to run, tool missing, no PRP to verify
    /// against): a failure unless the checklist marks the check optional.
    Inapplicable(String),
    /// The check has nothing to judge here (a documentation check with no change under
    /// review): skipped, whatever `optional` says.
    NothingToJudge(String),
}

async fn run_command(
    request: &QaRequest,
    detection: &Detection,
    spec: &CheckSpec,
    template: &str,
    result: &mut CheckResult,
) -> Result<Finding, process::ProcessError> {
    let resolved = match resolve(template, detection) {
        Ok(resolved) => resolved,
        Err(missing) => return Ok(missing.finding(detection)),
    };
    result.command = Some(resolved.command.clone());
    result.source.clone_from(&resolved.source);
    if let Some(refusal) = refused_now(&request.repo, &resolved.discovered) {
        return Ok(refusal);
    }
    if let Some(tool) = missing_tool::uninstalled_npx_tool(&resolved.command, &request.repo) {
        return Ok(resolved.tool_missing(spec, &missing_tool::not_installed(&tool)));
    }
    let log_path = request
        .run_dir
        .join("checks")
        .join(format!("{}.log", spec.id));
    let mut process_spec = Spec::measurement(&resolved.command, &request.repo, &log_path);
    process_spec.timeout = spec.timeout.unwrap_or(request.check_timeout);
    process_spec.grace = request.grace;
    if resolved.runs_tests {
        process_spec.env.extend(test_names::naming_env());
    }
    let watch = (request.junit.as_deref())
        .filter(|_| resolved.runs_tests)
        .map(|pattern| junit::Watch::start(&request.repo, pattern));
    let outcome = run_or_reuse(request, process_spec, result).await?;
    result.duration_ms = u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX);
    result.output_tail.clone_from(&outcome.tail);
    result.log = Some(outcome.log_path.clone());
    result.exit_code = outcome.exit_code();
    let mut metrics = metrics::parse_log(&outcome.log_path).unwrap_or_default();
    let exit_code = match outcome.termination {
        Termination::Exited(code) => code,
        Termination::Signaled(signal) => {
            result.metrics = metrics;
            return Ok(Finding::Fail(format!(
                "`{}` was killed by signal {signal}",
                resolved.command
            )));
        }
        Termination::Stopped => {
            result.metrics = metrics;
            return Ok(Finding::Fail(format!(
                "`{}` was stopped by prpd",
                resolved.command
            )));
        }
        Termination::TimedOut => {
            result.metrics = metrics;
            return Ok(Finding::Fail(format!(
                "`{}` did not finish within {}; its process group was stopped",
                resolved.command,
                humantime::format_duration(process_spec_timeout(spec, request))
            )));
        }
    };
    metrics.set_number("exit_code", f64::from(exit_code));
    result.metrics = metrics;
    if let Some(what) =
        missing_tool::could_not_run(&resolved.command, exit_code, &result.output_tail)
    {
        return Ok(resolved.tool_missing(spec, &what));
    }
    let report = watch.map(|watch| match &result.reused_from {
        Some(_) => watch.reused(&outcome.log_path),
        None => watch.finish(&outcome.log_path),
    });
    Ok(test_run::judge(spec, &resolved, exit_code, report, result))
}

/// The failure of a check whose discovered command now runs what QA may not run: the files
/// behind it (a Makefile recipe, a `package.json` script) changed since discovery found it.
fn refused_now(repo: &Path, discovered: &[Discovered]) -> Option<Finding> {
    discovered.iter().find_map(|discovered| {
        let reason = discover::judge_now(repo, discovered).err()?;
        Some(Finding::Fail(format!(
            "`{}` was not run: read again before it ran ({}), it {reason}; QA must not change the tree, publish or start containers",
            discovered.command, discovered.source
        )))
    })
}

/// A failed check whose command discovery only guessed (a stack default of the tools mapping)
/// says so: the failure may be the guess's, not the project's.
fn with_fallback_note(finding: Finding, template: &str, detection: &Detection) -> Finding {
    let notes: Vec<String> = CommandKind::ALL
        .into_iter()
        .filter(|kind| template.contains(&format!("{{detected_{}_command}}", kind.name())))
        .filter_map(|kind| {
            let discovered = detection.commands.get(&kind)?.as_ref()?;
            discovered.fallback.then(|| {
                format!(
                    "`{}` is a fallback prpd guessed ({}): the project declares no {} command; declare one (a script, a Makefile target, a CI step) or set it in prpd.toml `[commands]`",
                    discovered.command,
                    discovered.source,
                    kind.name()
                )
            })
        })
        .collect();
    if notes.is_empty() {
        return finding;
    }
    let note = notes.join("; ");
    match finding {
        Finding::Pass(detail) => Finding::Pass(detail),
        Finding::Fail(detail) => Finding::Fail(format!("{detail} — {note}")),
        Finding::Inapplicable(detail) => Finding::Inapplicable(format!("{detail} — {note}")),
        Finding::NothingToJudge(detail) => Finding::NothingToJudge(detail),
    }
}

/// The last `count` non-empty lines of `text`, joined with ` | ` for a one-line message.
pub(crate) fn one_line_tail(text: &str, count: usize) -> String {
    let mut lines: Vec<&str> = text
        .lines()
        .rev()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(count)
        .collect();
    lines.reverse();
    if lines.is_empty() {
        "(none)".to_owned()
    } else {
        lines.join(" | ")
    }
}

fn process_spec_timeout(spec: &CheckSpec, request: &QaRequest) -> Duration {
    spec.timeout.unwrap_or(request.check_timeout)
}

/// Runs a built-in method. Methods only read files (bounded walks), so they run inline.
fn run_method(
    request: &QaRequest,
    spec: &CheckSpec,
    method: Method,
    trace: Option<&Trace>,
    result: &mut CheckResult,
) -> Finding {
    let started = std::time::Instant::now();
    let context = MethodContext {
        repo: &request.repo,
        prp: request.prp.as_ref(),
        base_docs: request.base_docs.as_ref(),
        trace,
    };
    let outcome = method::run(method, &context);
    result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match outcome {
        MethodOutcome::Measured { metrics, detail } => {
            result.metrics = metrics;
            match evaluation_finding(spec, &result.metrics) {
                Finding::Pass(_) => Finding::Pass(detail),
                Finding::Fail(reason) => Finding::Fail(format!("{reason}: {detail}")),
                other @ (Finding::Inapplicable(_) | Finding::NothingToJudge(_)) => other,
            }
        }
        MethodOutcome::NotApplicable { reason } => Finding::Inapplicable(reason),
        MethodOutcome::NoChange { reason } => Finding::NothingToJudge(reason),
    }
}

fn evaluation_finding(spec: &CheckSpec, metrics: &Metrics) -> Finding {
    match spec.validation.evaluate(metrics) {
        Evaluation::Pass => Finding::Pass(format!("`{}` holds", spec.validation.source())),
        Evaluation::Fail(reason) => Finding::Fail(reason),
        Evaluation::Unmeasured(reason) => Finding::Fail(format!(
            "prpd could not measure {reason}, so `{}` cannot be confirmed",
            spec.validation.source()
        )),
    }
}

/// A command with its placeholders filled.
struct Resolved {
    command: String,
    source: Option<String>,
    /// The command includes the discovered test command, so it must run at least one test.
    runs_tests: bool,
    origin: Origin,
    /// The discovered commands its placeholders were filled with.
    discovered: Vec<Discovered>,
}

/// Who chose the command a check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// The checklist wrote it out: no placeholder.
    Checklist,
    /// A placeholder filled with a command the project declares (its scripts, targets, CI,
    /// configuration, `prpd.toml` or its own tools mapping).
    Project,
    /// Every placeholder filled with a built-in default of the tools mapping: a tool prpd
    /// guessed, which the project may not use at all.
    Fallback,
}

impl Resolved {
    /// The finding when the command's program is not installed (`what` says how prpd knows).
    /// A command the project declares must run, so its missing tool fails the check even when
    /// it is optional; a built-in default whose tool is absent means the project does not use
    /// that tool, so the check does not apply (skipped when optional); the checklist's own
    /// command is the checklist's to mark optional.
    fn tool_missing(&self, spec: &CheckSpec, what: &str) -> Finding {
        match self.origin {
            Origin::Project => Finding::Fail(missing_tool::declared_tool_missing(
                what,
                self.source.as_deref(),
            )),
            Origin::Fallback => Finding::Inapplicable(missing_tool::guessed_tool_missing(
                what,
                self.source.as_deref(),
            )),
            Origin::Checklist => Finding::Inapplicable(format!(
                "the tool is missing: {what}; {}",
                install_hint(spec)
            )),
        }
    }
}

/// A placeholder that discovery could not fill.
struct Missing {
    kind: Option<CommandKind>,
    placeholder: String,
}

impl Missing {
    fn finding(&self, detection: &Detection) -> Finding {
        let stacks = if detection.stacks.is_empty() {
            "no stack was detected".to_owned()
        } else {
            let ids: Vec<&str> = detection
                .stacks
                .iter()
                .map(|stack| stack.id.as_str())
                .collect();
            format!("stacks detected: {}", ids.join(", "))
        };
        match self.kind {
            Some(CommandKind::Test) => Finding::Fail(format!(
                "no test command found ({stacks}); prpd looked in package.json scripts, Makefile and justfile targets, CI configuration, pyproject/tox and the qa-tools-mapping defaults. A repository without tests cannot be approved"
            )),
            Some(kind) => {
                Finding::Inapplicable(format!("no {} command found ({stacks})", kind.name()))
            }
            None => Finding::Fail(format!(
                "unknown placeholder `{}`; known: {}",
                self.placeholder,
                CommandKind::ALL
                    .iter()
                    .map(|kind| format!("{{detected_{}_command}}", kind.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// Fills `{detected_<kind>_command}` placeholders from `detection`.
fn resolve(template: &str, detection: &Detection) -> Result<Resolved, Missing> {
    let mut command = String::new();
    let mut sources = Vec::new();
    let mut runs_tests = false;
    let mut origin = Origin::Checklist;
    let mut filled = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{detected_") {
        let Some(length) = rest[start..].find('}') else {
            break;
        };
        let placeholder = &rest[start..=start + length];
        let name = placeholder
            .trim_start_matches("{detected_")
            .trim_end_matches('}')
            .trim_end_matches("_command");
        let kind = CommandKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name() == name);
        let discovered = kind.and_then(|kind| detection.commands.get(&kind).cloned().flatten());
        let Some(discovered) = discovered else {
            return Err(Missing {
                kind,
                placeholder: placeholder.to_owned(),
            });
        };
        runs_tests |= kind == Some(CommandKind::Test);
        origin = if discovered.fallback && origin != Origin::Project {
            Origin::Fallback
        } else {
            Origin::Project
        };
        command.push_str(&rest[..start]);
        command.push_str(&discovered.command);
        sources.push(discovered.source.clone());
        filled.push(discovered);
        rest = &rest[start + placeholder.len()..];
    }
    command.push_str(rest);
    Ok(Resolved {
        command,
        source: (!sources.is_empty()).then(|| sources.join("; ")),
        runs_tests,
        origin,
        discovered: filled,
    })
}
