//! One iteration of a phase, the policy at the heart of the run: guardrails, then the prompt
//! and its feedback file, then the agent, then prpd's own measurements, then the dual gate and
//! the breaker, whose verdict becomes the event the machine is fed. It stands apart from the
//! effect loop because the loop only persists and dispatches, while this decides.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use crate::agent::{self, AgentError, Invocation};
use crate::breaker::{self, AgentEnd, Observation};
use crate::config::model;
use crate::frozen;
use crate::gate::{self, Signal};
use crate::guardrail;
use crate::machine::Event;
use crate::measure;
use crate::prompt::{self, PromptContext};
use crate::record::AgentObstacles;
use prpd_base::phase::Phase;
use prpd_base::process;
use prpd_base::status_block::{Found, StatusBlock, Verdict};
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::report::{self, Audience};
use prpd_qa::runner::QaOutcome;

use super::measurement::Measurement;
use super::own_time::Part;
use super::status::{IterationFacts, iteration_block};
use super::{DriveError, Driver, json_text, unix_now, write_report};

impl Driver {
    /// One iteration of `phase`: guardrails, the agent, measurements, gates, breaker.
    pub(super) async fn iteration(&mut self, phase: Phase) -> Result<Event, DriveError> {
        if let Some(event) = self.guardrail_event().await {
            return Ok(event);
        }
        let number = self.record.iteration + 1;
        let sequence = self.record.total_iterations() + 1;
        let iteration_dir = self.run_dir().join("iterations").join(format!(
            "{sequence:03}-{}-{number}",
            phase.to_string().to_lowercase()
        ));
        let detection = self.detection()?;

        // QA's verdict is about the tree as it was measured; its fingerprint, taken after the
        // checklist ran (which may write files of its own), tells whether the QA agent changed
        // it afterwards.
        let (tree_before, mut qa_outcome) = if phase == Phase::Qa {
            let outcome = self.qa_pass(&detection, &iteration_dir).await?;
            let before = self.record_tree("after the QA checklist")?;
            (Some(before), Some(outcome))
        } else {
            (None, None)
        };

        let feedback_path = self.run_dir().join("feedback.md");
        let recalled = self.recalled_failures(phase).await;
        let started = Instant::now();
        let prompt = self.prompt(
            phase,
            number,
            &detection,
            qa_outcome.as_ref(),
            &feedback_path,
            &recalled,
        )?;
        self.own_time.add(Part::Prompt, started);
        let report = match self
            .invoke_agent(
                phase,
                number,
                &iteration_dir,
                &feedback_path,
                &prompt,
                &detection,
            )
            .await
        {
            Ok(report) => report,
            Err(error) => {
                return Ok(Event::FatalAgentError {
                    message: format!("{error:#}"),
                });
            }
        };

        let (tree, violations) = self.snapshot_after_agent(phase, number)?;
        let plan_evidence = match phase {
            Phase::Red => self.read_test_plan(&report.answer)?,
            Phase::Green | Phase::Refactor | Phase::Document | Phase::Qa | Phase::Ship => {
                Vec::new()
            }
        };
        if let Some(event) = self.stop_after_agent(phase, &report) {
            return Ok(event);
        }
        if tree_before.is_some_and(|before| before != tree.hash) {
            // The QA agent changed the tree its verdict was about: measure what will ship.
            tracing::warn!("the QA agent modified the working tree; running the checklist again");
            qa_outcome = Some(self.qa_pass(&detection, &iteration_dir).await?);
        }
        let observation = Observation {
            head: measure::head(&self.context.repo),
            tree_hash: tree.hash.clone(),
            tests: None,
            checks_passing: None,
            blocking_failed: None,
            lint_errors: None,
            max_complexity: None,
            error_signature: report.error_signature.clone(),
            agent: report.end,
        };
        let mut measurement = self
            .measure(
                phase,
                &detection,
                &iteration_dir,
                &tree,
                qa_outcome.as_ref(),
                observation,
            )
            .await?;
        measurement.refused = violations;
        measurement.evidence.extend(plan_evidence);
        // Nothing a measurement started outlives the iteration that measured.
        self.stop_leftovers(phase).await;
        let event = self.conclude(
            phase,
            number,
            &iteration_dir,
            &report,
            measurement,
            qa_outcome.as_ref(),
        )?;
        // What prpd's own measurement wrote (a cache, a report git does not ignore) is not the
        // next agent's change: the next iteration is compared with the tree as measured.
        let measured = self.record_tree(&format!("after measuring {phase} iteration {number}"))?;
        if let Some(last) = &mut self.record.last_observation {
            last.tree_hash = measured;
        }
        Ok(event)
    }

    /// Records the model GREEN's or QA's CLI reported, and says so when QA reviewed with the
    /// model GREEN implemented with: the configuration passed the check on names, but the CLI
    /// resolved both to one model (an alias, a default).
    fn same_model_reported(&mut self, phase: Phase, report: &agent::AgentReport) -> Option<String> {
        let model = report.model.as_ref()?;
        if !matches!(phase, Phase::Green | Phase::Qa) {
            return None;
        }
        self.record.reported_models.insert(phase, model.clone());
        let green = self.record.reported_models.get(&Phase::Green)?;
        let qa = self.record.reported_models.get(&Phase::Qa)?;
        (!self.context.config.agents.allow_same_model && model::same(green, qa)).then(|| {
            format!(
                "the QA agent reviewed with the model the GREEN agent implemented with ({qa}, as the CLI reported it); set another `model` in [agents.qa] of prpd.toml, or `allow_same_model = true` in [agents]"
            )
        })
    }

    /// The guardrail the run has reached, if any; waits first when the hourly call limit is
    /// used up. When none is reached the iteration starts: the receipt times what prpd does
    /// before the agent call from here, after any wait.
    async fn guardrail_event(&mut self) -> Option<Event> {
        let limits = &self.context.config.guardrails;
        let active = self.active_base + self.session_start.elapsed().as_secs();
        if let Some(name) = guardrail::reached(limits, &self.record.usage, active) {
            self.record.guardrail = Some(name.clone());
            return Some(Event::GuardrailReached { name });
        }
        if let Some(event) = self.budget_used_up() {
            return Some(event);
        }
        let limits = &self.context.config.guardrails;
        if let Some(wait) = guardrail::rate_limit_wait(limits, &self.record.usage, unix_now()) {
            tracing::warn!(
                wait = %humantime::format_duration(wait),
                "agent call rate limit reached (max_calls_per_hour); waiting"
            );
            tokio::time::sleep(wait).await;
        }
        self.iteration_started = Some(Instant::now());
        None
    }

    /// Writes the feedback file of the iteration (with the past failures `recalled` from
    /// memory) and renders its prompt.
    fn prompt(
        &self,
        phase: Phase,
        number: u32,
        detection: &Detection,
        qa_outcome: Option<&QaOutcome>,
        feedback_path: &Path,
        recalled: &[String],
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
        feedback.extend(recalled.iter().cloned());
        if self.record.evidence_phase == Some(phase) {
            feedback.extend(self.record.evidence.iter().cloned());
        }
        write_report(feedback_path, &feedback_text(phase, &feedback))?;
        let qa_report = match qa_outcome {
            Some(outcome) => Some(self.qa_report_with_docs(outcome)?),
            None => None,
        };
        let custom = self.prompt_override(phase)?;
        Ok(prompt::render(
            custom
                .as_ref()
                .map(|(path, text)| (path.as_path(), text.as_str())),
            &PromptContext {
                phase,
                iteration: number,
                attempt: self.record.machine.qa_attempt(),
                prp_path: &self.record.prp,
                prp_text: &self.context.prp_text,
                feedback: &feedback,
                qa_report: qa_report.as_deref(),
                test_command: detection.command(CommandKind::Test),
                web_plan: self
                    .record
                    .web_plan
                    .as_ref()
                    .map(|state| state.prompt.as_str()),
                requirements: &self.context.prp.requirements,
            },
        )?)
    }

    /// The QA report the QA agent reads, followed by the documentation the run changed, so
    /// that it judges the docs by what was added rather than by what was always there.
    fn qa_report_with_docs(&self, outcome: &QaOutcome) -> Result<String, DriveError> {
        let mut text = report::markdown(outcome, Audience::Run);
        let (changed, patch) = self.documentation_since_base()?;
        text.push_str("\n## Documentation changed since the run started\n\n");
        if changed.is_empty() {
            text.push_str("None.\n");
        } else {
            let lines: Vec<&str> = patch.lines().take(DOCS_DIFF_LINES).collect();
            let cut = if patch.lines().count() > DOCS_DIFF_LINES {
                format!("\n(… cut at {DOCS_DIFF_LINES} lines)")
            } else {
                String::new()
            };
            let _ = write!(text, "```diff\n{}{cut}\n```\n", lines.join("\n"));
        }
        Ok(text)
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
            refused,
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
        let gate = frozen::refuse(gate::evaluate(&measured, signal), &refused);
        self.receipt_gate(phase, number, &gate);
        let class = breaker::classify(phase, self.record.last_observation.as_ref(), &observation);
        let breaker = self
            .record
            .breakers
            .get_mut(&phase)
            .expect("every iterating phase has a breaker");
        let trip = breaker.record(class, number, unix_now());
        let started = Instant::now();
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
        let measured_path = iteration_dir.join("measured.json");
        let measured_json = json_text(
            &measured_path,
            &serde_json::json!({
                "phase": phase,
                "iteration": number,
                "class": format!("{class:?}"),
                "gate_1": gate.gate1.as_ref().err(),
                "gate_2": gate.gate2.as_ref().err(),
                "can_exit": gate.can_exit(),
                "agent_end": format!("{:?}", report.end),
                "agent_note": report.note,
                "frozen_changes_refused": refused,
                "observation": observation,
            }),
        )?;
        write_report(&measured_path, &measured_json)?;
        self.own_time.add(Part::Status, started);
        self.record.iteration = number;
        *self.record.iterations.entry(phase).or_insert(0) += 1;
        self.record.last_observation = Some(observation);
        self.record.evidence_phase = Some(phase);
        self.record.agent_obstacles = AgentObstacles {
            phase: Some(phase),
            denials: report.denials.clone(),
            blockers: report.blockers.clone(),
        };
        let mut evidence = evidence;
        evidence.extend(self.record.agent_obstacles.feedback());
        self.record.evidence = evidence;
        self.write_breakers()?;
        Ok(Event::IterationFinished { gate, trip })
    }

    /// The event that stops the run after the agent's call, when one does: a call that ended
    /// in a way no retry fixes, or a budget its streamed usage crossed (the agent's work so far
    /// is in the snapshot just taken; a resume measures it).
    fn stop_after_agent(&mut self, phase: Phase, report: &agent::AgentReport) -> Option<Event> {
        if let Some(message) = self.fatal_agent_error(phase, report) {
            return Some(Event::FatalAgentError { message });
        }
        report
            .budget_crossed
            .map(|crossing| self.stopped_by_budget(crossing))
    }

    /// Why the agent's call ended in a way no retry fixes, when it did: it could not use its
    /// model at all, or QA reviewed with GREEN's model.
    fn fatal_agent_error(&mut self, phase: Phase, report: &agent::AgentReport) -> Option<String> {
        if let Some(line) = &report.setup_error {
            let table = self.context.config.agents.command_key(phase);
            let cli = agent::cli_of(self.context.config.agents.for_phase(phase));
            let advice = cli.map_or_else(String::new, |cli| format!(" ({})", agent::advice(cli)));
            return Some(format!(
                "the {phase} agent could not use its model: `{line}`; check the provider's key \
                 (a variable the agent may see, through `env` in [agents.{table}]), the endpoint \
                 it is pointed at, and `model`{advice}"
            ));
        }
        self.same_model_reported(phase, report)
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
        detection: &Detection,
    ) -> Result<agent::AgentReport, AgentError> {
        let config = self.context.config.agents.for_phase(phase).clone();
        let extra_env: Vec<(String, String)> = self
            .record
            .last_qa_report
            .iter()
            .filter(|_| phase == Phase::Qa)
            .map(|path| ("PRPD_QA_REPORT".to_owned(), path.display().to_string()))
            .collect();
        let call = AgentCall {
            config: &config,
            phase,
            number,
            iteration_dir,
            feedback_path,
            prompt,
            extra_env: &extra_env,
            role: None,
        };
        self.call_agent(&call, detection).await
    }

    /// Runs the agent `call` configures once, counted against the guardrails like every call.
    pub(super) async fn call_agent(
        &mut self,
        call: &AgentCall<'_>,
        detection: &Detection,
    ) -> Result<agent::AgentReport, AgentError> {
        let AgentCall {
            config,
            phase,
            number,
            iteration_dir,
            feedback_path,
            prompt,
            extra_env,
            role: _,
        } = *call;
        let run_dir = self.run_dir();
        let prp_path = self.context.repo.join(&self.record.prp);
        let group_file = self.paths().agent_group();
        let budget = self.call_budget();
        guardrail::record_call(&mut self.record.usage, unix_now());
        self.record.usage.invocations += 1;
        // Counted before the call: a prpd killed during it must not hand out a free one.
        if let Err(error) = self.save() {
            tracing::warn!(%error, "cannot save the run record before the agent call");
        }
        // What a measurement left running (a test suite's server) is stopped before the agent
        // starts, so that everything alive after the agent's call is the agent's.
        self.stop_leftovers(phase).await;
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
            config,
            iteration_dir,
            extra_env,
            group_file: Some(&group_file),
            commands: &agent::Commands::discovered(detection),
            budget: Some(&budget),
        };
        let invoked = agent::invoke(&invocation).await;
        // No agent process survives its call: what escaped its process group is stopped here,
        // however the agent ended, before prpd measures anything (and before a quota wait).
        self.stop_leftovers(phase).await;
        let report = invoked?;
        self.count_usage(call, &report);
        // What the call spent is saved before anything else can stop prpd: a kill must not
        // forget money spent.
        if let Err(error) = self.save_step() {
            tracing::warn!(%error, "cannot save the run record after the agent call");
        }
        if report.end == AgentEnd::Quota {
            // A transient provider failure (a rate or usage limit, an outage, an overload) is
            // not the agent's doing: neither the breaker nor `max_agent_invocations` counts it.
            // The next iteration checks guardrails, the rate limit and abort requests again
            // before it calls the agent.
            self.record.usage.invocations = self.record.usage.invocations.saturating_sub(1);
            let wait = guardrail::quota_wait(
                self.context.config.breaker.quota_wait,
                report.reset_at,
                unix_now(),
            );
            tracing::warn!(
                %phase,
                wait = %humantime::format_duration(wait),
                "the agent's provider failed for now (rate or usage limit, outage); waiting before the next iteration"
            );
            tokio::time::sleep(wait).await;
            self.measure_from_now();
        }
        Ok(report)
    }

    /// Stops every process that outlived the call that started it (prpd is a child subreaper,
    /// see `process::stop_leftovers`) and warns, naming them, who left them: an agent, or one
    /// of prpd's own measurements (the project's test command starting a daemon is not the
    /// agent's doing).
    async fn stop_leftovers(&mut self, phase: Phase) {
        let started = Instant::now();
        let leftovers = process::stop_leftovers().await;
        for (started_by, stopped) in process::by_starter(&leftovers) {
            tracing::warn!(%phase, %stopped, "{}", started_by.stopped_message());
        }
        self.own_time.add(Part::Sweep, started);
    }
}

/// One agent call: which agent, for which phase and iteration, with which prompt.
#[derive(Clone, Copy)]
pub(super) struct AgentCall<'a> {
    pub config: &'a crate::config::AgentConfig,
    pub phase: Phase,
    pub number: u32,
    pub iteration_dir: &'a Path,
    pub feedback_path: &'a Path,
    pub prompt: &'a str,
    pub extra_env: &'a [(String, String)],
    /// Who is called when it is not the phase's own agent (`examiner`), for the receipt.
    pub role: Option<&'a str>,
}

/// How much of the documentation diff the QA prompt shows.
const DOCS_DIFF_LINES: usize = 200;

/// The `PRPD_FEEDBACK` file: the same list the prompt shows.
fn feedback_text(phase: Phase, feedback: &[String]) -> String {
    format!(
        "# Feedback for the next {phase} iteration\n\n{}\n",
        prompt::feedback_list(feedback)
    )
}
