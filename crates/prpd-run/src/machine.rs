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
//! GREEN with the blocking failures as feedback. So does a failed remote check after APPROVE
//! (`[ship] wait_for_checks`): the remote CI is QA's last check, and its REJECT is counted with
//! QA's. The counter counts the REJECTs of the run and resets only on a new run (a new machine)
//! and when a human resumes an escalated run (the daemon's breaker cooldown is not a human and
//! keeps it). APPROVE keeps it, so a remote CI that fails after every APPROVE cannot send the
//! run round the loop forever. The third REJECT escalates.

use std::fmt;

use serde::{Deserialize, Serialize};
use statig::prelude::*;

use prpd_base::phase::Phase;
use prpd_qa::runner::MAX_QA_ATTEMPTS;

mod vocabulary;

pub use vocabulary::{Effect, EscalationReason, Event, QaVerdict};

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
    fn ship(&mut self, context: &mut Vec<Effect>, event: &Event) -> Outcome<State> {
        match event {
            Event::Shipped => {
                context.push(Effect::Complete);
                Transition(State::shipped())
            }
            Event::RemoteChecksFailed { blocking } => self.reject(blocking, context),
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
            | Event::SetupFailed { .. }
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
                | EscalationReason::ShipFailed { .. }
                | EscalationReason::SetupFailed { .. } => Handled,
            },
            Event::HumanAbort => abort(context),
            Event::IterationFinished { .. }
            | Event::Shipped
            | Event::ShipFailed { .. }
            | Event::RemoteChecksFailed { .. }
            | Event::GuardrailReached { .. }
            | Event::FatalAgentError { .. }
            | Event::SetupFailed { .. } => Handled,
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
            Event::SetupFailed { command, message } => escalate(
                phase,
                EscalationReason::SetupFailed {
                    command: command.clone(),
                    message: message.clone(),
                },
                context,
            ),
            Event::HumanAbort => abort(context),
            Event::Shipped
            | Event::ShipFailed { .. }
            | Event::RemoteChecksFailed { .. }
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
        | EscalationReason::ShipFailed { .. }
        | EscalationReason::SetupFailed { .. } => {
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
mod tests;
