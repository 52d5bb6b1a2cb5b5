//! The driver's side of the receipt (`receipt.rs`): each agent call's usage is counted for the
//! guardrails and written as a receipt line when the call ends, and the line gets what prpd's
//! measurement concluded once the iteration is decided, how long that took, and what escalated
//! the run after it. It stands apart so that the iteration reads as steps and the bookkeeping
//! of cost and time lives in one place.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::agent::AgentReport;
use crate::gate::GateResult;
use crate::machine::{EscalationReason, QaVerdict};
use crate::receipt::{self, LineStop, ReceiptLine, StopKind};
use crate::record::TokenUsage;
use prpd_base::phase::Phase;

use super::iteration::AgentCall;
use super::{Driver, unix_now};

impl Driver {
    /// Adds the call's usage to the run's counts and its line to the receipt, with how long
    /// the iteration ran before the call.
    pub(super) fn count_usage(&mut self, call: &AgentCall<'_>, report: &AgentReport) {
        let prepared_seconds = match call.role {
            None => self
                .iteration_started
                .take()
                .map(|started| tenths(started.elapsed().saturating_sub(report.duration))),
            Some(_) => None,
        };
        let model = report.model.clone().or_else(|| call.config.model.clone());
        let (cost_usd, cost) = receipt::cost_of(
            report.usage.as_ref(),
            model.as_deref(),
            &self.context.config.prices,
        );
        let tokens = report.usage.map(|usage| {
            let usage_of_run = &mut self.record.usage;
            usage_of_run.tokens += usage.billed_tokens();
            let kinds = &mut usage_of_run.token_usage;
            kinds.input += usage.input_tokens;
            kinds.cache_write += usage.cache_write_tokens;
            kinds.cache_read += usage.cache_read_tokens;
            kinds.output += usage.output_tokens;
            TokenUsage {
                input: usage.input_tokens,
                cache_write: usage.cache_write_tokens,
                cache_read: usage.cache_read_tokens,
                output: usage.output_tokens,
            }
        });
        self.record.usage.cost_usd += cost_usd.unwrap_or(0.0);
        self.record.receipt.lines.push(ReceiptLine {
            phase: call.phase,
            iteration: call.number,
            attempt: self.record.machine.qa_attempt(),
            started_at: unix_now().saturating_sub(report.duration.as_secs()),
            role: call.role.map(str::to_owned),
            agent: program_name(call.config.command.first().map(String::as_str)),
            model_reported: report.model.is_some(),
            model,
            tokens,
            cost_usd,
            cost,
            wall_seconds: tenths(report.duration),
            verdict: None,
            reasons: Vec::new(),
            prepared_seconds,
            measured_seconds: None,
            stop: None,
        });
        self.call_ended = Some((self.record.receipt.lines.len() - 1, Instant::now()));
    }

    /// Times prpd's measurement of the last call from now: the wait after a provider's limit
    /// is the provider's time, not prpd's.
    pub(super) fn measure_from_now(&mut self) {
        if let Some((_, ended)) = &mut self.call_ended {
            *ended = Instant::now();
        }
    }

    /// Writes what the measurement concluded of `phase`'s iteration `number` on its line, and
    /// how long prpd measured since the call ended. QA's verdict is its gate's, so QA's line
    /// is timed here too: a REJECT that SHIP's remote checks bring later does not lengthen it.
    pub(super) fn receipt_gate(&mut self, phase: Phase, number: u32, gate: &GateResult) {
        let Some(index) = self.record.receipt.position(phase, number) else {
            return;
        };
        let measured_seconds = self
            .call_ended
            .filter(|(line, _)| *line == index)
            .map(|(_, ended)| tenths(ended.elapsed()));
        let line = &mut self.record.receipt.lines[index];
        line.measured_seconds = measured_seconds;
        if gate.can_exit() {
            line.verdict = Some("done".to_owned());
        } else {
            line.verdict = Some("again".to_owned());
            line.reasons = gate.unmet();
        }
    }

    /// Writes QA's verdict, with the REJECT's blocking items, on the last QA line.
    pub(super) fn receipt_verdict(&mut self, verdict: QaVerdict, blocking: &[String]) {
        let number = self.record.iteration;
        if let Some(index) = self.record.receipt.position(Phase::Qa, number) {
            let line = &mut self.record.receipt.lines[index];
            line.verdict = Some(
                match verdict {
                    QaVerdict::Approve => "APPROVE",
                    QaVerdict::Reject => "REJECT",
                }
                .to_owned(),
            );
            line.reasons = match verdict {
                QaVerdict::Approve => Vec::new(),
                QaVerdict::Reject => blocking.to_vec(),
            };
        }
    }

    /// Writes what escalated the run on the last line: always as its `stop`, and as its
    /// verdict and reasons when the last call has no verdict of its own (a guardrail, a budget
    /// or an agent that cannot work stopped it before it was measured).
    pub(super) fn receipt_stop(&mut self, reason: &EscalationReason) {
        let by = match reason {
            EscalationReason::BreakerOpen { .. } => StopKind::Breaker,
            EscalationReason::Guardrail { .. } if self.record.budget_stop.is_some() => {
                StopKind::Budget
            }
            EscalationReason::Guardrail { .. } => StopKind::Guardrail,
            EscalationReason::QaRejectedThrice { .. } => StopKind::QaRejectedThrice,
            EscalationReason::FatalAgent { .. } => StopKind::Agent,
            EscalationReason::ShipFailed { .. } => StopKind::Ship,
            EscalationReason::SetupFailed { .. } => StopKind::Setup,
        };
        let reason = reason.to_string();
        if let Some(line) = self.record.receipt.lines.last_mut() {
            if line.verdict.is_none() {
                line.verdict = Some("stopped".to_owned());
                line.reasons = vec![reason.clone()];
            }
            line.stop = Some(LineStop { by, reason });
        }
    }

    /// Writes how the examiner's call ended on its line, which no gate judges: `done`, or
    /// `stopped` with `trouble`, what kept its tests out.
    pub(super) fn receipt_examiner(&mut self, trouble: Option<&str>) {
        if let Some(line) = self.record.receipt.lines.last_mut()
            && line.role.as_deref() == Some("examiner")
            && line.verdict.is_none()
        {
            match trouble {
                None => line.verdict = Some("done".to_owned()),
                Some(trouble) => {
                    line.verdict = Some("stopped".to_owned());
                    line.reasons = vec![trouble.to_owned()];
                }
            }
        }
    }
}

/// `duration` in seconds, to a tenth.
fn tenths(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 10.0).round() / 10.0
}

/// The program's file name: `claude`, not `/usr/local/bin/claude`.
fn program_name(program: Option<&str>) -> String {
    program
        .map(|program| {
            Path::new(program).file_name().map_or_else(
                || program.to_owned(),
                |name| name.to_string_lossy().into_owned(),
            )
        })
        .unwrap_or_default()
}
