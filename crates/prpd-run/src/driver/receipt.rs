//! The driver's side of the receipt (`receipt.rs`): each agent call's usage is counted for the
//! guardrails and written as a receipt line when the call ends, and the line gets what prpd's
//! measurement concluded once the iteration is decided. It stands apart so that the iteration
//! reads as steps and the bookkeeping of cost lives in one place.

use std::path::Path;

use crate::agent::AgentReport;
use crate::gate::GateResult;
use crate::machine::QaVerdict;
use crate::receipt::{self, ReceiptLine};
use crate::record::TokenUsage;
use prpd_base::phase::Phase;

use super::iteration::AgentCall;
use super::{Driver, unix_now};

impl Driver {
    /// Adds the call's usage to the run's counts and its line to the receipt.
    pub(super) fn count_usage(&mut self, call: &AgentCall<'_>, report: &AgentReport) {
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
            wall_seconds: (report.duration.as_secs_f64() * 10.0).round() / 10.0,
            verdict: None,
            reasons: Vec::new(),
        });
    }

    /// Writes what the measurement concluded of `phase`'s iteration `number` on its line.
    pub(super) fn receipt_gate(&mut self, phase: Phase, number: u32, gate: &GateResult) {
        if let Some(line) = self.record.receipt.line_mut(phase, number) {
            if gate.can_exit() {
                line.verdict = Some("done".to_owned());
            } else {
                line.verdict = Some("again".to_owned());
                line.reasons = gate.unmet();
            }
        }
    }

    /// Writes QA's verdict, with the REJECT's blocking items, on the last QA line.
    pub(super) fn receipt_verdict(&mut self, verdict: QaVerdict, blocking: &[String]) {
        let number = self.record.iteration;
        if let Some(line) = self.record.receipt.line_mut(Phase::Qa, number) {
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

    /// Writes what stopped the run (a guardrail, a breaker, an agent that cannot work) on the
    /// last line, when the last call has no verdict of its own.
    pub(super) fn receipt_stop(&mut self, reason: &str) {
        if let Some(line) = self.record.receipt.lines.last_mut()
            && line.verdict.is_none()
        {
            line.verdict = Some("stopped".to_owned());
            line.reasons = vec![reason.to_owned()];
        }
    }
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
