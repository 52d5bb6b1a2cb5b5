//! The words the phase machine speaks: the [`Event`]s the orchestrator feeds it, the [`Effect`]s
//! it hands back, and the [`EscalationReason`] and [`QaVerdict`] those carry. They live apart
//! from the statig handlers because the orchestrator, the run record and the escalation report
//! all use them without caring how the machine decides; the run record persists the effects and
//! reasons as JSON, so their serde names are part of the on-disk format.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::breaker::{Counter, Trip};
use crate::gate::GateResult;
use prpd_base::phase::Phase;
use prpd_qa::runner::MAX_QA_ATTEMPTS;

/// Why a run stopped and waits for a human. Display says what happened and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EscalationReason {
    /// A phase's circuit breaker opened.
    BreakerOpen {
        /// Which counter reached which threshold.
        trip: Trip,
    },
    /// A guardrail of the run (invocations, wall time, tokens, cost) was reached.
    Guardrail {
        /// The guardrail and its limit, as the config names it.
        name: String,
    },
    /// QA rejected the work for the third time.
    QaRejectedThrice {
        /// The blocking failures of the last REJECT.
        blocking: Vec<String>,
    },
    /// The agent failed in a way another iteration cannot fix (missing binary, bad config).
    FatalAgent {
        /// What failed.
        message: String,
    },
    /// The push or the pull request failed.
    ShipFailed {
        /// What failed.
        message: String,
    },
    /// A `[run] setup` command failed in the run's new worktree.
    SetupFailed {
        /// The command, as prpd.toml gives it.
        command: String,
        /// How it ended, with the tail of its output and where its log is.
        message: String,
    },
}

impl fmt::Display for EscalationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EscalationReason::BreakerOpen { trip } => match trip.counter {
                Counter::PermissionDenied => write!(
                    f,
                    "{trip}: the {} agent's CLI refused what it tried to run; allow the refused \
                     tool calls (listed in the escalation report) in the agent's `command` in \
                     prpd.toml, or change what the agent must run, then run `prpd resume` for \
                     one probe iteration",
                    trip.phase
                ),
                Counter::NoProgress | Counter::SameError => write!(
                    f,
                    "{trip}: the {} agent is stuck; read the last iteration logs in the run \
                     directory, fix what blocks it (or clarify the PRP), then run `prpd resume` for \
                     one probe iteration",
                    trip.phase
                ),
            },
            EscalationReason::Guardrail { name } => write!(
                f,
                "the run reached its guardrail {name}; raise the limit in prpd.toml or narrow \
                 the PRP, then run `prpd resume`"
            ),
            EscalationReason::QaRejectedThrice { blocking } => write!(
                f,
                "QA rejected the work {MAX_QA_ATTEMPTS} times (last blocking failures: {}); \
                 read the QA report, fix the code or clarify the PRP, then run `prpd resume` to \
                 go back to GREEN with a fresh attempt counter",
                if blocking.is_empty() {
                    "none recorded".to_owned()
                } else {
                    blocking.join("; ")
                }
            ),
            EscalationReason::FatalAgent { message } => write!(
                f,
                "the agent failed in a way retrying cannot fix: {message}; fix the agent \
                 configuration in prpd.toml, then run `prpd resume`"
            ),
            // Each message says what to fix, and that `prpd resume` ships again.
            EscalationReason::ShipFailed { message } => write!(f, "shipping failed: {message}"),
            EscalationReason::SetupFailed { command, message } => write!(
                f,
                "the `[run] setup` command `{command}` failed in the run's worktree: {message}; \
                 fix what it needs, then run `prpd resume` (setup runs again); to change the \
                 command, edit `prpd.toml` in the run's worktree and run `prpd resume \
                 --reload-config`"
            ),
        }
    }
}

/// Something that happened, fed to [`PhaseMachine::handle`](super::PhaseMachine::handle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// An iteration of a phase ended: both gates evaluated, the phase's breaker updated.
    IterationFinished {
        /// The dual gate of the iteration; `gate.phase` must be the current phase.
        gate: GateResult,
        /// Set when the iteration opened the phase's breaker.
        trip: Option<Trip>,
    },
    /// The push and the pull request succeeded (or the dry-run PR file was written).
    Shipped,
    /// The push or the pull request failed.
    ShipFailed {
        /// What failed.
        message: String,
    },
    /// The pull request's remote checks (`[ship] wait_for_checks`) finished and some failed:
    /// a QA REJECT, counted like one, back to GREEN with the failed checks as feedback.
    RemoteChecksFailed {
        /// One line per failed check.
        blocking: Vec<String>,
    },
    /// A guardrail of the run was reached.
    GuardrailReached {
        /// The guardrail and its limit.
        name: String,
    },
    /// The agent failed in a way another iteration cannot fix.
    FatalAgentError {
        /// What failed.
        message: String,
    },
    /// A `[run] setup` command failed before the first agent ran.
    SetupFailed {
        /// The command.
        command: String,
        /// How it ended.
        message: String,
    },
    /// A human resumed an escalated run (`prpd resume`). Resets the QA attempt counter.
    HumanResume,
    /// The daemon's breaker cooldown elapsed: resumes a run escalated by an open breaker (one
    /// probe iteration) and is ignored otherwise. Unlike a human resume it keeps the QA attempt
    /// counter.
    CooldownElapsed,
    /// A human aborted the run (`prpd abort`).
    HumanAbort,
}

/// The verdict of a QA iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QaVerdict {
    /// Both gates held: ship.
    Approve,
    /// A blocking check failed: back to GREEN.
    Reject,
}

/// Work the orchestrator carries out after a transition, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Effect {
    /// The run enters `phase` from another phase (forward, or back to GREEN after a REJECT):
    /// restart its breaker (`Breaker::restart`) and take the snapshot its first iteration is
    /// compared with.
    StartPhase {
        /// The phase entered.
        phase: Phase,
    },
    /// Run one iteration of `phase` (agent, then measurements), then send
    /// [`Event::IterationFinished`].
    RunIteration {
        /// The phase to iterate.
        phase: Phase,
    },
    /// Give the next iteration of `phase` this feedback (unmet gate conditions, QA blockers; on
    /// a REJECT, add the QA report).
    WriteFeedback {
        /// The phase whose next prompt gets the feedback.
        phase: Phase,
        /// One sentence per unmet condition.
        reasons: Vec<String>,
    },
    /// `phase` ended with both gates holding: record its end-of-phase measurements for later
    /// gates (RED: the hashes of the test files it fixed; GREEN: the complexity baseline).
    PhaseCompleted {
        /// The phase that ended.
        phase: Phase,
    },
    /// Record a QA verdict (the run record and `qa-state.json`).
    RecordVerdict {
        /// The verdict.
        verdict: QaVerdict,
        /// The attempt it belongs to, 1..=[`MAX_QA_ATTEMPTS`].
        attempt: u32,
        /// The blocking failures (empty on APPROVE).
        blocking: Vec<String>,
    },
    /// Move the phase's `OPEN` breaker to `HALF_OPEN` (`Breaker::probe`) before the probe iteration.
    ProbeBreaker {
        /// The phase whose breaker opened.
        phase: Phase,
    },
    /// Push the branch and open or update the pull request (and wait for its remote checks when
    /// asked), then send [`Event::Shipped`], [`Event::ShipFailed`] or
    /// [`Event::RemoteChecksFailed`].
    Ship,
    /// The run shipped: write the summary and finish.
    Complete,
    /// Stop the run and hand a human the report with this reason.
    Escalate {
        /// Why.
        reason: EscalationReason,
    },
    /// Record the abort (the summary); the run's agent is not running between effects.
    Abort,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breaker::Counter;

    const BLOCKER: &str = "blocking check failed: tests pass";
    const GUARDRAIL: &str = "max_agent_invocations = 40";
    const FATAL: &str = "agent command `claude` not found";
    const SHIP_ERROR: &str = "push rejected: non-fast-forward";

    fn trip(phase: Phase) -> Trip {
        Trip {
            phase,
            counter: Counter::NoProgress,
            count: 3,
            threshold: 3,
        }
    }

    #[test]
    fn escalation_reasons_say_what_to_do() {
        let cases = [
            (
                EscalationReason::BreakerOpen {
                    trip: trip(Phase::Green),
                },
                "the GREEN breaker opened after 3 iterations without measurable progress \
                 (threshold 3): the GREEN agent is stuck; read the last iteration logs in the \
                 run directory, fix what blocks it (or clarify the PRP), then run `prpd resume` \
                 for one probe iteration",
            ),
            (
                EscalationReason::BreakerOpen {
                    trip: Trip {
                        counter: Counter::PermissionDenied,
                        count: 2,
                        threshold: 2,
                        ..trip(Phase::Red)
                    },
                },
                "the RED breaker opened after 2 permission denials (threshold 2): the RED \
                 agent's CLI refused what it tried to run; allow the refused tool calls (listed \
                 in the escalation report) in the agent's `command` in prpd.toml, or change what \
                 the agent must run, then run `prpd resume` for one probe iteration",
            ),
            (
                EscalationReason::Guardrail {
                    name: GUARDRAIL.to_owned(),
                },
                "the run reached its guardrail max_agent_invocations = 40; raise the limit in \
                 prpd.toml or narrow the PRP, then run `prpd resume`",
            ),
            (
                EscalationReason::QaRejectedThrice {
                    blocking: vec![BLOCKER.to_owned(), "lint clean".to_owned()],
                },
                "QA rejected the work 3 times (last blocking failures: blocking check failed: \
                 tests pass; lint clean); read the QA report, fix the code or clarify the PRP, \
                 then run `prpd resume` to go back to GREEN with a fresh attempt counter",
            ),
            (
                EscalationReason::FatalAgent {
                    message: FATAL.to_owned(),
                },
                "the agent failed in a way retrying cannot fix: agent command `claude` not \
                 found; fix the agent configuration in prpd.toml, then run `prpd resume`",
            ),
            (
                EscalationReason::ShipFailed {
                    message: SHIP_ERROR.to_owned(),
                },
                "shipping failed: push rejected: non-fast-forward",
            ),
            (
                EscalationReason::SetupFailed {
                    command: "npm ci".to_owned(),
                    message: "it exited with code 1".to_owned(),
                },
                "the `[run] setup` command `npm ci` failed in the run's worktree: it exited with \
                 code 1; fix what it needs, then run `prpd resume` (setup runs again); to change \
                 the command, edit `prpd.toml` in the run's worktree and run `prpd resume \
                 --reload-config`",
            ),
        ];
        for (reason, expected) in cases {
            assert_eq!(reason.to_string(), expected);
        }
    }
}
