//! prpd's own status blocks: the one written for every iteration (what prpd measured, not what
//! the agent said) and the one announcing a change of the run's state, appended to the status
//! log and printed in the foreground. It stands apart because it is the run's only voice to
//! the terminal and to the log a human reads.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::time::SystemTime;

use crate::breaker::{self, Observation};
use crate::gate;
use crate::machine::{Effect, QaVerdict, State};
use prpd_base::files;
use prpd_base::phase::Phase;
use prpd_base::status_block::{StatusBlock, Value, Verdict};
use prpd_qa::report;
use prpd_qa::runner::MAX_QA_ATTEMPTS;
use prpd_qa::runner::QaOutcome;

use super::{DriveError, Driver, Output};

impl Driver {
    /// prpd's status block for a change of the run's state (shipped, escalated, aborted): to
    /// the status log always, to stdout in the foreground.
    pub(super) fn announce(
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

    /// With [`Output::PhaseLines`], one line on stdout when `effect` (just carried out) ends a
    /// visit of a phase: the phase, its iterations in this visit, and how it ended.
    pub(super) fn print_phase_line(&self, effect: &Effect) {
        if self.context.output != Output::PhaseLines {
            return;
        }
        let iterations = match self.record.iteration {
            1 => "1 iteration".to_owned(),
            count => format!("{count} iterations"),
        };
        let line = match effect {
            Effect::PhaseCompleted { phase } if *phase != Phase::Qa => {
                format!("{:<9} {iterations:<13} complete", phase.to_string())
            }
            Effect::RecordVerdict {
                verdict,
                attempt,
                blocking,
            } => {
                let outcome = match verdict {
                    QaVerdict::Approve => "APPROVE".to_owned(),
                    QaVerdict::Reject => format!("REJECT: {}", first_of(blocking)),
                };
                format!(
                    "{:<9} {iterations:<13} {outcome} (attempt {attempt} of {MAX_QA_ATTEMPTS})",
                    Phase::Qa.to_string()
                )
            }
            Effect::Complete => format!(
                "{:<9} {:<13} {}",
                Phase::Ship.to_string(),
                "",
                self.shipped_line()
            ),
            Effect::Escalate { reason } => {
                let phase = match self.record.state() {
                    State::Escalated { from, .. } => from.to_string(),
                    other => other.to_string(),
                };
                format!("{phase:<9} {iterations:<13} ESCALATED: {reason}")
            }
            Effect::Abort => "ABORTED by a human".to_owned(),
            Effect::PhaseCompleted { .. }
            | Effect::StartPhase { .. }
            | Effect::RunIteration { .. }
            | Effect::WriteFeedback { .. }
            | Effect::ProbeBreaker { .. }
            | Effect::Ship => return,
        };
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }

    /// What SHIP did, in one line: `prp/x at 1a2b3c4, pushed to ./remote.git; pull request in
    /// pr.md`.
    fn shipped_line(&self) -> String {
        let ship = &self.record.ship;
        let branch = ship.branch.as_deref().unwrap_or("no branch");
        let commit = ship.short_commit();
        let pushed = match &ship.pushed_to {
            Some(remote) => format!("pushed to {remote}"),
            None => "not pushed".to_owned(),
        };
        match &ship.github_pull_request {
            Some(pull) => format!(
                "{branch} at {commit}, {pushed}; pull request #{} {}",
                pull.number, pull.html_url
            ),
            None => format!("{branch} at {commit}, {pushed}; pull request in pr.md"),
        }
    }

    pub(super) fn log_blocks(
        &self,
        agent_block: Option<&StatusBlock>,
        own: &StatusBlock,
    ) -> Result<(), DriveError> {
        let path = self.paths().phase_status_log();
        let mut text = String::new();
        if let Some(block) = agent_block {
            let _ = write!(text, "# agent\n{block}");
        }
        let _ = write!(text, "# prpd\n{own}");
        files::append(&path, &text).map_err(|source| DriveError::Write { path, source })
    }

    pub(super) fn print_iteration(
        &self,
        block: &StatusBlock,
        phase: Phase,
        number: u32,
        gate: &gate::GateResult,
        class: breaker::IterationClass,
    ) {
        match self.context.output {
            // The phase lines are the progress already.
            Output::Quiet | Output::PhaseLines => return,
            Output::StatusBlocks => {
                let _ = write!(std::io::stdout().lock(), "{block}");
            }
        }
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

/// The facts prpd's own status block reports for an iteration.
pub(super) struct IterationFacts<'a> {
    pub(super) phase: Phase,
    pub(super) number: u32,
    pub(super) attempt: u32,
    pub(super) observation: &'a Observation,
    pub(super) gate: &'a gate::GateResult,
    pub(super) breaker_state: String,
    pub(super) no_progress: u32,
    pub(super) class: breaker::IterationClass,
    pub(super) note: &'a str,
    pub(super) qa: Option<&'a QaOutcome>,
}

/// prpd's status block for an iteration: what prpd measured, not what the agent said.
pub(super) fn iteration_block(facts: &IterationFacts<'_>) -> StatusBlock {
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
            .set("MEMORY_CONTEXT", report::memory_context(qa.memory.as_ref()))
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

/// The first blocking item, cut to one short line, and how many more there are.
fn first_of(blocking: &[String]) -> String {
    const WIDTH: usize = 72;
    let Some(first) = blocking.first() else {
        return "no blocking item recorded".to_owned();
    };
    let line = first.lines().next().unwrap_or_default();
    let line = line.strip_prefix("blocking check failed: ").unwrap_or(line);
    let mut text: String = line.chars().take(WIDTH).collect();
    if line.chars().count() > WIDTH {
        text.push('…');
    }
    match blocking.len() {
        1 => text,
        count => format!("{text} (+{} more)", count - 1),
    }
}
