//! What the run hands to humans when it ends: the escalation report quoting the last status
//! blocks, the final summary that `runs/<id>/summary.json` and `prpd run --json` show (with
//! what SHIP did), and the timeline (`timeline.svg`, also written beside each QA verdict's
//! report). It stands apart because these are the run's results, written once, while the rest
//! of the driver works on the run in progress.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::escalation;
use crate::flaky::Sighting;
use crate::machine::{EscalationReason, State};
use crate::receipt::{Receipt, Totals};
use crate::record::{RunRecord, ShipProgress, TokenUsage, VerdictRecord};
use crate::timeline::Timeline;
use prpd_base::paths::SessionPaths;
use prpd_base::phase::Phase;
use prpd_ship::github::IssueRef;

use super::{DriveError, Driver, write_json, write_text};

/// How many recent status blocks an escalation report quotes.
const QUOTED_BLOCKS: usize = 3;

impl Driver {
    /// Writes the escalation report, the summary and the timeline; returns the report's text.
    pub(super) fn escalate(&mut self, reason: &EscalationReason) -> Result<String, DriveError> {
        let blocks = last_blocks(&self.paths().phase_status_log(), QUOTED_BLOCKS);
        let text = escalation::render(&self.record, reason, &self.context.home, &blocks);
        let path = self.run_dir().join("escalation.md");
        write_text(&path, &text)?;
        self.record.escalation_report = Some(path);
        self.write_summary()?;
        self.write_timeline(&self.run_dir())?;
        Ok(text)
    }

    /// Writes the run's timeline as it stands to `dir/timeline.svg`.
    pub(super) fn write_timeline(&self, dir: &Path) -> Result<(), DriveError> {
        write_text(&dir.join("timeline.svg"), &Timeline::of(&self.record).svg())
    }

    pub(super) fn write_summary(&self) -> Result<(), DriveError> {
        write_json(
            &self.run_dir().join("summary.json"),
            &Summary::of(&self.record),
        )
    }
}

/// The last `count` blocks of the status log, oldest first.
fn last_blocks(log: &Path, count: usize) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let end = prpd_base::status_block::END_DELIMITER;
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
    /// The GitHub issue prpd opened with the escalation report (`[ship] issue_on_escalation`).
    pub escalation_issue: Option<IssueRef>,
    /// The tokens `max_tokens` counts: fresh input, cache writes and output.
    pub tokens: u64,
    /// Every token reported, by kind (`input`, `cache_write`, `cache_read`, `output`).
    pub token_usage: TokenUsage,
    /// The agents' known cost (reported by their CLIs, else priced from `[prices]`), summed,
    /// to a millionth of a dollar (a sum of floats carries noise such as
    /// `0.060000000000000005`).
    pub cost_usd: f64,
    /// One line per agent call: model, tokens, cost, time, verdict, why again.
    pub receipt: Receipt,
    /// The receipt's sums, with the calls of unknown cost counted apart.
    pub receipt_totals: Totals,
    /// The tests seen failing and passing on one tree in this run, with where they first
    /// flipped (`flaky.rs`).
    pub flaky: BTreeMap<String, Sighting>,
    /// The changes to prpd's own inputs a human accepted with `prpd resume --reload-config`.
    pub config_reloads: Vec<String>,
    /// What SHIP did: the commit, the branch, where it was pushed, the pull request's file and
    /// its number and URL on GitHub, every wait for the remote checks (`null` until SHIP
    /// starts).
    pub ship: Option<ShipProgress>,
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
            config_reloads: record.config_reloads.clone(),
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
            escalation_issue: record.escalation_issue.clone(),
            tokens: record.usage.tokens,
            token_usage: record.usage.token_usage,
            cost_usd: (record.usage.cost_usd * 1e6).round() / 1e6,
            receipt: record.receipt.clone(),
            receipt_totals: record.receipt.totals(),
            flaky: record.flaky.seen.clone(),
            ship: record.ship.started().then(|| record.ship.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::Config;

    #[test]
    fn the_summed_cost_is_given_to_a_millionth_of_a_dollar() {
        let mut record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            7,
            &Config::default().breaker,
        );
        for cost in [0.1, 0.2] {
            record.usage.cost_usd += cost;
        }
        assert_eq!(record.usage.cost_usd.to_string(), "0.30000000000000004");
        assert_eq!(Summary::of(&record).cost_usd.to_string(), "0.3");
    }
}
