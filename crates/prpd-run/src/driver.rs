//! The driver carries out the phase machine's effects for one run: it is the only owner of the
//! run record while it works, and the only place where the loop touches the world.
//!
//! Theory of operation. The record holds the effects still to carry out (`pending`). The
//! driver takes the first, carries it out, removes it, feeds the event it produced (if any) to
//! the machine, appends the machine's new effects, and saves the record atomically — in that
//! order, so the record on disk always describes a consistent step: after a kill at any moment
//! the next `prpd resume` carries out the same effect again. An iteration (`RunIteration`) is:
//! guardrails → the agent → prpd's own measurements → the dual gate → the breaker → the
//! machine. The agent's word moves nothing on its own (gate 2 only); the measurements alone
//! move nothing either (gate 1 only).

mod budget;
mod critical_points;
mod dependencies;
mod escalation_issue;
mod examiner;
mod flaky;
mod github;
mod handoff;
mod holdout;
mod iteration;
mod measurement;
mod memory;
mod own_time;
mod phase;
mod proof;
mod proof_report;
mod pull_request;
mod qa;
mod rebase;
mod receipt;
mod remote_checks;
mod setup;
mod ship;
mod snapshots;
mod status;
mod test_plan;
mod verify;
mod web_plan;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::config::Config;
use crate::machine::{Effect, Event};
use crate::prompt::PromptError;
use crate::record::{RunError, RunRecord};
use crate::snapshot::{Snapshot, SnapshotError, Snapshots};
use prpd_base::files;
use prpd_base::paths::{RunPaths, SessionPaths};
use prpd_base::phase::Phase;
use prpd_base::process::ProcessError;
use prpd_prp::Prp;
use prpd_qa::checklist::Checklist;
use prpd_qa::discover::DetectError;
use prpd_qa::method::BaseDocsError;
use prpd_qa::runner::QaError;
use prpd_qa::tools_mapping::ToolsMapping;

pub use handoff::{Summary, write_summary};
pub use holdout::put_back as put_back_held_out;

/// What `prpd resume` does when prpd's own inputs changed since the run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputChanges {
    /// Stop with an error that names the files (the default).
    Refuse,
    /// A human accepts them: freeze the new versions and continue (`--reload-config`).
    Reload,
}

/// What the driver prints while it works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A status block per iteration on stdout, and a progress line on stderr when it is a
    /// terminal.
    StatusBlocks,
    /// One line per phase visit on stdout (phase, iterations, outcome), for `prpd demo`.
    PhaseLines,
    /// Nothing until the end (the caller prints a JSON summary).
    Quiet,
}

/// prpd itself could not carry out an effect (as opposed to a REJECT or a tripped breaker,
/// which are outcomes of the run).
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Record(#[from] RunError),
    #[error("failed to run a measurement command")]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Qa(#[from] QaError),
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    BaseDocs(#[from] BaseDocsError),
    #[error(
        "{} changed since run {run_id} started: a run keeps the configuration it started with, \
         so an agent cannot rewrite the rules it is judged by. Undo the change, or run \
         `prpd resume --reload-config` to continue with it (the run's summary records that)",
        files.join(", ")
    )]
    InputsChanged { run_id: String, files: Vec<String> },
    #[error(
        "the run record asks for an iteration of SHIP, which has none; the record is damaged: abort the run"
    )]
    ShipIteration,
    #[error(
        "prpd's copy of {} with held-out tests ({}) is missing or was changed since prpd \
         wrote it, so the tests QA would put back cannot be trusted; abort the run (`prpd abort`)",
        file.display(),
        stored.display()
    )]
    HoldoutStore { file: PathBuf, stored: PathBuf },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "snapshot {number} of run {run_id} is gone (refs/prpd/{run_id}/{number}): without it \
         prpd cannot tell the agents' work from the rest of the tree, so it does not ship; abort \
         the run"
    )]
    SnapshotGone { run_id: String, number: u32 },
    #[error("a SHIP step stopped unexpectedly")]
    ShipTask(#[source] tokio::task::JoinError),
    #[error(transparent)]
    Worktree(#[from] crate::worktree::WorktreeError),
}

/// Everything a run needs besides its record.
#[derive(Debug)]
pub struct Context {
    /// The tree the run works in: its worktree, or the user's working tree for a run in place.
    pub repo: PathBuf,
    /// The user's repository, where prpd's state (`session`) and memory live.
    pub home: PathBuf,
    pub session: SessionPaths,
    pub config: Config,
    pub checklist: Checklist,
    pub mapping: ToolsMapping,
    pub prp: Prp,
    pub prp_text: String,
    pub output: Output,
}

/// Drives one run until it has no effect left to carry out (SHIPPED, ESCALATED or ABORTED).
#[derive(Debug)]
pub struct Driver {
    context: Context,
    record: RunRecord,
    /// Active seconds of the run when this session started, and when it started.
    active_base: u64,
    session_start: Instant,
    /// The memory, once this session opened it.
    memory: Option<memory::OpenMemory>,
    /// When this session's iteration in progress started (after its guardrails), to time
    /// what prpd did before the agent call (`driver/receipt.rs`).
    iteration_started: Option<Instant>,
    /// The receipt line of this session's last agent call and when the call ended, to time
    /// prpd's measurement of it.
    call_ended: Option<(usize, Instant)>,
    /// The watcher over the run's tree that tells snapshots what changed, started before this
    /// session's first snapshot (`driver/snapshots.rs`).
    tree_watch: snapshots::TreeWatch,
    /// The snapshots this session records and seals through, once opened
    /// (`Driver::recorder`).
    recorder: Option<Snapshots>,
    /// The last snapshot whose files this session listed, with them (`Driver::listed_files`).
    listed: Option<(Snapshot, Arc<BTreeMap<PathBuf, String>>)>,
    /// prpd's own time in this session, part by part.
    own_time: own_time::OwnTime,
}

impl Driver {
    pub fn new(context: Context, record: RunRecord) -> Driver {
        Driver {
            active_base: record.usage.active_seconds,
            own_time: own_time::OwnTime::start(record.total_iterations()),
            context,
            record,
            session_start: Instant::now(),
            memory: None,
            iteration_started: None,
            call_ended: None,
            tree_watch: snapshots::TreeWatch::NotStarted,
            recorder: None,
            listed: None,
        }
    }

    /// The run record as it stands.
    pub fn record(&self) -> &RunRecord {
        &self.record
    }

    /// Feeds a human's event (resume, abort) to the machine and queues its effects.
    pub fn handle_event(&mut self, event: &Event) -> Result<(), DriveError> {
        let effects = self.record.machine.handle(event);
        if effects.is_empty() {
            return self.save();
        }
        match event {
            Event::HumanAbort => self.record.pending.clear(),
            Event::HumanResume => {
                self.record.guardrail = None;
                self.record.escalation_report = None;
                self.record.escalation_issue = None;
                for (phase, breaker) in &mut self.record.breakers {
                    breaker.thresholds = self.context.config.breaker.thresholds(*phase);
                }
            }
            Event::IterationFinished { .. }
            | Event::Shipped
            | Event::ShipFailed { .. }
            | Event::RemoteChecksFailed { .. }
            | Event::GuardrailReached { .. }
            | Event::FatalAgentError { .. }
            | Event::SetupFailed { .. }
            | Event::CooldownElapsed => {}
        }
        self.record.pending.extend(effects);
        self.save()
    }

    /// Carries out pending effects until none is left. Between effects it honours an abort
    /// requested through `.prp-session/abort-requested`.
    pub async fn drive(&mut self) -> Result<(), DriveError> {
        let driven = self.carry_out_pending().await;
        self.close_memory().await;
        self.own_time.log(self.record.total_iterations());
        driven
    }

    async fn carry_out_pending(&mut self) -> Result<(), DriveError> {
        self.drop_stale_caches();
        self.save()?;
        while let Some(effect) = self.record.pending.first().cloned() {
            if self.take_abort_request() {
                self.handle_event(&Event::HumanAbort)?;
                continue;
            }
            tracing::debug!(?effect, "carrying out");
            let event = self.carry_out(&effect).await?;
            self.print_phase_line(&effect);
            self.record.pending.remove(0);
            if let Some(event) = event {
                let effects = self.record.machine.handle(&event);
                self.record.pending.extend(effects);
            }
            // An effect that changed the record alone is saved with the next one: after a
            // kill before that, it is carried out again, to the same end.
            if !only_changes_the_record(&effect) || self.record.pending.is_empty() {
                self.save_step()?;
            }
        }
        Ok(())
    }

    /// Saves the run record before an effect that reaches outside prpd (an agent's call, a
    /// push): flushed to the disk, so that not even a power loss forgets it.
    fn save(&mut self) -> Result<(), DriveError> {
        self.timed_save(true)
    }

    /// Saves the run record after a step of the loop. It is atomic, so a kill, `kill -9`
    /// included, resumes from it; it is not flushed to the disk, since a power loss that loses
    /// it only makes prpd carry out that step again (what reaches outside is saved with
    /// [`Driver::save`]), and in a fast loop waiting for the disk would be most of prpd's time.
    fn save_step(&mut self) -> Result<(), DriveError> {
        self.timed_save(false)
    }

    fn timed_save(&mut self, durable: bool) -> Result<(), DriveError> {
        let started = Instant::now();
        let saved = self.write_record(durable);
        self.own_time.add(own_time::Part::Record, started);
        saved
    }

    /// Writes the run record, sealed first.
    fn write_record(&mut self, durable: bool) -> Result<(), DriveError> {
        let elapsed = self.session_start.elapsed().as_secs();
        self.record.usage.active_seconds = self.active_base + elapsed;
        let path = self.paths().record();
        let json = self.record.to_json(&path)?;
        // Sealed before it is written (see snapshot/seal.rs); a finished run's last record
        // is left sealed alone once it is written.
        self.recorder()?.seal_record(json.as_bytes())?;
        RunRecord::write(&path, &json, durable)?;
        if self.record.is_finished() {
            self.recorder()?.drop_previous_seal()?;
        }
        Ok(())
    }

    /// Whether a human asked (through `prpd abort`) to abort this run; the request names the
    /// run, so a stale request for another run is ignored.
    fn take_abort_request(&self) -> bool {
        let request = self.paths().abort_request();
        std::fs::read_to_string(&request).is_ok_and(|run_id| run_id.trim() == self.record.run_id)
            && std::fs::remove_file(&request).is_ok()
    }

    fn run_dir(&self) -> PathBuf {
        self.context.session.run_dir(&self.record.run_id)
    }

    /// The run's own state files.
    fn paths(&self) -> RunPaths {
        self.context.session.run(&self.record.run_id)
    }

    async fn carry_out(&mut self, effect: &Effect) -> Result<Option<Event>, DriveError> {
        let now = unix_now();
        match effect {
            Effect::StartPhase { phase } => {
                self.start_phase(*phase).await?;
                Ok(None)
            }
            Effect::RunIteration { phase } => match self.set_up().await? {
                Some(stop) => Ok(Some(stop)),
                None => self.iteration(*phase).await.map(Some),
            },
            Effect::WriteFeedback { phase, reasons } => {
                let mut reasons = reasons.clone();
                if *phase == Phase::Green
                    && let Some(report) = &self.record.last_qa_report
                {
                    reasons.push(format!(
                        "QA rejected the work; the full QA report is at {}",
                        report.display()
                    ));
                    self.withhold_from_feedback(&mut reasons)?;
                    self.record.qa_blockers.clone_from(&reasons);
                }
                self.record.feedback.insert(*phase, reasons);
                Ok(None)
            }
            Effect::PhaseCompleted { phase } => {
                self.phase_completed(*phase).await?;
                Ok(None)
            }
            Effect::RecordVerdict {
                verdict,
                attempt,
                blocking,
            } => {
                self.receipt_verdict(*verdict, blocking);
                self.record_verdict(*verdict, *attempt, blocking)?;
                self.remember_verdict(*verdict, *attempt, blocking).await;
                Ok(None)
            }
            Effect::ProbeBreaker { phase } => {
                if let Some(breaker) = self.record.breakers.get_mut(phase) {
                    breaker.probe(now);
                }
                self.write_breakers()?;
                Ok(None)
            }
            Effect::Ship => self.ship().await.map(Some),
            Effect::Complete => {
                self.end_quarantine(flaky::RunEnd::Shipped).await;
                self.put_back_withheld()?;
                self.release_snapshots()?;
                self.announce("COMPLETE", "shipped", &[])?;
                self.write_summary()?;
                self.write_timeline(&self.run_dir())?;
                Ok(None)
            }
            Effect::Abort => {
                self.put_back_withheld()?;
                self.release_snapshots()?;
                self.announce("BLOCKED", "aborted by a human", &[])?;
                self.write_summary()?;
                self.write_timeline(&self.run_dir())?;
                Ok(None)
            }
            Effect::Escalate { reason } => {
                self.receipt_stop(reason);
                let report = self.escalate(reason)?;
                self.remember_escalation(reason).await;
                self.end_quarantine(flaky::RunEnd::Escalated).await;
                self.open_escalation_issue(reason, &report).await?;
                let resume = format!(
                    "escalated: see {}",
                    self.run_dir().join("escalation.md").display()
                );
                self.announce("BLOCKED", &resume, &[reason.to_string()])?;
                Ok(None)
            }
        }
    }

    fn write_breakers(&self) -> Result<(), DriveError> {
        let path = self.paths().circuit_breaker();
        let json = json_text(
            &path,
            &serde_json::json!({
                "run_id": self.record.run_id,
                "breakers": self.record.breakers,
            }),
        )?;
        write_report(&path, &json)
    }
}

/// Whether carrying out `effect` changes the run record and nothing else (no process, no file
/// but the reports made from the record), so that doing it again after a kill comes to the
/// same record.
fn only_changes_the_record(effect: &Effect) -> bool {
    match effect {
        Effect::WriteFeedback { .. } | Effect::ProbeBreaker { .. } => true,
        Effect::StartPhase { .. }
        | Effect::RunIteration { .. }
        | Effect::PhaseCompleted { .. }
        | Effect::RecordVerdict { .. }
        | Effect::Ship
        | Effect::Complete
        | Effect::Escalate { .. }
        | Effect::Abort => false,
    }
}

/// Seconds since the Unix epoch: the clock breakers and run records use.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

fn write_text(path: &Path, text: &str) -> Result<(), DriveError> {
    files::write_atomically(path, text.as_bytes()).map_err(|source| DriveError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), DriveError> {
    write_text(path, &json_text(path, value)?)
}

/// Writes a report the run record can make again (`files::replace`: not flushed to the disk).
fn write_report(path: &Path, text: &str) -> Result<(), DriveError> {
    files::replace(path, text.as_bytes()).map_err(|source| DriveError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// `value` as pretty JSON, to be written to `path`.
fn json_text(path: &Path, value: &impl Serialize) -> Result<String, DriveError> {
    serde_json::to_string_pretty(value).map_err(|error| DriveError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(error),
    })
}
