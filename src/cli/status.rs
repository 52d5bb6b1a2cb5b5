//! `prpd status`: every run of the repository in one table (id, PRP, state, QA attempt,
//! worktree, cost so far; a record prpd cannot vouch for is named as refused), then one run at
//! a glance — which run and PRP, where it stands (phase, iteration of this visit, QA attempt),
//! whether a prpd is driving it right now or it was interrupted (a live lock holder, not a
//! leftover lock file), the breakers, the last verdict with its blocking items, what the agents
//! cost, its worktree, and where the reports are.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;

use prpd_base::lock::{self, Holder};
use prpd_base::paths::SessionPaths;
use prpd_qa::runner::MAX_QA_ATTEMPTS;
use prpd_run::driver::Summary;
use prpd_run::machine::{QaVerdict, State};
use prpd_run::record::{RunRecord, ShipProgress, VerdictRecord};
use prpd_watch::control::DaemonView;

/// Whether anything drives the run now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Driving {
    /// A live prpd drives it (holds the run's lock, or is the daemon driving it).
    Running { pid: String },
    /// Nobody drives a run that has work left: it was stopped or killed.
    Interrupted,
    /// ESCALATED: it waits for a human.
    WaitsForHuman,
    /// SHIPPED or ABORTED.
    Finished,
}

impl Driving {
    fn of(record: &RunRecord, holder: Holder) -> Driving {
        match holder {
            Holder::Process { pid } => Driving::Running { pid },
            Holder::Nobody if record.is_finished() => Driving::Finished,
            Holder::Nobody if record.awaits_human() => Driving::WaitsForHuman,
            Holder::Nobody => Driving::Interrupted,
        }
    }
}

/// What `prpd status --json` prints: the run's summary and what only status knows.
#[derive(Debug, Serialize)]
pub struct Status {
    // Serialisation only: the summary's keys, then status's own (no parser reads this back).
    #[serde(flatten)]
    pub summary: Summary,
    pub prp: PathBuf,
    pub driving: Driving,
    /// Iterations finished in the current visit of the current phase.
    pub phase_iterations: u32,
    /// The iteration that runs next (or runs now): `{phase, iteration}`.
    pub next_iteration: Option<NextIteration>,
    pub last_verdict: Option<VerdictRecord>,
    /// The last QA report of the run.
    pub qa_report: Option<PathBuf>,
    /// The dry-run pull request, once SHIP wrote it.
    pub pull_request: Option<PathBuf>,
    /// The run's worktree, while it is there (`None`: it ran in place, or the worktree went
    /// with the run's end).
    pub worktree: Option<PathBuf>,
    /// The daemon (`prpd watch`) of the repository, when one runs.
    pub daemon: Option<DaemonView>,
    /// The PRPs waiting for a run of the daemon.
    pub queue: Vec<PathBuf>,
    /// Every run of the repository, oldest first.
    pub runs: Vec<RunLine>,
}

/// One run in the table of `prpd status`.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    pub run_id: String,
    pub prp: Option<PathBuf>,
    /// `GREEN`, `ESCALATED`, `SHIPPED`, …, or `REFUSED`.
    pub state: String,
    pub attempt: Option<u32>,
    pub worktree: Option<PathBuf>,
    pub cost_usd: Option<f64>,
    /// Why prpd does not trust the run's record (it names the file).
    pub refused: Option<String>,
}

impl RunLine {
    /// The line of run `run_id`, from its record or the reason it was refused.
    pub fn of(run_id: &str, record: Result<&RunRecord, String>) -> RunLine {
        match record {
            Ok(record) => {
                let summary = Summary::of(record);
                RunLine {
                    run_id: run_id.to_owned(),
                    prp: Some(record.prp.clone()),
                    state: summary.state,
                    attempt: Some(summary.attempt),
                    worktree: record.worktree.clone().filter(|path| path.exists()),
                    cost_usd: Some(summary.cost_usd),
                    refused: None,
                }
            }
            Err(refused) => RunLine {
                run_id: run_id.to_owned(),
                prp: None,
                state: "REFUSED".to_owned(),
                attempt: None,
                worktree: None,
                cost_usd: None,
                refused: Some(refused),
            },
        }
    }
}

/// The table of every run, as `prpd status` prints it.
pub fn run_table(runs: &[RunLine]) -> String {
    let mut out = String::from("Runs:\n");
    for line in runs {
        if let Some(why) = &line.refused {
            let _ = writeln!(out, "  {}  REFUSED: {why}", line.run_id);
            continue;
        }
        let cost = line.cost_usd.filter(|cost| *cost > 0.0).map_or_else(
            || "no cost reported".to_owned(),
            |cost| format!("${cost:.4}"),
        );
        let _ = writeln!(
            out,
            "  {}  {}  {}  QA attempt {}  {cost}{}",
            line.run_id,
            line.prp.as_deref().unwrap_or(Path::new("?")).display(),
            line.state,
            line.attempt.unwrap_or(0),
            line.worktree
                .as_ref()
                .map_or_else(String::new, |path| format!("  {}", path.display()))
        );
    }
    out.push('\n');
    out
}

/// The iteration a run continues with.
#[derive(Debug, Serialize)]
pub struct NextIteration {
    pub phase: String,
    pub iteration: u32,
}

impl Status {
    /// The status of `record` in `repo`, with the lock probed to tell running from stopped
    /// (a daemon holds the lock while idle too: then its word says whether it drives the run).
    pub fn of(
        repo: &Path,
        record: &RunRecord,
        daemon: Option<DaemonView>,
        queue: Vec<PathBuf>,
        runs: Vec<RunLine>,
    ) -> Result<Status, lock::LockError> {
        let session = SessionPaths::new(repo);
        let holder = match &daemon {
            Some(daemon) if daemon.driving.contains(&record.run_id) => Holder::Process {
                pid: daemon.pid.to_string(),
            },
            // Not the daemon's: a foreground prpd may drive it.
            Some(_) | None => lock::holder(&session.run(&record.run_id).lock())?,
        };
        let pull_request = session.run_dir(&record.run_id).join("pr.md");
        Ok(Status {
            summary: Summary::of(record),
            prp: record.prp.clone(),
            driving: Driving::of(record, holder),
            phase_iterations: record.iterations_in_phase(),
            next_iteration: record
                .next_iteration()
                .map(|(phase, iteration)| NextIteration {
                    phase: phase.to_string(),
                    iteration,
                }),
            last_verdict: record.verdicts.last().cloned(),
            qa_report: record
                .verdicts
                .iter()
                .rev()
                .find_map(|verdict| verdict.report.clone())
                .or_else(|| record.last_qa_report.clone()),
            pull_request: pull_request.is_file().then_some(pull_request),
            worktree: record.worktree.clone().filter(|path| path.exists()),
            daemon,
            queue,
            runs,
        })
    }

    /// The text `prpd status` prints.
    pub fn render(&self, record: &RunRecord) -> String {
        let summary = &self.summary;
        let mut out = run_table(&self.runs);
        let _ = writeln!(out, "Run:          {}", summary.run_id);
        let _ = writeln!(out, "PRP:          {}", self.prp.display());
        let _ = writeln!(out, "State:        {}", self.state_line());
        if let Some(line) = self.phase_line(record) {
            let _ = writeln!(out, "Phase:        {line}");
        }
        let _ = writeln!(
            out,
            "QA attempt:   {} of {MAX_QA_ATTEMPTS}",
            summary.attempt
        );
        let _ = writeln!(
            out,
            "Iterations:   {} in the run ({} agent invocations)",
            summary.iterations, summary.agent_invocations
        );
        let breakers: Vec<String> = record
            .breakers
            .iter()
            .map(|(phase, breaker)| {
                let counts = if breaker.no_progress + breaker.same_error > 0 {
                    format!(
                        " (no progress {}/{}, same error {}/{})",
                        breaker.no_progress,
                        breaker.thresholds.no_progress,
                        breaker.same_error,
                        breaker.thresholds.same_error
                    )
                } else {
                    String::new()
                };
                format!("{phase} {}{counts}", breaker.state)
            })
            .collect();
        let _ = writeln!(out, "Breakers:     {}", breakers.join(", "));
        match &self.last_verdict {
            None => {
                let _ = writeln!(out, "Last verdict: none yet");
            }
            Some(verdict) => {
                let _ = writeln!(
                    out,
                    "Last verdict: {} (QA attempt {})",
                    match verdict.verdict {
                        QaVerdict::Approve => "APPROVE",
                        QaVerdict::Reject => "REJECT",
                    },
                    verdict.attempt
                );
                for blocking in &verdict.blocking {
                    let _ = writeln!(out, "              - {blocking}");
                }
            }
        }
        let _ = writeln!(out, "Cost:         {}", cost(summary));
        if let Some(path) = &self.worktree {
            let _ = writeln!(out, "Worktree:     {}", path.display());
        }
        if let Some(path) = &self.qa_report {
            let _ = writeln!(out, "QA report:    {}", path.display());
        }
        if let Some(path) = &summary.escalation_report {
            let _ = writeln!(out, "Escalation:   {}", path.display());
        }
        if let Some(reason) = &summary.escalation_reason {
            let _ = writeln!(out, "Why:          {reason}");
        }
        if let Some(ship) = &summary.ship {
            ship_lines(&mut out, ship);
        }
        if let Some(issue) = &summary.escalation_issue {
            let _ = writeln!(out, "Issue:        #{} {}", issue.number, issue.html_url);
        }
        if let Some(path) = &self.pull_request {
            let _ = writeln!(out, "Pull request: {} (its title and body)", path.display());
        }
        out.push_str(&daemon_lines(self.daemon.as_ref(), &self.queue));
        out
    }

    fn state_line(&self) -> String {
        let state = &self.summary.state;
        match &self.driving {
            Driving::Running { pid } => format!("{state}, running (prpd pid {pid})"),
            Driving::Interrupted => format!(
                "{state}, interrupted: no prpd is driving it; `prpd resume` continues from its last saved step"
            ),
            Driving::WaitsForHuman => format!(
                "{state}, waiting for a human: `prpd resume` (after fixing the cause) or `prpd abort`"
            ),
            Driving::Finished => state.clone(),
        }
    }

    fn phase_line(&self, record: &RunRecord) -> Option<String> {
        let finished = match self.phase_iterations {
            1 => "1 iteration finished in this visit".to_owned(),
            count => format!("{count} iterations finished in this visit"),
        };
        match record.state() {
            State::Escalated { from, .. } => Some(format!("{from}, stopped; {finished}")),
            State::Shipped {} | State::Aborted {} => None,
            State::Red {}
            | State::Green {}
            | State::Refactor {}
            | State::Document {}
            | State::Qa {}
            | State::Ship {} => {
                let phase = record.state();
                Some(match (&self.next_iteration, &self.driving) {
                    (Some(next), Driving::Running { .. }) => {
                        format!("{phase}, iteration {} running; {finished}", next.iteration)
                    }
                    (Some(next), _) => format!(
                        "{phase}, iteration {} next (it runs again from its start on resume); {finished}",
                        next.iteration
                    ),
                    (None, _) => format!("{phase}; {finished}"),
                })
            }
        }
    }
}

/// The daemon's lines of `prpd status`: what it does, the queue, its last report.
pub fn daemon_lines(daemon: Option<&DaemonView>, queue: &[PathBuf]) -> String {
    let mut out = String::new();
    match daemon {
        None => {
            let _ = writeln!(out, "Daemon:       not running (`prpd watch` starts it)");
        }
        Some(daemon) => {
            let _ = writeln!(out, "Daemon:       pid {}, {}", daemon.pid, daemon.activity);
            for (run_id, blocked) in &daemon.blocked {
                let _ = writeln!(out, "Blocked:      {run_id}: {blocked}");
            }
            for (run_id, at) in &daemon.cooldown_ends_at {
                let _ = writeln!(
                    out,
                    "Cooldown:     {run_id}: the open breaker gets a probe iteration at {}",
                    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(*at))
                );
            }
            if let Some(report) = &daemon.last_report {
                let _ = writeln!(out, "Last report:  {}", report.display());
            }
        }
    }
    let waiting = if queue.is_empty() {
        "empty".to_owned()
    } else {
        queue
            .iter()
            .map(|prp| prp.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "Queue:        {waiting}");
    out
}

/// The receipt's total in one line; `prpd receipt` shows it call by call.
fn cost(summary: &Summary) -> String {
    let totals = &summary.receipt_totals;
    if totals.calls == 0 {
        return "no agent called yet".to_owned();
    }
    let unknown = match totals.calls_without_cost {
        0 => String::new(),
        count => format!(", {count} of unknown cost"),
    };
    format!(
        "${:.4} for {} agent call(s){unknown}; {} tokens in, {} cache reads, {} out (`prpd receipt {}` for each call)",
        totals.cost_usd,
        totals.calls,
        totals.tokens.input + totals.tokens.cache_write,
        totals.tokens.cache_read,
        totals.tokens.output,
        summary.run_id
    )
}

/// What SHIP did: the branch and commit, the push, the pull request on GitHub and the last
/// wait for its remote checks.
fn ship_lines(out: &mut String, ship: &ShipProgress) {
    let branch = ship.branch.as_deref().unwrap_or("(not yet)");
    let commit = ship.short_commit();
    let pushed = ship.pushed_to.as_ref().map_or_else(
        || {
            format!(
                "not pushed{}",
                ship.not_pushed
                    .as_ref()
                    .map_or_else(String::new, |why| format!(" ({why})"))
            )
        },
        |remote| format!("pushed to {remote}"),
    );
    let _ = writeln!(out, "Shipped:      {branch} at {commit}, {pushed}");
    if let Some(pull) = &ship.github_pull_request {
        let _ = writeln!(out, "On GitHub:    #{} {}", pull.number, pull.html_url);
    }
    if let Some(why) = &ship.no_pull_request {
        let _ = writeln!(out, "No PR:        {why}");
    }
    if let Some(checks) = ship.remote_checks.last() {
        let verdict = if checks.passed() {
            "passed".to_owned()
        } else {
            format!(
                "{} failed, {} pending",
                checks.failed().len(),
                checks.pending().len()
            )
        };
        let _ = writeln!(
            out,
            "Remote CI:    {} checks of {}: {verdict}",
            checks.checks.len(),
            checks.sha.chars().take(7).collect::<String>()
        );
    }
}
