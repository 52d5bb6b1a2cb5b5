//! The phase state machine of a run: RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP, with the
//! terminal states SHIPPED and ABORTED and the waiting state ESCALATED (DESIGN §3).
//!
//! Theory of operation. The machine is pure: the orchestrator feeds it one [`Event`] at a time
//! (what a worker measured or a human asked) and gets back the [`Effect`]s to carry out, in
//! order. Handlers only push effects and return the next state; they never do I/O, and there are
//! no entry or exit actions, because statig runs entry actions again when a persisted machine is
//! initialised. The orchestrator saves the machine (it serialises with serde) before it carries
//! out the effects, so a restart resumes from the last saved step.
//!
//! Built on statig 0.4 in blocking mode: each state is a handler method, `Escalated` carries the
//! phase it stopped in and why as state-local storage, and the QA rejection counter is the
//! machine's shared storage. [`PhaseMachine`] wraps statig's machine so callers see only
//! events, effects and [`State`]. Events that do not apply in a state (a resume while running,
//! anything after SHIPPED or ABORTED, an iteration report for another phase) are ignored: no
//! effect, no state change.
//!
//! An iteration report is decided in this order: both gates hold → the next phase (QA: APPROVE,
//! then SHIP); the breaker tripped → ESCALATED; in QA, gate 1 failed → REJECT; otherwise the
//! unmet conditions become feedback for another iteration of the same phase. So in QA, a clean
//! checklist with a QA agent that withholds `EXIT_SIGNAL` or APPROVE is another QA iteration, not
//! a REJECT (a REJECT needs a measured blocking failure); QA's breaker ends that disagreement.
//!
//! QA attempts: a REJECT (gate 1 of QA fails: a blocking check failed) sends the run back to
//! GREEN with the blocking failures as feedback. The counter counts the REJECTs of the run and
//! resets only on APPROVE, on a new run (a new machine) and when a human resumes an escalated run
//! (the daemon's breaker cooldown is not a human and keeps it). The third REJECT escalates.

use std::fmt;

use serde::{Deserialize, Serialize};
use statig::prelude::*;

use crate::base::phase::Phase;
use crate::qa::runner::MAX_QA_ATTEMPTS;
use crate::run::breaker::Trip;
use crate::run::gate::GateResult;

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
}

impl fmt::Display for EscalationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EscalationReason::BreakerOpen { trip } => write!(
                f,
                "{trip}: the {} agent is stuck; read the last iteration logs in the run \
                 directory, fix what blocks it (or clarify the PRP), then run `prpd resume` for \
                 one probe iteration",
                trip.phase
            ),
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
            EscalationReason::ShipFailed { message } => write!(
                f,
                "shipping failed: {message}; fix the remote, the token or the branch, then run \
                 `prpd resume` to ship again"
            ),
        }
    }
}

/// Something that happened, fed to [`PhaseMachine::handle`].
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
    /// Push the branch and open or update the pull request, then send [`Event::Shipped`] or
    /// [`Event::ShipFailed`].
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

/// The statig shared storage: the only data that lives across states.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
struct Run {
    /// QA REJECTs since the last reset.
    qa_rejections: u32,
}

#[state_machine(
    initial = "State::red()",
    state(derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)),
    superstate(derive(Debug))
)]
impl Run {
    #[state]
    fn red(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        self.working(Phase::Red, context, event)
    }

    #[state]
    fn green(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        self.working(Phase::Green, context, event)
    }

    #[state]
    fn refactor(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        self.working(Phase::Refactor, context, event)
    }

    #[state]
    fn document(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        self.working(Phase::Document, context, event)
    }

    #[state]
    fn qa(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        self.working(Phase::Qa, context, event)
    }

    #[state]
    fn ship(context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        match event {
            Event::Shipped => {
                context.push(Effect::Complete);
                Transition(State::shipped())
            }
            Event::ShipFailed { message } => escalate(
                Phase::Ship,
                EscalationReason::ShipFailed {
                    message: message.clone(),
                },
                context,
            ),
            Event::GuardrailReached { name } => escalate(
                Phase::Ship,
                EscalationReason::Guardrail { name: name.clone() },
                context,
            ),
            Event::HumanAbort => abort(context),
            Event::IterationFinished { .. }
            | Event::FatalAgentError { .. }
            | Event::HumanResume
            | Event::CooldownElapsed => Handled,
        }
    }

    #[state]
    fn shipped() -> Outcome<State> {
        Handled
    }

    #[state]
    #[expect(
        clippy::trivially_copy_pass_by_ref,
        reason = "statig hands state-local storage to handlers by reference"
    )]
    fn escalated(
        &mut self,
        from: &Phase,
        reason: &EscalationReason,
        context: &mut Vec<Effect>,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::HumanResume => {
                self.qa_rejections = 0;
                resume(*from, reason, context)
            }
            Event::CooldownElapsed => match reason {
                EscalationReason::BreakerOpen { .. } => resume(*from, reason, context),
                EscalationReason::Guardrail { .. }
                | EscalationReason::QaRejectedThrice { .. }
                | EscalationReason::FatalAgent { .. }
                | EscalationReason::ShipFailed { .. } => Handled,
            },
            Event::HumanAbort => abort(context),
            Event::IterationFinished { .. }
            | Event::Shipped
            | Event::ShipFailed { .. }
            | Event::GuardrailReached { .. }
            | Event::FatalAgentError { .. } => Handled,
        }
    }

    #[state]
    fn aborted() -> Outcome<State> {
        Handled
    }
}

impl Run {
    /// The shared behaviour of the phases that iterate (RED to QA).
    fn working(
        &mut self,
        phase: Phase,
        context: &mut Vec<Effect>,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::IterationFinished { gate, trip } => {
                if gate.phase != phase {
                    Handled
                } else if gate.can_exit() {
                    self.advance(phase, context)
                } else if let Some(trip) = trip {
                    escalate(
                        phase,
                        EscalationReason::BreakerOpen { trip: trip.clone() },
                        context,
                    )
                } else if let (Phase::Qa, Err(blocking)) = (phase, &gate.gate1) {
                    self.reject(blocking, context)
                } else {
                    context.push(Effect::WriteFeedback {
                        phase,
                        reasons: gate.unmet(),
                    });
                    context.push(Effect::RunIteration { phase });
                    Handled
                }
            }
            Event::GuardrailReached { name } => escalate(
                phase,
                EscalationReason::Guardrail { name: name.clone() },
                context,
            ),
            Event::FatalAgentError { message } => escalate(
                phase,
                EscalationReason::FatalAgent {
                    message: message.clone(),
                },
                context,
            ),
            Event::HumanAbort => abort(context),
            Event::Shipped
            | Event::ShipFailed { .. }
            | Event::HumanResume
            | Event::CooldownElapsed => Handled,
        }
    }

    /// Both gates held in `phase`: move to the next phase (QA: APPROVE and ship).
    fn advance(&mut self, phase: Phase, context: &mut Vec<Effect>) -> Outcome<State> {
        let next = match phase {
            Phase::Red => Phase::Green,
            Phase::Green => Phase::Refactor,
            Phase::Refactor => Phase::Document,
            Phase::Document => Phase::Qa,
            Phase::Qa => Phase::Ship,
            Phase::Ship => return Handled,
        };
        context.push(Effect::PhaseCompleted { phase });
        if phase == Phase::Qa {
            context.push(Effect::RecordVerdict {
                verdict: QaVerdict::Approve,
                attempt: self.qa_attempt(),
                blocking: Vec::new(),
            });
            self.qa_rejections = 0;
        }
        context.push(Effect::StartPhase { phase: next });
        context.push(continue_in(next));
        Transition(state_of(next))
    }

    /// QA's gate 1 failed: REJECT, back to GREEN, or escalate on the last attempt.
    fn reject(&mut self, blocking: &[String], context: &mut Vec<Effect>) -> Outcome<State> {
        context.push(Effect::RecordVerdict {
            verdict: QaVerdict::Reject,
            attempt: self.qa_attempt(),
            blocking: blocking.to_vec(),
        });
        context.push(Effect::WriteFeedback {
            phase: Phase::Green,
            reasons: blocking.to_vec(),
        });
        self.qa_rejections += 1;
        if self.qa_rejections >= MAX_QA_ATTEMPTS {
            escalate(
                Phase::Qa,
                EscalationReason::QaRejectedThrice {
                    blocking: blocking.to_vec(),
                },
                context,
            )
        } else {
            context.push(Effect::StartPhase {
                phase: Phase::Green,
            });
            context.push(Effect::RunIteration {
                phase: Phase::Green,
            });
            Transition(State::green())
        }
    }

    /// The QA attempt in progress, 1..=[`MAX_QA_ATTEMPTS`].
    fn qa_attempt(&self) -> u32 {
        (self.qa_rejections + 1).min(MAX_QA_ATTEMPTS)
    }
}

/// Resumes a run escalated in `from` for `reason`: a probe iteration after an open breaker,
/// GREEN after three REJECTs, otherwise the phase it stopped in.
fn resume(from: Phase, reason: &EscalationReason, context: &mut Vec<Effect>) -> Outcome<State> {
    match reason {
        EscalationReason::BreakerOpen { .. } => {
            context.push(Effect::ProbeBreaker { phase: from });
            context.push(continue_in(from));
            Transition(state_of(from))
        }
        EscalationReason::QaRejectedThrice { .. } => {
            context.push(Effect::StartPhase {
                phase: Phase::Green,
            });
            context.push(Effect::RunIteration {
                phase: Phase::Green,
            });
            Transition(State::green())
        }
        EscalationReason::Guardrail { .. }
        | EscalationReason::FatalAgent { .. }
        | EscalationReason::ShipFailed { .. } => {
            context.push(continue_in(from));
            Transition(state_of(from))
        }
    }
}

/// The effect that keeps a phase going: an iteration, or for SHIP the ship itself.
fn continue_in(phase: Phase) -> Effect {
    match phase {
        Phase::Ship => Effect::Ship,
        Phase::Red | Phase::Green | Phase::Refactor | Phase::Document | Phase::Qa => {
            Effect::RunIteration { phase }
        }
    }
}

fn state_of(phase: Phase) -> State {
    match phase {
        Phase::Red => State::red(),
        Phase::Green => State::green(),
        Phase::Refactor => State::refactor(),
        Phase::Document => State::document(),
        Phase::Qa => State::qa(),
        Phase::Ship => State::ship(),
    }
}

fn escalate(from: Phase, reason: EscalationReason, context: &mut Vec<Effect>) -> Outcome<State> {
    context.push(Effect::Escalate {
        reason: reason.clone(),
    });
    Transition(State::escalated(from, reason))
}

fn abort(context: &mut Vec<Effect>) -> Outcome<State> {
    context.push(Effect::Abort);
    Transition(State::aborted())
}

impl State {
    /// The phase the run is working in, or `None` in SHIPPED, ESCALATED and ABORTED.
    pub fn phase(&self) -> Option<Phase> {
        match self {
            State::Red {} => Some(Phase::Red),
            State::Green {} => Some(Phase::Green),
            State::Refactor {} => Some(Phase::Refactor),
            State::Document {} => Some(Phase::Document),
            State::Qa {} => Some(Phase::Qa),
            State::Ship {} => Some(Phase::Ship),
            State::Shipped {} | State::Escalated { .. } | State::Aborted {} => None,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            State::Red {} => Phase::Red.fmt(f),
            State::Green {} => Phase::Green.fmt(f),
            State::Refactor {} => Phase::Refactor.fmt(f),
            State::Document {} => Phase::Document.fmt(f),
            State::Qa {} => Phase::Qa.fmt(f),
            State::Ship {} => Phase::Ship.fmt(f),
            State::Shipped {} => f.write_str("SHIPPED"),
            State::Escalated { .. } => f.write_str("ESCALATED"),
            State::Aborted {} => f.write_str("ABORTED"),
        }
    }
}

/// The phase machine of one run: feed it events, carry out the effects it returns, persist it
/// with serde (inside the versioned run record) before carrying them out.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PhaseMachine {
    machine: statig::blocking::StateMachine<Run>,
}

impl PhaseMachine {
    /// A new run in RED, and the effects that start it.
    pub fn start() -> (PhaseMachine, Vec<Effect>) {
        let machine = PhaseMachine {
            machine: Run::default().state_machine(),
        };
        let effects = vec![
            Effect::StartPhase { phase: Phase::Red },
            Effect::RunIteration { phase: Phase::Red },
        ];
        (machine, effects)
    }

    /// Handles one event and returns the effects to carry out, in order (empty when the event
    /// does not apply in the current state).
    pub fn handle(&mut self, event: &Event) -> Vec<Effect> {
        let mut effects = Vec::new();
        self.machine.handle_with_context(event, &mut effects);
        effects
    }

    /// The current state.
    pub fn state(&self) -> &State {
        self.machine.state()
    }

    /// The QA attempt in progress (or the last one, once escalated), 1..=[`MAX_QA_ATTEMPTS`].
    pub fn qa_attempt(&self) -> u32 {
        self.machine.inner().qa_attempt()
    }
}

impl fmt::Debug for PhaseMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhaseMachine")
            .field("state", self.state())
            .field("qa_rejections", &self.machine.inner().qa_rejections)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::breaker::Counter;

    const BLOCKER: &str = "blocking check failed: tests pass";
    const NO_SIGNAL: &str = "the agent's status block gave no EXIT_SIGNAL";
    const GUARDRAIL: &str = "max_agent_invocations = 40";
    const FATAL: &str = "agent command `claude` not found";
    const SHIP_ERROR: &str = "push rejected: non-fast-forward";

    fn machine_in(state: &State, qa_rejections: u32) -> PhaseMachine {
        serde_json::from_value(serde_json::json!({
            "shared_storage": { "qa_rejections": qa_rejections },
            "state": state,
        }))
        .expect("a machine deserialises from its parts")
    }

    fn trip(phase: Phase) -> Trip {
        Trip {
            phase,
            counter: Counter::NoProgress,
            count: 3,
            threshold: 3,
        }
    }

    fn finished(
        phase: Phase,
        gate1: Result<(), Vec<String>>,
        gate2: Result<(), String>,
        trip: Option<Trip>,
    ) -> Event {
        Event::IterationFinished {
            gate: GateResult {
                phase,
                gate1,
                gate2,
            },
            trip,
        }
    }

    /// The sample events, by name, for a machine whose current phase is `phase`.
    fn events(phase: Phase) -> Vec<(&'static str, Event)> {
        let other = if phase == Phase::Red {
            Phase::Green
        } else {
            Phase::Red
        };
        vec![
            ("pass", finished(phase, Ok(()), Ok(()), None)),
            (
                "unmet",
                finished(phase, Err(vec![BLOCKER.to_owned()]), Ok(()), None),
            ),
            (
                "signal-only",
                finished(phase, Ok(()), Err(NO_SIGNAL.to_owned()), None),
            ),
            (
                "trip",
                finished(
                    phase,
                    Err(vec![BLOCKER.to_owned()]),
                    Err(NO_SIGNAL.to_owned()),
                    Some(trip(phase)),
                ),
            ),
            ("stale", finished(other, Ok(()), Ok(()), None)),
            ("shipped", Event::Shipped),
            (
                "ship-failed",
                Event::ShipFailed {
                    message: SHIP_ERROR.to_owned(),
                },
            ),
            (
                "guardrail",
                Event::GuardrailReached {
                    name: GUARDRAIL.to_owned(),
                },
            ),
            (
                "fatal",
                Event::FatalAgentError {
                    message: FATAL.to_owned(),
                },
            ),
            ("resume", Event::HumanResume),
            ("cooldown", Event::CooldownElapsed),
            ("abort", Event::HumanAbort),
        ]
    }

    /// Every state the table starts from: name, state, QA rejections so far.
    fn states() -> Vec<(&'static str, State, u32)> {
        vec![
            ("red", State::red(), 0),
            ("green", State::green(), 0),
            ("refactor", State::refactor(), 0),
            ("document", State::document(), 0),
            ("qa", State::qa(), 0),
            ("qa-after-2-rejects", State::qa(), 2),
            ("ship", State::ship(), 0),
            ("shipped", State::shipped(), 0),
            (
                "escalated-breaker",
                State::escalated(
                    Phase::Green,
                    EscalationReason::BreakerOpen {
                        trip: trip(Phase::Green),
                    },
                ),
                1,
            ),
            (
                "escalated-guardrail",
                State::escalated(
                    Phase::Refactor,
                    EscalationReason::Guardrail {
                        name: GUARDRAIL.to_owned(),
                    },
                ),
                1,
            ),
            (
                "escalated-qa",
                State::escalated(
                    Phase::Qa,
                    EscalationReason::QaRejectedThrice {
                        blocking: vec![BLOCKER.to_owned()],
                    },
                ),
                3,
            ),
            (
                "escalated-fatal",
                State::escalated(
                    Phase::Red,
                    EscalationReason::FatalAgent {
                        message: FATAL.to_owned(),
                    },
                ),
                0,
            ),
            (
                "escalated-ship",
                State::escalated(
                    Phase::Ship,
                    EscalationReason::ShipFailed {
                        message: SHIP_ERROR.to_owned(),
                    },
                ),
                0,
            ),
            ("aborted", State::aborted(), 0),
        ]
    }

    /// One expected transition: from state (by name), event (by name), to state, effects, the
    /// QA attempt afterwards.
    type Row = (&'static str, &'static str, State, Vec<Effect>, u32);

    fn escalate_row(
        from_name: &'static str,
        event: &'static str,
        phase: Phase,
        reason: EscalationReason,
        attempt: u32,
    ) -> Row {
        (
            from_name,
            event,
            State::escalated(phase, reason.clone()),
            vec![Effect::Escalate { reason }],
            attempt,
        )
    }

    /// The rows every iterating phase shares: feedback loops, breaker, guardrail, fatal, abort.
    fn iterating_rows(name: &'static str, phase: Phase, attempt: u32) -> Vec<Row> {
        let state = state_of(phase);
        vec![
            (
                name,
                "signal-only",
                state.clone(),
                vec![
                    Effect::WriteFeedback {
                        phase,
                        reasons: vec![NO_SIGNAL.to_owned()],
                    },
                    Effect::RunIteration { phase },
                ],
                attempt,
            ),
            escalate_row(
                name,
                "trip",
                phase,
                EscalationReason::BreakerOpen { trip: trip(phase) },
                attempt,
            ),
            escalate_row(
                name,
                "guardrail",
                phase,
                EscalationReason::Guardrail {
                    name: GUARDRAIL.to_owned(),
                },
                attempt,
            ),
            escalate_row(
                name,
                "fatal",
                phase,
                EscalationReason::FatalAgent {
                    message: FATAL.to_owned(),
                },
                attempt,
            ),
            (
                name,
                "abort",
                State::aborted(),
                vec![Effect::Abort],
                attempt,
            ),
        ]
    }

    fn forward_rows(name: &'static str, phase: Phase, next: Phase) -> Vec<Row> {
        let mut rows = vec![
            (
                name,
                "pass",
                state_of(next),
                vec![
                    Effect::PhaseCompleted { phase },
                    Effect::StartPhase { phase: next },
                    Effect::RunIteration { phase: next },
                ],
                1,
            ),
            (
                name,
                "unmet",
                state_of(phase),
                vec![
                    Effect::WriteFeedback {
                        phase,
                        reasons: vec![BLOCKER.to_owned()],
                    },
                    Effect::RunIteration { phase },
                ],
                1,
            ),
        ];
        rows.extend(iterating_rows(name, phase, 1));
        rows
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one table of cases reads best in one place"
    )]
    fn table() -> Vec<Row> {
        let mut rows = Vec::new();
        rows.extend(forward_rows("red", Phase::Red, Phase::Green));
        rows.extend(forward_rows("green", Phase::Green, Phase::Refactor));
        rows.extend(forward_rows("refactor", Phase::Refactor, Phase::Document));
        rows.extend(forward_rows("document", Phase::Document, Phase::Qa));

        let reject = |attempt| Effect::RecordVerdict {
            verdict: QaVerdict::Reject,
            attempt,
            blocking: vec![BLOCKER.to_owned()],
        };
        let approve = |attempt| Effect::RecordVerdict {
            verdict: QaVerdict::Approve,
            attempt,
            blocking: vec![],
        };
        let feedback_to_green = Effect::WriteFeedback {
            phase: Phase::Green,
            reasons: vec![BLOCKER.to_owned()],
        };
        let approve_effects = |attempt| {
            vec![
                Effect::PhaseCompleted { phase: Phase::Qa },
                approve(attempt),
                Effect::StartPhase { phase: Phase::Ship },
                Effect::Ship,
            ]
        };
        rows.push(("qa", "pass", State::ship(), approve_effects(1), 1));
        rows.push((
            "qa",
            "unmet",
            State::green(),
            vec![
                reject(1),
                feedback_to_green.clone(),
                Effect::StartPhase {
                    phase: Phase::Green,
                },
                Effect::RunIteration {
                    phase: Phase::Green,
                },
            ],
            2,
        ));
        rows.extend(iterating_rows("qa", Phase::Qa, 1));
        rows.push((
            "qa-after-2-rejects",
            "pass",
            State::ship(),
            approve_effects(3),
            1,
        ));
        let thrice = EscalationReason::QaRejectedThrice {
            blocking: vec![BLOCKER.to_owned()],
        };
        rows.push((
            "qa-after-2-rejects",
            "unmet",
            State::escalated(Phase::Qa, thrice.clone()),
            vec![
                reject(3),
                feedback_to_green,
                Effect::Escalate { reason: thrice },
            ],
            3,
        ));
        rows.extend(iterating_rows("qa-after-2-rejects", Phase::Qa, 3));

        rows.push((
            "ship",
            "shipped",
            State::shipped(),
            vec![Effect::Complete],
            1,
        ));
        rows.push(escalate_row(
            "ship",
            "ship-failed",
            Phase::Ship,
            EscalationReason::ShipFailed {
                message: SHIP_ERROR.to_owned(),
            },
            1,
        ));
        rows.push(escalate_row(
            "ship",
            "guardrail",
            Phase::Ship,
            EscalationReason::Guardrail {
                name: GUARDRAIL.to_owned(),
            },
            1,
        ));
        rows.push(("ship", "abort", State::aborted(), vec![Effect::Abort], 1));

        rows.push((
            "escalated-breaker",
            "resume",
            State::green(),
            vec![
                Effect::ProbeBreaker {
                    phase: Phase::Green,
                },
                Effect::RunIteration {
                    phase: Phase::Green,
                },
            ],
            1,
        ));
        rows.push((
            "escalated-breaker",
            "cooldown",
            State::green(),
            vec![
                Effect::ProbeBreaker {
                    phase: Phase::Green,
                },
                Effect::RunIteration {
                    phase: Phase::Green,
                },
            ],
            2,
        ));
        rows.push((
            "escalated-guardrail",
            "resume",
            State::refactor(),
            vec![Effect::RunIteration {
                phase: Phase::Refactor,
            }],
            1,
        ));
        rows.push((
            "escalated-qa",
            "resume",
            State::green(),
            vec![
                Effect::StartPhase {
                    phase: Phase::Green,
                },
                Effect::RunIteration {
                    phase: Phase::Green,
                },
            ],
            1,
        ));
        rows.push((
            "escalated-fatal",
            "resume",
            State::red(),
            vec![Effect::RunIteration { phase: Phase::Red }],
            1,
        ));
        rows.push((
            "escalated-ship",
            "resume",
            State::ship(),
            vec![Effect::Ship],
            1,
        ));
        for (name, attempt) in [
            ("escalated-breaker", 2),
            ("escalated-guardrail", 2),
            ("escalated-qa", 3),
            ("escalated-fatal", 1),
            ("escalated-ship", 1),
        ] {
            rows.push((
                name,
                "abort",
                State::aborted(),
                vec![Effect::Abort],
                attempt,
            ));
        }
        rows
    }

    /// Every state × every event: the rows of [`table`] must happen exactly, and every pair
    /// without a row must be ignored (no effect, no state change, no counter change).
    #[test]
    fn every_state_and_event() {
        let table = table();
        let mut used = vec![false; table.len()];
        for (state_name, state, rejections) in states() {
            let phase = state.phase().unwrap_or(Phase::Red);
            for (event_name, event) in events(phase) {
                let mut machine = machine_in(&state, rejections);
                let attempt_before = machine.qa_attempt();
                let effects = machine.handle(&event);
                let context = format!("{state_name} + {event_name}");
                let row = table
                    .iter()
                    .position(|row| row.0 == state_name && row.1 == event_name);
                if let Some(index) = row {
                    let (_, _, to, expected_effects, attempt) = &table[index];
                    used[index] = true;
                    assert_eq!(machine.state(), to, "{context}");
                    assert_eq!(&effects, expected_effects, "{context}");
                    assert_eq!(machine.qa_attempt(), *attempt, "{context}");
                } else {
                    assert_eq!(machine.state(), &state, "{context}: state changed");
                    assert_eq!(effects, vec![], "{context}: should be ignored");
                    assert_eq!(machine.qa_attempt(), attempt_before, "{context}");
                }
            }
        }
        let unused: Vec<_> = table
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(row, _)| (row.0, row.1))
            .collect();
        assert_eq!(unused, vec![], "rows that match no state/event pair");
    }

    #[test]
    fn start_runs_red() {
        let (machine, effects) = PhaseMachine::start();
        assert_eq!(machine.state(), &State::red());
        assert_eq!(machine.qa_attempt(), 1);
        assert_eq!(
            effects,
            vec![
                Effect::StartPhase { phase: Phase::Red },
                Effect::RunIteration { phase: Phase::Red },
            ]
        );
    }

    #[test]
    fn a_run_goes_from_red_to_shipped() {
        let (mut machine, _) = PhaseMachine::start();
        let mut seen = vec![machine.state().to_string()];
        for phase in Phase::ITERATING {
            machine.handle(&finished(phase, Ok(()), Ok(()), None));
            seen.push(machine.state().to_string());
        }
        machine.handle(&Event::Shipped);
        seen.push(machine.state().to_string());
        assert_eq!(
            seen,
            [
                "RED", "GREEN", "REFACTOR", "DOCUMENT", "QA", "SHIP", "SHIPPED"
            ]
        );
    }

    /// Drives a machine from GREEN through QA and returns what QA's iteration produced.
    fn green_to_qa(machine: &mut PhaseMachine, qa: &Event) -> Vec<Effect> {
        for phase in [Phase::Green, Phase::Refactor, Phase::Document] {
            machine.handle(&finished(phase, Ok(()), Ok(()), None));
        }
        machine.handle(qa)
    }

    #[test]
    fn the_third_reject_escalates_and_resume_starts_a_fresh_count() {
        let reject = finished(Phase::Qa, Err(vec![BLOCKER.to_owned()]), Ok(()), None);
        let (mut machine, _) = PhaseMachine::start();
        machine.handle(&finished(Phase::Red, Ok(()), Ok(()), None));
        for attempt in 1..=2 {
            assert_eq!(machine.qa_attempt(), attempt);
            green_to_qa(&mut machine, &reject);
            assert_eq!(machine.state(), &State::green(), "after reject {attempt}");
        }
        let effects = green_to_qa(&mut machine, &reject);
        assert!(
            matches!(
                machine.state(),
                State::Escalated {
                    from: Phase::Qa,
                    reason: EscalationReason::QaRejectedThrice { .. }
                }
            ),
            "{machine:?}"
        );
        assert!(effects.contains(&Effect::RecordVerdict {
            verdict: QaVerdict::Reject,
            attempt: 3,
            blocking: vec![BLOCKER.to_owned()],
        }));
        machine.handle(&Event::HumanResume);
        assert_eq!(machine.state(), &State::green());
        assert_eq!(machine.qa_attempt(), 1);
    }

    #[test]
    fn approve_resets_the_attempt_counter() {
        let reject = finished(Phase::Qa, Err(vec![BLOCKER.to_owned()]), Ok(()), None);
        let mut machine = machine_in(&State::green(), 0);
        green_to_qa(&mut machine, &reject);
        assert_eq!(machine.qa_attempt(), 2);
        let effects = green_to_qa(&mut machine, &finished(Phase::Qa, Ok(()), Ok(()), None));
        assert!(effects.contains(&Effect::RecordVerdict {
            verdict: QaVerdict::Approve,
            attempt: 2,
            blocking: vec![],
        }));
        assert_eq!(machine.qa_attempt(), 1);
    }

    #[test]
    fn a_persisted_machine_resumes_where_it_stopped() {
        let mut machine = machine_in(&State::qa(), 1);
        machine.handle(&finished(
            Phase::Qa,
            Err(vec![BLOCKER.to_owned()]),
            Err(NO_SIGNAL.to_owned()),
            Some(trip(Phase::Qa)),
        ));
        let json = serde_json::to_string(&machine).expect("a machine serialises");
        assert!(json.contains(r#""from":"QA""#), "{json}");
        assert!(json.contains(r#""qa_rejections":1"#), "{json}");

        let mut restored: PhaseMachine =
            serde_json::from_str(&json).expect("a machine deserialises");
        assert_eq!(restored.state(), machine.state());
        assert_eq!(restored.qa_attempt(), 2);
        assert_eq!(
            restored.handle(&Event::HumanResume),
            vec![
                Effect::ProbeBreaker { phase: Phase::Qa },
                Effect::RunIteration { phase: Phase::Qa },
            ]
        );
        assert_eq!(restored.state(), &State::qa());
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
                "shipping failed: push rejected: non-fast-forward; fix the remote, the token or \
                 the branch, then run `prpd resume` to ship again",
            ),
        ];
        for (reason, expected) in cases {
            assert_eq!(reason.to_string(), expected);
        }
    }

    #[test]
    fn phases_display_and_serialise_in_capitals() {
        let shown: Vec<String> = Phase::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            ["RED", "GREEN", "REFACTOR", "DOCUMENT", "QA", "SHIP"]
        );
        for phase in Phase::ALL {
            assert_eq!(
                serde_json::to_string(&phase).expect("a phase serialises"),
                format!("\"{phase}\"")
            );
        }
    }
}
