//! The run's timeline: where a run spent its time, at a glance. One bar per agent call, sized
//! by how long its iteration took (prpd's work before the call, the call, prpd's measurement
//! after it), coloured by how it ended (gate passed or failed, APPROVE, REJECT, a breaker, a
//! guardrail or budget, another stop, still running), grouped into the phase visits in the order they happened: a REJECT sends the run
//! back to GREEN, and that GREEN is a visit of its own.
//!
//! It is drawn from the receipt (`receipt.rs`), which keeps every call with its times, verdict
//! and what escalated the run; the receipt counts money, the timeline shows time. prpd writes it
//! as `timeline.svg` (`timeline/svg.rs`) beside each QA verdict's report, the escalation report
//! and a shipped run's summary, and it serialises as JSON for a web page. Pure: no I/O.

mod svg;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::machine::State;
use crate::receipt::{ReceiptLine, StopKind};
use crate::record::RunRecord;
use prpd_base::phase::Phase;

/// A run's agent calls in time order, and the phase visits they fall into.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub run_id: String,
    /// The run's state as `prpd status` names it: a phase, SHIPPED, ESCALATED or ABORTED.
    pub state: String,
    /// Why the run escalated, while it waits for a human.
    pub escalation: Option<String>,
    /// One per agent call, in the order of the calls.
    pub bars: Vec<Bar>,
    /// The phase visits in time order, each a run of consecutive bars of one phase and QA
    /// attempt.
    pub visits: Vec<Visit>,
}

/// One agent call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    pub phase: Phase,
    /// The iteration of the phase's visit (the examiner's call: 1).
    pub iteration: u32,
    /// The QA attempt the call belongs to.
    pub attempt: u32,
    /// When the agent call started (Unix seconds); the bar starts `prepared_seconds` earlier.
    pub started_at: u64,
    /// How long the bar is: what prpd did before the call, the call's wall time, and prpd's
    /// measurement after it.
    pub seconds: f64,
    /// What prpd did in the iteration before the call (QA: its checklist), when known.
    pub prepared_seconds: Option<f64>,
    /// The call's wall time.
    pub wall_seconds: f64,
    /// prpd's measurement after the call until its gate was decided, when known.
    pub measured_seconds: Option<f64>,
    pub ending: Ending,
    /// Why it ended so: the unmet gate conditions, the REJECT's blocking checks, what
    /// escalated the run.
    pub reasons: Vec<String>,
    /// Who was called when it was not the phase's own agent (`examiner`).
    pub role: Option<String>,
    /// The program that ran.
    pub agent: String,
    /// The model, as the receipt has it.
    pub model: Option<String>,
}

/// A stay of the run in one phase, from entering it to leaving it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Visit {
    pub phase: Phase,
    /// The QA attempt it belongs to.
    pub attempt: u32,
    /// Its bars are `bars[first_bar..first_bar + bar_count]`.
    pub first_bar: usize,
    pub bar_count: usize,
    /// The sum of its bars' seconds.
    pub seconds: f64,
}

/// How an agent call ended, as the bar's colour says it. Its serde name is the bar's class in
/// the SVG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Both gates held (`done`).
    Passed,
    /// The phase went round again (`again`).
    Failed,
    /// QA approved.
    Approve,
    /// QA rejected (the third REJECT too).
    Reject,
    /// The phase's circuit breaker opened after the call.
    Breaker,
    /// A guardrail (agent calls, wall time) escalated the run.
    Guardrail,
    /// A budget of tokens or dollars was used up.
    Budget,
    /// Anything else stopped the run or the call: an agent that cannot work, a failed SHIP or
    /// setup, an interrupted call never measured.
    Stopped,
    /// The run's last call, not yet decided.
    Running,
}

impl Ending {
    /// Every ending, in the legend's order.
    pub const ALL: [Ending; 9] = [
        Ending::Passed,
        Ending::Failed,
        Ending::Approve,
        Ending::Reject,
        Ending::Breaker,
        Ending::Guardrail,
        Ending::Budget,
        Ending::Stopped,
        Ending::Running,
    ];

    /// What it means, for people.
    pub fn label(self) -> &'static str {
        match self {
            Ending::Passed => "gate passed",
            Ending::Failed => "gate failed",
            Ending::Approve => "APPROVE",
            Ending::Reject => "REJECT",
            Ending::Breaker => "breaker opened",
            Ending::Guardrail => "guardrail reached",
            Ending::Budget => "budget used up",
            Ending::Stopped => "other stop",
            Ending::Running => "still running",
        }
    }

    /// The bar's class in the SVG, its serde name.
    pub fn class(self) -> &'static str {
        match self {
            Ending::Passed => "passed",
            Ending::Failed => "failed",
            Ending::Approve => "approve",
            Ending::Reject => "reject",
            Ending::Breaker => "breaker",
            Ending::Guardrail => "guardrail",
            Ending::Budget => "budget",
            Ending::Stopped => "stopped",
            Ending::Running => "running",
        }
    }

    /// How `line` ended: what escalated the run after it first, else its verdict; a line
    /// without either is `running` when it is the last of a run still working.
    fn of(line: &ReceiptLine, last_of_working_run: bool) -> Ending {
        if let Some(stop) = &line.stop {
            return match stop.by {
                StopKind::Breaker => Ending::Breaker,
                StopKind::Guardrail => Ending::Guardrail,
                StopKind::Budget => Ending::Budget,
                StopKind::QaRejectedThrice => Ending::Reject,
                StopKind::Agent | StopKind::Ship | StopKind::Setup => Ending::Stopped,
            };
        }
        match line.verdict.as_deref() {
            Some("done") => Ending::Passed,
            Some("again") => Ending::Failed,
            Some("APPROVE") => Ending::Approve,
            Some("REJECT") => Ending::Reject,
            None if last_of_working_run => Ending::Running,
            Some(_) | None => Ending::Stopped,
        }
    }
}

impl Timeline {
    /// The timeline of `record` as it stands.
    pub fn of(record: &RunRecord) -> Timeline {
        let working = record.state().phase().is_some();
        let lines = &record.receipt.lines;
        let bars: Vec<Bar> = lines
            .iter()
            .enumerate()
            .map(|(index, line)| Bar::of(line, working && index + 1 == lines.len()))
            .collect();
        let escalation = match record.state() {
            State::Escalated { reason, .. } => Some(reason.to_string()),
            State::Red {}
            | State::Green {}
            | State::Refactor {}
            | State::Document {}
            | State::Qa {}
            | State::Ship {}
            | State::Shipped {}
            | State::Aborted {} => None,
        };
        Timeline {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
            escalation,
            visits: visits(&bars),
            bars,
        }
    }

    /// The seconds of every bar.
    pub fn seconds(&self) -> f64 {
        self.bars.iter().map(|bar| bar.seconds).sum()
    }
}

impl Bar {
    fn of(line: &ReceiptLine, last_of_working_run: bool) -> Bar {
        let mut reasons = line.reasons.clone();
        if let Some(stop) = &line.stop
            && !reasons.contains(&stop.reason)
        {
            reasons.push(stop.reason.clone());
        }
        Bar {
            phase: line.phase,
            iteration: line.iteration,
            attempt: line.attempt,
            started_at: line.started_at,
            seconds: line.prepared_seconds.unwrap_or(0.0)
                + line.wall_seconds
                + line.measured_seconds.unwrap_or(0.0),
            prepared_seconds: line.prepared_seconds,
            wall_seconds: line.wall_seconds,
            measured_seconds: line.measured_seconds,
            ending: Ending::of(line, last_of_working_run),
            reasons,
            role: line.role.clone(),
            agent: line.agent.clone(),
            model: line.model.clone(),
        }
    }
}

/// The visits `bars` fall into: a new one wherever the phase or the QA attempt changes.
fn visits(bars: &[Bar]) -> Vec<Visit> {
    let mut visits: Vec<Visit> = Vec::new();
    for (index, bar) in bars.iter().enumerate() {
        match visits.last_mut() {
            Some(visit) if visit.phase == bar.phase && visit.attempt == bar.attempt => {
                visit.bar_count += 1;
                visit.seconds += bar.seconds;
            }
            Some(_) | None => visits.push(Visit {
                phase: bar.phase,
                attempt: bar.attempt,
                first_bar: index,
                bar_count: 1,
                seconds: bar.seconds,
            }),
        }
    }
    visits
}
