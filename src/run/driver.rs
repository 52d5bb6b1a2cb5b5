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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::base::config::Config;
use crate::base::files;
use crate::base::paths::SessionPaths;
use crate::base::phase::Phase;
use crate::base::process::ProcessError;
use crate::base::status_block::{Found, StatusBlock, Value, Verdict};
use crate::prp::Prp;
use crate::qa::checklist::{Category, Checklist};
use crate::qa::command::CommandKind;
use crate::qa::discover::{self, DetectError, Detection};
use crate::qa::report;
use crate::qa::runner::{self, CheckStatus, QaError, QaOutcome, QaRequest};
use crate::qa::tools_mapping::ToolsMapping;
use crate::run::agent::{self, AgentError, Invocation};
use crate::run::breaker::{self, AgentEnd, Observation};
use crate::run::escalation;
use crate::run::gate::{self, Measured, Signal};
use crate::run::guardrail;
use crate::run::machine::{Effect, EscalationReason, Event, QaVerdict, State};
use crate::run::measure::{self, Probe};
use crate::run::prompt::{self, PromptContext, PromptError};
use crate::run::record::{RunError, RunRecord, VerdictRecord};

/// How many recent status blocks an escalation report quotes.
const QUOTED_BLOCKS: usize = 3;

/// What the driver prints while it works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A status block per iteration on stdout, and a progress line on stderr when it is a
    /// terminal.
    StatusBlocks,
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
    #[error(
        "the run record asks for an iteration of SHIP, which has none; the record is damaged: abort the run"
    )]
    ShipIteration,
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Everything a run needs besides its record.
#[derive(Debug)]
pub struct Context {
    pub repo: PathBuf,
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
}

impl Driver {
    pub fn new(context: Context, record: RunRecord) -> Driver {
        Driver {
            active_base: record.usage.active_seconds,
            context,
            record,
            session_start: Instant::now(),
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
                for (phase, breaker) in &mut self.record.breakers {
                    breaker.thresholds = self.context.config.breaker.thresholds(*phase);
                }
            }
            Event::IterationFinished { .. }
            | Event::Shipped
            | Event::ShipFailed { .. }
            | Event::GuardrailReached { .. }
            | Event::FatalAgentError { .. }
            | Event::CooldownElapsed => {}
        }
        self.record.pending.extend(effects);
        self.save()
    }

    /// Carries out pending effects until none is left. Between effects it honours an abort
    /// requested through `.prp-session/abort-requested`.
    pub async fn drive(&mut self) -> Result<(), DriveError> {
        self.save()?;
        while let Some(effect) = self.record.pending.first().cloned() {
            if self.take_abort_request() {
                self.handle_event(&Event::HumanAbort)?;
                continue;
            }
            tracing::debug!(?effect, "carrying out");
            let event = self.carry_out(&effect).await?;
            self.record.pending.remove(0);
            if let Some(event) = event {
                let effects = self.record.machine.handle(&event);
                self.record.pending.extend(effects);
            }
            self.save()?;
        }
        Ok(())
    }

    fn save(&mut self) -> Result<(), DriveError> {
        let elapsed = self.session_start.elapsed().as_secs();
        self.record.usage.active_seconds = self.active_base + elapsed;
        self.record.save(&self.context.session.state())?;
        Ok(())
    }

    /// Whether a human asked (through `prpd abort`) to abort this run; the request names the
    /// run, so a stale request for another run is ignored.
    fn take_abort_request(&self) -> bool {
        let request = self.context.session.abort_request();
        std::fs::read_to_string(&request).is_ok_and(|run_id| run_id.trim() == self.record.run_id)
            && std::fs::remove_file(&request).is_ok()
    }

    fn run_dir(&self) -> PathBuf {
        self.context.session.run_dir(&self.record.run_id)
    }

    async fn carry_out(&mut self, effect: &Effect) -> Result<Option<Event>, DriveError> {
        let now = unix_now();
        match effect {
            Effect::StartPhase { phase } => {
                self.start_phase(*phase).await?;
                Ok(None)
            }
            Effect::RunIteration { phase } => self.iteration(*phase).await.map(Some),
            Effect::WriteFeedback { phase, reasons } => {
                let mut reasons = reasons.clone();
                if *phase == Phase::Green
                    && let Some(report) = &self.record.last_qa_report
                {
                    reasons.push(format!(
                        "QA rejected the work; the full QA report is at {}",
                        report.display()
                    ));
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
                self.record_verdict(*verdict, *attempt, blocking)?;
                Ok(None)
            }
            Effect::ProbeBreaker { phase } => {
                if let Some(breaker) = self.record.breakers.get_mut(phase) {
                    breaker.probe(now);
                }
                self.write_breakers()?;
                Ok(None)
            }
            Effect::Ship => self.ship().map(Some),
            Effect::Complete => {
                self.announce("COMPLETE", "shipped", &[])?;
                self.write_summary()?;
                Ok(None)
            }
            Effect::Abort => {
                self.announce("BLOCKED", "aborted by a human", &[])?;
                self.write_summary()?;
                Ok(None)
            }
            Effect::Escalate { reason } => {
                self.escalate(reason)?;
                let resume = format!(
                    "escalated: see {}",
                    self.run_dir().join("escalation.md").display()
                );
                self.announce("BLOCKED", &resume, &[reason.to_string()])?;
                Ok(None)
            }
        }
    }

    async fn start_phase(&mut self, phase: Phase) -> Result<(), DriveError> {
        let now = unix_now();
        if let Some(breaker) = self.record.breakers.get_mut(&phase) {
            breaker.restart(now);
        }
        self.record.iteration = 0;
        let repo = self.context.repo.clone();
        let tree = measure::tree(&repo);
        if phase == Phase::Red && self.record.total_iterations() == 0 {
            self.record.baseline.tests_at_start = tree.test_files.clone();
        }
        let log_dir = self.run_dir().join("measure");
        self.record.last_observation = Some(Observation {
            head: measure::head(&repo, &log_dir).await?,
            tree_hash: tree.hash,
            tests: None,
            checks_passing: None,
            blocking_failed: None,
            lint_errors: None,
            max_complexity: None,
            error_signature: None,
            agent: AgentEnd::Ok,
        });
        self.write_breakers()
    }

    async fn phase_completed(&mut self, phase: Phase) -> Result<(), DriveError> {
        self.record.feedback.remove(&phase);
        match phase {
            Phase::Red => {
                self.freeze_tests();
                self.record.baseline.tests_at_red_end = self
                    .record
                    .last_observation
                    .as_ref()
                    .and_then(|observation| observation.tests)
                    .map(|tests| tests.passing + tests.failing);
            }
            Phase::Green => {
                // Tests GREEN added (after a REJECT, for an uncovered criterion) are held to
                // the same rule as RED's from now on.
                self.freeze_tests();
                self.record.qa_blockers.clear();
                let detection = discover::detect(&self.context.repo, &self.context.mapping)?;
                let log_dir = self.run_dir().join("measure");
                self.record.baseline.complexity_at_green_end =
                    self.probe(&detection, &log_dir).complexity().await?;
            }
            Phase::Refactor | Phase::Document | Phase::Qa | Phase::Ship => {}
        }
        Ok(())
    }

    /// Fixes the test files added or changed since the run started, with their current hashes:
    /// GREEN may not change them afterwards.
    fn freeze_tests(&mut self) {
        let tree = measure::tree(&self.context.repo);
        let changed = tree.changed_tests(&self.record.baseline.tests_at_start);
        self.record.baseline.frozen_tests = changed
            .into_iter()
            .map(|path| gate::FileHash {
                hash: tree.test_files.get(&path).cloned().unwrap_or_default(),
                path,
            })
            .collect();
    }

    fn record_verdict(
        &mut self,
        verdict: QaVerdict,
        attempt: u32,
        blocking: &[String],
    ) -> Result<(), DriveError> {
        self.record.verdicts.push(VerdictRecord {
            attempt,
            verdict,
            blocking: blocking.to_vec(),
            report: self.record.last_qa_report.clone(),
        });
        let state = serde_json::json!({
            "attempt": attempt,
            "last_verdict": verdict,
            "report_path": self.record.last_qa_report,
        });
        write_json(&self.context.session.qa_state(), &state)
    }

    /// One iteration of `phase`: guardrails, the agent, measurements, gates, breaker.
    async fn iteration(&mut self, phase: Phase) -> Result<Event, DriveError> {
        if let Some(event) = self.guardrail_event().await {
            return Ok(event);
        }
        let number = self.record.iteration + 1;
        let sequence = self.record.total_iterations() + 1;
        let iteration_dir = self.run_dir().join("iterations").join(format!(
            "{sequence:03}-{}-{number}",
            phase.to_string().to_lowercase()
        ));
        let repo = self.context.repo.clone();
        let detection = discover::detect(&repo, &self.context.mapping)?;

        // QA's verdict is about the tree as it was measured; its fingerprint tells whether the
        // QA agent changed it afterwards.
        let (tree_before, mut qa_outcome) = if phase == Phase::Qa {
            let before = measure::tree(&repo).hash;
            (
                Some(before),
                Some(self.qa_pass(&detection, &iteration_dir).await?),
            )
        } else {
            (None, None)
        };

        let feedback_path = self.run_dir().join("feedback.md");
        let prompt = self.prompt(
            phase,
            number,
            &detection,
            qa_outcome.as_ref(),
            &feedback_path,
        )?;
        let report = match self
            .invoke_agent(phase, number, &iteration_dir, &feedback_path, &prompt)
            .await
        {
            Ok(report) => report,
            Err(error) => {
                return Ok(Event::FatalAgentError {
                    message: format!("{error:#}"),
                });
            }
        };

        let tree = measure::tree(&repo);
        if tree_before.is_some_and(|before| before != tree.hash) {
            // The QA agent changed the tree its verdict was about: measure what will ship.
            tracing::warn!("the QA agent modified the working tree; running the checklist again");
            qa_outcome = Some(self.qa_pass(&detection, &iteration_dir).await?);
        }
        let observation = Observation {
            head: measure::head(&repo, &iteration_dir).await?,
            tree_hash: tree.hash.clone(),
            tests: None,
            checks_passing: None,
            blocking_failed: None,
            lint_errors: None,
            max_complexity: None,
            error_signature: report.error_signature.clone(),
            agent: report.end,
        };
        let measurement = self
            .measure(
                phase,
                &detection,
                &iteration_dir,
                &tree,
                qa_outcome.as_ref(),
                observation,
            )
            .await?;
        self.conclude(
            phase,
            number,
            &iteration_dir,
            &report,
            measurement,
            qa_outcome.as_ref(),
        )
    }

    /// The guardrail the run has reached, if any; waits first when the hourly call limit is
    /// used up.
    async fn guardrail_event(&mut self) -> Option<Event> {
        let limits = &self.context.config.guardrails;
        let active = self.active_base + self.session_start.elapsed().as_secs();
        if let Some(name) = guardrail::reached(limits, &self.record.usage, active) {
            self.record.guardrail = Some(name.clone());
            return Some(Event::GuardrailReached { name });
        }
        if let Some(wait) = guardrail::rate_limit_wait(limits, &self.record.usage, unix_now()) {
            tracing::warn!(
                wait = %humantime::format_duration(wait),
                "agent call rate limit reached (max_calls_per_hour); waiting"
            );
            tokio::time::sleep(wait).await;
        }
        None
    }

    /// Writes the feedback file of the iteration and renders its prompt.
    fn prompt(
        &self,
        phase: Phase,
        number: u32,
        detection: &Detection,
        qa_outcome: Option<&QaOutcome>,
        feedback_path: &Path,
    ) -> Result<String, DriveError> {
        let mut feedback = self
            .record
            .feedback
            .get(&phase)
            .cloned()
            .unwrap_or_default();
        if phase == Phase::Green {
            for blocker in &self.record.qa_blockers {
                if !feedback.contains(blocker) {
                    feedback.push(blocker.clone());
                }
            }
        }
        if self.record.evidence_phase == Some(phase) {
            feedback.extend(self.record.evidence.iter().cloned());
        }
        write_text(feedback_path, &feedback_text(phase, &feedback))?;
        let qa_report = qa_outcome.map(report::markdown);
        Ok(prompt::render(
            &self.context.repo,
            &PromptContext {
                phase,
                iteration: number,
                attempt: self.record.machine.qa_attempt(),
                prp_path: &self.record.prp,
                prp_text: &self.context.prp_text,
                feedback: &feedback,
                qa_report: qa_report.as_deref(),
                test_command: detection.command(CommandKind::Test),
            },
        )?)
    }

    /// Decides the iteration from what was measured and what the agent said: the dual gate,
    /// the breaker, prpd's status block, and the record.
    fn conclude(
        &mut self,
        phase: Phase,
        number: u32,
        iteration_dir: &Path,
        report: &agent::AgentReport,
        measurement: Measurement,
        qa_outcome: Option<&QaOutcome>,
    ) -> Result<Event, DriveError> {
        let Measurement {
            measured,
            observation,
            evidence,
        } = measurement;
        let agent_block = match &report.status {
            Found::Block(block) => Some(block.clone()),
            Found::None | Found::Malformed(_) => None,
        };
        let signal = Signal {
            exit_signal: agent_block.as_ref().and_then(StatusBlock::exit_signal),
            agent_approves: agent_block
                .as_ref()
                .and_then(StatusBlock::verdict)
                .map(|verdict| verdict == Verdict::Approve),
        };
        let gate = gate::evaluate(&measured, signal);
        let class = breaker::classify(phase, self.record.last_observation.as_ref(), &observation);
        let breaker = self
            .record
            .breakers
            .get_mut(&phase)
            .expect("every iterating phase has a breaker");
        let trip = breaker.record(class, number, unix_now());
        let block = iteration_block(&IterationFacts {
            phase,
            number,
            attempt: self.record.machine.qa_attempt(),
            observation: &observation,
            gate: &gate,
            breaker_state: breaker.state.to_string(),
            no_progress: breaker.no_progress,
            class,
            note: &report.note,
            qa: qa_outcome,
        });
        self.log_blocks(agent_block.as_ref(), &block)?;
        self.print_iteration(&block, phase, number, &gate, class);
        write_json(
            &iteration_dir.join("measured.json"),
            &serde_json::json!({
                "phase": phase,
                "iteration": number,
                "class": format!("{class:?}"),
                "gate_1": gate.gate1.as_ref().err(),
                "gate_2": gate.gate2.as_ref().err(),
                "can_exit": gate.can_exit(),
                "agent_end": format!("{:?}", report.end),
                "agent_note": report.note,
                "observation": observation,
            }),
        )?;
        self.record.iteration = number;
        *self.record.iterations.entry(phase).or_insert(0) += 1;
        self.record.last_observation = Some(observation);
        self.record.evidence_phase = Some(phase);
        self.record.evidence = evidence;
        self.write_breakers()?;
        Ok(Event::IterationFinished { gate, trip })
    }

    /// prpd's own measurement of an iteration of `phase` (gate 1 and the breaker's facts).
    async fn measure(
        &self,
        phase: Phase,
        detection: &Detection,
        iteration_dir: &Path,
        tree: &measure::Tree,
        qa_outcome: Option<&QaOutcome>,
        mut observation: Observation,
    ) -> Result<Measurement, DriveError> {
        let probe = self.probe(detection, iteration_dir);
        let mut evidence = Vec::new();
        let measured = match phase {
            Phase::Red => {
                let tests = probe.tests("tests").await?;
                if let Some(tests) = &tests {
                    observation.tests = tests.run.counts;
                    observation.error_signature = observation
                        .error_signature
                        .or_else(|| tests.error_signature());
                }
                Measured::Red {
                    tests: tests.map(|tests| tests.run),
                    changed_test_files: tree.changed_tests(&self.record.baseline.tests_at_start),
                }
            }
            Phase::Green => {
                let frozen = self.record.baseline.frozen_tests.clone();
                Measured::Green {
                    runs: green_runs(&probe, &mut observation, &mut evidence).await?,
                    current_tests: tree.hashes_of(&frozen),
                    frozen_tests: frozen,
                    tests_at_red_end: self.record.baseline.tests_at_red_end,
                }
            }
            Phase::Refactor => {
                let tests = probe.tests("tests").await?;
                if let Some(tests) = &tests {
                    observation.tests = tests.run.counts;
                    if tests.run.exit_code != Some(0) {
                        evidence.push(test_evidence(tests));
                    }
                }
                let lint = probe.lint().await?;
                if let gate::Lint::Ran { errors, .. } = &lint {
                    observation.lint_errors = *errors;
                }
                let complexity = probe.complexity().await?;
                observation.max_complexity = complexity;
                Measured::Refactor {
                    tests: tests.map(|tests| tests.run),
                    lint,
                    complexity,
                    complexity_at_green_end: self.record.baseline.complexity_at_green_end,
                }
            }
            Phase::Document => {
                let documentation = self.context.checklist.only(Category::Documentation);
                if documentation.checks.is_empty() {
                    return Ok(Measurement {
                        measured: Measured::Document { failed: Vec::new() },
                        observation,
                        evidence,
                    });
                }
                let outcome = self
                    .checklist_run(detection, &documentation, iteration_dir)
                    .await?;
                let failed = blocking_failures(&outcome);
                observation.checks_passing = u32::try_from(outcome.passing()).ok();
                observation.blocking_failed = u32::try_from(failed.len()).ok();
                Measured::Document { failed }
            }
            Phase::Qa => {
                let blocking = qa_outcome
                    .as_ref()
                    .map(|outcome| blocking_failures(outcome))
                    .unwrap_or_default();
                if let Some(outcome) = &qa_outcome {
                    observation.checks_passing = u32::try_from(outcome.passing()).ok();
                    observation.blocking_failed = u32::try_from(blocking.len()).ok();
                    if !blocking.is_empty() {
                        observation.error_signature =
                            Some(breaker::normalise_error(&blocking.join(" | ")));
                    }
                }
                Measured::Qa {
                    blocking_failed: blocking,
                }
            }
            Phase::Ship => return Err(DriveError::ShipIteration),
        };
        Ok(Measurement {
            measured,
            observation,
            evidence,
        })
    }

    /// Runs the agent once; after a rate or usage limit it waits `breaker.quota_wait` (the
    /// iteration is classified as quota, which the breaker does not count).
    async fn invoke_agent(
        &mut self,
        phase: Phase,
        number: u32,
        iteration_dir: &Path,
        feedback_path: &Path,
        prompt: &str,
    ) -> Result<agent::AgentReport, AgentError> {
        let config = self.context.config.agents.for_phase(phase).clone();
        let run_dir = self.run_dir();
        let prp_path = self.context.repo.join(&self.record.prp);
        let group_file = self.context.session.agent_group();
        let extra_env: Vec<(String, String)> = self
            .record
            .last_qa_report
            .iter()
            .filter(|_| phase == Phase::Qa)
            .map(|path| ("PRPD_QA_REPORT".to_owned(), path.display().to_string()))
            .collect();
        guardrail::record_call(&mut self.record.usage, unix_now());
        self.record.usage.invocations += 1;
        // Counted before the call: a prpd killed during it must not hand out a free one.
        if let Err(error) = self.save() {
            tracing::warn!(%error, "cannot save the run record before the agent call");
        }
        let invocation = Invocation {
            phase,
            iteration: number,
            attempt: self.record.machine.qa_attempt(),
            run_id: &self.record.run_id,
            run_dir: &run_dir,
            repo: &self.context.repo,
            prp_path: &prp_path,
            feedback_path,
            prompt,
            config: &config,
            iteration_dir,
            extra_env: &extra_env,
            group_file: Some(&group_file),
        };
        let report = agent::invoke(&invocation).await?;
        if let Some(usage) = &report.usage {
            self.record.usage.tokens += usage.input_tokens + usage.output_tokens;
            self.record.usage.cost_usd += usage.cost_usd.unwrap_or(0.0);
        }
        if report.end == AgentEnd::Quota {
            // Not counted by the breaker; the next iteration checks guardrails, the rate limit
            // and abort requests again before it calls the agent.
            let wait = self.context.config.breaker.quota_wait;
            tracing::warn!(
                %phase,
                wait = %humantime::format_duration(wait),
                "the agent reported a rate or usage limit; waiting before the next iteration"
            );
            tokio::time::sleep(wait).await;
        }
        Ok(report)
    }

    /// prpd's own measurement commands, run with the QA limits, logging into `log_dir`.
    fn probe<'a>(&'a self, detection: &'a Detection, log_dir: &'a Path) -> Probe<'a> {
        Probe {
            repo: &self.context.repo,
            detection,
            log_dir,
            timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
        }
    }

    /// Runs the whole checklist for a QA iteration and writes its report.
    async fn qa_pass(
        &mut self,
        detection: &Detection,
        iteration_dir: &Path,
    ) -> Result<QaOutcome, DriveError> {
        let outcome = self
            .checklist_run(detection, &self.context.checklist, iteration_dir)
            .await?;
        let report_path = iteration_dir.join("qa-report.md");
        write_text(&report_path, &report::markdown(&outcome))?;
        self.record.last_qa_report = Some(report_path);
        Ok(outcome)
    }

    async fn checklist_run(
        &self,
        detection: &Detection,
        checklist: &Checklist,
        iteration_dir: &Path,
    ) -> Result<QaOutcome, DriveError> {
        let request = QaRequest {
            repo: self.context.repo.clone(),
            prp: Some(self.context.prp.clone()),
            prp_path: Some(self.record.prp.clone()),
            jobs: self.context.config.qa.jobs,
            check_timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            run_dir: iteration_dir.to_path_buf(),
            attempt: self.record.machine.qa_attempt(),
        };
        Ok(runner::run(&request, checklist, detection.clone()).await?)
    }

    fn ship(&mut self) -> Result<Event, DriveError> {
        let title = format!("feat: {}", self.context.prp.title);
        let body = self
            .record
            .last_qa_report
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_else(|| "QA report not found.".to_owned());
        let pr = format!(
            "# {title}\n\nImplements `{}` (prpd run `{}`).\n\n{body}",
            self.record.prp.display(),
            self.record.run_id
        );
        let path = self.run_dir().join("pr.md");
        write_text(&path, &pr)?;
        tracing::info!(path = %path.display(), "dry run: the pull request title and body were written");
        Ok(Event::Shipped)
    }

    fn escalate(&mut self, reason: &EscalationReason) -> Result<(), DriveError> {
        let blocks = last_blocks(&self.context.session.phase_status_log(), QUOTED_BLOCKS);
        let text = escalation::render(&self.record, reason, &self.context.repo, &blocks);
        let path = self.run_dir().join("escalation.md");
        write_text(&path, &text)?;
        self.record.escalation_report = Some(path);
        self.write_summary()
    }

    /// prpd's status block for a change of the run's state (shipped, escalated, aborted): to
    /// the status log always, to stdout in the foreground.
    fn announce(
        &self,
        status: &str,
        recommendation: &str,
        blockers: &[String],
    ) -> Result<(), DriveError> {
        let phase = match self.record.state() {
            State::Escalated { from, .. } => *from,
            State::Shipped {} => Phase::Ship,
            other => other
                .phase()
                .or(self.record.evidence_phase)
                .unwrap_or(Phase::Red),
        };
        let mut block = StatusBlock::new();
        block
            .set(
                "TIMESTAMP",
                humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            )
            .set("PHASE", phase.to_string())
            .set("STATUS", status)
            .set("RUN_STATE", self.record.state().to_string())
            .set("ATTEMPT", self.record.machine.qa_attempt())
            .set("BLOCKERS", Value::List(blockers.to_vec()))
            .set("EXIT_SIGNAL", status == "COMPLETE")
            .set("RECOMMENDATION", recommendation);
        self.log_blocks(None, &block)?;
        if self.context.output == Output::StatusBlocks {
            let _ = write!(std::io::stdout().lock(), "{block}");
        }
        Ok(())
    }

    fn write_breakers(&self) -> Result<(), DriveError> {
        write_json(
            &self.context.session.circuit_breaker(),
            &serde_json::json!({
                "run_id": self.record.run_id,
                "breakers": self.record.breakers,
            }),
        )
    }

    fn write_summary(&self) -> Result<(), DriveError> {
        write_json(
            &self.run_dir().join("summary.json"),
            &Summary::of(&self.record),
        )
    }

    fn log_blocks(
        &self,
        agent_block: Option<&StatusBlock>,
        own: &StatusBlock,
    ) -> Result<(), DriveError> {
        let path = self.context.session.phase_status_log();
        let mut text = String::new();
        if let Some(block) = agent_block {
            let _ = write!(text, "# agent\n{block}");
        }
        let _ = write!(text, "# prpd\n{own}");
        files::append(&path, &text).map_err(|source| DriveError::Write { path, source })
    }

    fn print_iteration(
        &self,
        block: &StatusBlock,
        phase: Phase,
        number: u32,
        gate: &gate::GateResult,
        class: breaker::IterationClass,
    ) {
        if self.context.output == Output::Quiet {
            return;
        }
        let _ = write!(std::io::stdout().lock(), "{block}");
        if std::io::stderr().is_terminal() {
            let mark = |ok: bool| if ok { "✓" } else { "✗" };
            let _ = writeln!(
                std::io::stderr().lock(),
                "[{phase} {number}] gate 1 {} · gate 2 {} · {class:?}",
                mark(gate.gate1.is_ok()),
                mark(gate.gate2.is_ok()),
            );
        }
    }
}

/// GREEN runs the tests twice (a flaky pass is no pass); it stops at the first failure.
async fn green_runs(
    probe: &Probe<'_>,
    observation: &mut Observation,
    evidence: &mut Vec<String>,
) -> Result<Vec<gate::TestRun>, DriveError> {
    let mut runs = Vec::new();
    for label in ["tests-1", "tests-2"] {
        let Some(tests) = probe.tests(label).await? else {
            break;
        };
        observation.tests = tests.run.counts;
        if observation.error_signature.is_none() {
            observation.error_signature = tests.error_signature();
        }
        let failed = tests.run.exit_code != Some(0);
        if failed {
            evidence.push(test_evidence(&tests));
        }
        runs.push(tests.run);
        if failed {
            break;
        }
    }
    Ok(runs)
}

/// The failures of blocking checks, as `ID: detail`.
fn blocking_failures(outcome: &QaOutcome) -> Vec<String> {
    outcome
        .checks
        .iter()
        .filter(|check| check.status == CheckStatus::Fail)
        .map(|check| format!("{}: {}", check.id, check.detail))
        .collect()
}

fn test_evidence(tests: &measure::TestMeasurement) -> String {
    let names = if tests.failing.names.is_empty() {
        String::new()
    } else {
        format!("failing tests: {}; ", tests.failing.summary())
    };
    format!(
        "{names}last lines of the test output ({}):\n{}",
        tests.log.display(),
        files::last_lines(&tests.tail, 15)
    )
}

/// The `PRPD_FEEDBACK` file: the same list the prompt shows.
fn feedback_text(phase: Phase, feedback: &[String]) -> String {
    format!(
        "# Feedback for the next {phase} iteration\n\n{}\n",
        prompt::feedback_list(feedback)
    )
}

/// What prpd measured in one iteration.
struct Measurement {
    /// The facts gate 1 is decided on.
    measured: Measured,
    /// The facts the breaker compares between iterations.
    observation: Observation,
    /// Failing test names and output for the next iteration's feedback.
    evidence: Vec<String>,
}

/// The facts prpd's own status block reports for an iteration.
struct IterationFacts<'a> {
    phase: Phase,
    number: u32,
    attempt: u32,
    observation: &'a Observation,
    gate: &'a gate::GateResult,
    breaker_state: String,
    no_progress: u32,
    class: breaker::IterationClass,
    note: &'a str,
    qa: Option<&'a QaOutcome>,
}

/// prpd's status block for an iteration: what prpd measured, not what the agent said.
fn iteration_block(facts: &IterationFacts<'_>) -> StatusBlock {
    let mut block = StatusBlock::new();
    let can_exit = facts.gate.can_exit();
    block
        .set(
            "TIMESTAMP",
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        )
        .set("PHASE", facts.phase.to_string())
        .set("STATUS", if can_exit { "COMPLETE" } else { "IN_PROGRESS" })
        .set("ITERATION", facts.number);
    if let Some(tests) = facts.observation.tests {
        block.set(
            "TESTS",
            Value::Map(vec![
                ("TOTAL".to_owned(), (tests.passing + tests.failing).into()),
                ("PASSING".to_owned(), tests.passing.into()),
                ("FAILING".to_owned(), tests.failing.into()),
            ]),
        );
    }
    if let Some(qa) = facts.qa {
        block
            .set(
                "QA_METRICS",
                Value::Map(vec![
                    ("CHECKS_TOTAL".to_owned(), qa.checks.len().into()),
                    ("CHECKS_PASSING".to_owned(), qa.passing().into()),
                    ("BLOCKING_ISSUES".to_owned(), qa.blocking_failed().into()),
                    ("WARNING_ISSUES".to_owned(), qa.warnings().into()),
                ]),
            )
            .set(
                "VERDICT",
                if qa.verdict == Verdict::Approve && can_exit {
                    "APPROVE"
                } else if qa.verdict == Verdict::Reject {
                    "REJECT"
                } else {
                    "PENDING"
                },
            )
            .set("ATTEMPT", facts.attempt);
    }
    block
        .set(
            "CIRCUIT_BREAKER",
            Value::Map(vec![
                ("STATE".to_owned(), facts.breaker_state.clone().into()),
                ("NO_PROGRESS_COUNT".to_owned(), facts.no_progress.into()),
                (
                    "LAST_ITERATION".to_owned(),
                    format!("{:?}", facts.class).into(),
                ),
            ]),
        )
        .set(
            "DUAL_GATE",
            Value::Map(vec![
                ("GATE_1".to_owned(), facts.gate.gate1.is_ok().into()),
                ("GATE_2".to_owned(), facts.gate.gate2.is_ok().into()),
                ("CAN_EXIT".to_owned(), can_exit.into()),
            ]),
        )
        .set("BLOCKERS", Value::List(facts.gate.unmet()))
        .set("EXIT_SIGNAL", can_exit)
        .set("RECOMMENDATION", facts.note);
    block
}

/// The last `count` blocks of the status log, oldest first.
fn last_blocks(log: &Path, count: usize) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let end = crate::base::status_block::END_DELIMITER;
    let mut blocks: Vec<String> = text
        .split_inclusive(&format!("{end}\n"))
        .filter(|block| block.contains(end))
        .map(str::to_owned)
        .collect();
    let keep = blocks.len().saturating_sub(count);
    blocks.drain(..keep);
    blocks
}

/// Writes `runs/<id>/summary.json` of `record`.
pub fn write_summary(session: &SessionPaths, record: &RunRecord) -> Result<(), DriveError> {
    write_json(
        &session.run_dir(&record.run_id).join("summary.json"),
        &Summary::of(record),
    )
}

/// The final summary of a run: `runs/<id>/summary.json` and `prpd run --json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub run_id: String,
    pub state: String,
    pub phase: Option<Phase>,
    pub attempt: u32,
    pub iterations: u32,
    pub iterations_per_phase: BTreeMap<Phase, u32>,
    pub agent_invocations: u32,
    pub verdicts: Vec<VerdictRecord>,
    pub breakers: BTreeMap<Phase, serde_json::Value>,
    pub guardrail: Option<String>,
    pub escalation_reason: Option<String>,
    pub escalation_report: Option<PathBuf>,
    pub tokens: u64,
    pub cost_usd: f64,
}

impl Summary {
    pub fn of(record: &RunRecord) -> Summary {
        let (phase, escalation_reason) = match record.state() {
            State::Escalated { from, reason } => (Some(*from), Some(reason.to_string())),
            other => (other.phase(), None),
        };
        Summary {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
            phase,
            attempt: record.machine.qa_attempt(),
            iterations: record.total_iterations(),
            iterations_per_phase: record.iterations.clone(),
            agent_invocations: record.usage.invocations,
            verdicts: record.verdicts.clone(),
            breakers: record
                .breakers
                .iter()
                .map(|(phase, breaker)| {
                    (
                        *phase,
                        serde_json::json!({
                            "state": breaker.state.to_string(),
                            "no_progress": breaker.no_progress,
                            "same_error": breaker.same_error,
                            "transitions": breaker.history.len(),
                        }),
                    )
                })
                .collect(),
            guardrail: record.guardrail.clone(),
            escalation_reason,
            escalation_report: record.escalation_report.clone(),
            tokens: record.usage.tokens,
            cost_usd: record.usage.cost_usd,
        }
    }
}

/// Seconds since the Unix epoch: the clock breakers and run records use.
pub(crate) fn unix_now() -> u64 {
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
    let text = serde_json::to_string_pretty(value).map_err(|error| DriveError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(error),
    })?;
    write_text(path, &text)
}
