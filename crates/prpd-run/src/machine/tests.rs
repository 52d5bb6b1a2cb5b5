//! The phase machine's transitions, tested as a table of every state against every event plus
//! a few whole-run scenarios (REJECT counting, APPROVE, a persisted machine resuming, how states
//! and phases show). They sit in their own file because the table alone is longer than the
//! machine it checks.

use super::*;
use crate::breaker::{Counter, Trip};
use crate::gate::GateResult;

const BLOCKER: &str = "blocking check failed: tests pass";
const NO_SIGNAL: &str = "the agent's status block gave no EXIT_SIGNAL";
const GUARDRAIL: &str = "max_agent_invocations = 40";
const FATAL: &str = "agent command `claude` not found";
const SETUP: &str = "npm ci";
const SHIP_ERROR: &str = "push rejected: non-fast-forward";
const REMOTE_BLOCKER: &str = "remote check `ci / test` failed: failure";

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
            "remote-failed",
            Event::RemoteChecksFailed {
                blocking: vec![BLOCKER.to_owned()],
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
        (
            "setup",
            Event::SetupFailed {
                command: SETUP.to_owned(),
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
        escalate_row(
            name,
            "setup",
            phase,
            EscalationReason::SetupFailed {
                command: SETUP.to_owned(),
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
    // APPROVE keeps the count: a REJECT by the remote CI after it is the run's next.
    rows.push((
        "qa-after-2-rejects",
        "pass",
        State::ship(),
        approve_effects(3),
        3,
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
            feedback_to_green.clone(),
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
    rows.push((
        "ship",
        "remote-failed",
        State::green(),
        vec![
            reject(1),
            feedback_to_green,
            Effect::StartPhase {
                phase: Phase::Green,
            },
            Effect::RunIteration {
                phase: Phase::Green,
            },
        ],
        2,
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
fn a_failed_remote_check_after_approve_is_a_reject_counted_with_qas() {
    let reject = finished(Phase::Qa, Err(vec![BLOCKER.to_owned()]), Ok(()), None);
    let approve = finished(Phase::Qa, Ok(()), Ok(()), None);
    let remote = Event::RemoteChecksFailed {
        blocking: vec![REMOTE_BLOCKER.to_owned()],
    };
    let mut machine = machine_in(&State::green(), 0);
    green_to_qa(&mut machine, &reject);
    let effects = green_to_qa(&mut machine, &approve);
    assert!(effects.contains(&Effect::RecordVerdict {
        verdict: QaVerdict::Approve,
        attempt: 2,
        blocking: vec![],
    }));
    assert_eq!(machine.state(), &State::ship());

    // The remote CI rejects: back to GREEN with its feedback, as attempt 2 (APPROVE kept the
    // count).
    let effects = machine.handle(&remote);
    assert_eq!(
        effects,
        vec![
            Effect::RecordVerdict {
                verdict: QaVerdict::Reject,
                attempt: 2,
                blocking: vec![REMOTE_BLOCKER.to_owned()],
            },
            Effect::WriteFeedback {
                phase: Phase::Green,
                reasons: vec![REMOTE_BLOCKER.to_owned()],
            },
            Effect::StartPhase {
                phase: Phase::Green
            },
            Effect::RunIteration {
                phase: Phase::Green
            },
        ]
    );
    assert_eq!(machine.state(), &State::green());

    // The third REJECT of the run, remote again, escalates instead of looping.
    green_to_qa(&mut machine, &approve);
    machine.handle(&remote);
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

    // Outside SHIP the event means nothing.
    let mut machine = machine_in(&State::green(), 0);
    assert!(machine.handle(&remote).is_empty());
    assert_eq!(machine.state(), &State::green());
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

    let mut restored: PhaseMachine = serde_json::from_str(&json).expect("a machine deserialises");
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
