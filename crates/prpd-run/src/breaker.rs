//! Circuit breakers: one per phase, they notice when a phase's iterations stop getting anywhere
//! and stop the run before it burns agent calls in a loop (DESIGN §3).
//!
//! Theory of operation. After every iteration the orchestrator measures the target repo (HEAD,
//! working-tree hash, test counts, check counts, the normalised error signature) into an
//! [`Observation`], and [`classify`] compares it with the previous one into an
//! [`IterationClass`]. [`Breaker::record`] counts the class and moves the breaker:
//!
//! - `CLOSED` → `HALF_OPEN` after `half_open_after` (2) iterations in a row without progress;
//! - `HALF_OPEN` → `CLOSED` on progress;
//! - any state → `OPEN` when a counter reaches its threshold, which returns a [`Trip`]. A
//!   threshold equal to the `HALF_OPEN` trigger opens directly (GREEN's no-progress threshold
//!   is 2);
//! - `OPEN` → `HALF_OPEN` only through [`Breaker::probe`] (cooldown or `prpd resume`), which gives
//!   the run one probe iteration: with the counters still at their thresholds, a probe without
//!   progress opens the breaker again at once.
//! - [`Breaker::restart`], when the run enters the phase (again), zeroes the counters and closes
//!   it, keeping the history.
//!
//! The counters count iterations since the last progress, and progress resets all of them:
//! `no_progress` counts no-progress, malformed, timed-out and crashed iterations, `same_error` the
//! iterations that ended on the same error as the one before (the agent is busy but stuck, so it
//! has its own, usually higher, threshold), `permission_denied` the denied ones. Quota iterations
//! (rate or usage limits) are not the agent's fault: they are not counted and change nothing.
//!
//! Everything here is pure: time comes in as seconds since the Unix epoch.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::Thresholds;
use prpd_base::phase::Phase;

mod classification;
mod error_signature;

pub use classification::{AgentEnd, IterationClass, Observation, classify};
pub use error_signature::normalise_error;

/// The state of a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BreakerState {
    /// Iterations make progress; the phase runs normally.
    Closed,
    /// Recent iterations made no progress, or a probe after OPEN is running.
    HalfOpen,
    /// A threshold was reached; the run escalates.
    Open,
}

impl fmt::Display for BreakerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BreakerState::Closed => "CLOSED",
            BreakerState::HalfOpen => "HALF_OPEN",
            BreakerState::Open => "OPEN",
        })
    }
}

/// Which breaker counter reached its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Counter {
    /// Iterations without measurable progress.
    NoProgress,
    /// Iterations ending on the same error.
    SameError,
    /// Permission denials.
    PermissionDenied,
}

/// A breaker opened: which phase, which counter, at what count, against which threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trip {
    /// The phase whose breaker opened.
    pub phase: Phase,
    /// The counter that reached its threshold.
    pub counter: Counter,
    /// The counter's value.
    pub count: u32,
    /// The threshold it reached.
    pub threshold: u32,
}

impl fmt::Display for Trip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.counter {
            Counter::NoProgress => "iterations without measurable progress",
            Counter::SameError => "iterations ending on the same error",
            Counter::PermissionDenied => "permission denials",
        };
        write!(
            f,
            "the {} breaker opened after {} {what} (threshold {})",
            self.phase, self.count, self.threshold
        )
    }
}

/// Why a breaker changed state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Reason {
    /// An iteration made progress.
    Progress,
    /// This many iterations in a row made no progress.
    WithoutProgress {
        /// Iterations since the last progress.
        iterations: u32,
    },
    /// A counter reached its threshold.
    Tripped(Trip),
    /// A cooldown or `prpd resume` allowed one probe iteration.
    Probe,
    /// The run entered the phase again (GREEN after a QA REJECT).
    Restarted,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Progress => f.write_str("an iteration made progress"),
            Reason::WithoutProgress { iterations } => {
                write!(f, "{iterations} iterations in a row without progress")
            }
            Reason::Tripped(trip) => trip.fmt(f),
            Reason::Probe => f.write_str("probe iteration allowed (cooldown or resume)"),
            Reason::Restarted => f.write_str("the run entered the phase again"),
        }
    }
}

/// One state change of a breaker, kept in its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// The state before.
    pub from: BreakerState,
    /// The state after.
    pub to: BreakerState,
    /// Why it moved.
    pub reason: Reason,
    /// The phase iteration that moved it (for a probe: the last iteration recorded).
    pub iteration: u32,
    /// When, in seconds since the Unix epoch.
    pub at: u64,
}

/// The circuit breaker of one phase of a run, persisted in `circuit-breaker.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breaker {
    /// The phase this breaker watches.
    pub phase: Phase,
    /// The thresholds in force (from the config; replace them when the config changes).
    pub thresholds: Thresholds,
    /// The current state.
    pub state: BreakerState,
    /// No-progress, malformed, timed-out and crashed iterations since the last progress.
    pub no_progress: u32,
    /// Same-error iterations since the last progress.
    pub same_error: u32,
    /// Permission denials since the last progress.
    pub permission_denied: u32,
    /// The last iteration recorded.
    pub last_iteration: u32,
    /// Every state change, oldest first.
    pub history: Vec<Transition>,
}

impl Breaker {
    /// A closed breaker with zeroed counters.
    pub fn new(phase: Phase, thresholds: Thresholds) -> Breaker {
        Breaker {
            phase,
            thresholds,
            state: BreakerState::Closed,
            no_progress: 0,
            same_error: 0,
            permission_denied: 0,
            last_iteration: 0,
            history: Vec::new(),
        }
    }

    /// Counts one classified iteration and moves the breaker. Returns the trip when a counter is
    /// at or over its threshold, also when the breaker was already OPEN (an iteration that should
    /// not have run is still reported). Quota iterations change nothing.
    pub fn record(&mut self, class: IterationClass, iteration: u32, at: u64) -> Option<Trip> {
        self.last_iteration = iteration;
        match class {
            IterationClass::Quota => return None,
            IterationClass::Progress => {
                self.no_progress = 0;
                self.same_error = 0;
                self.permission_denied = 0;
                if self.state != BreakerState::Closed {
                    self.move_to(BreakerState::Closed, Reason::Progress, iteration, at);
                }
                return None;
            }
            IterationClass::NoProgress
            | IterationClass::Malformed
            | IterationClass::Timeout
            | IterationClass::Crash => self.no_progress += 1,
            IterationClass::SameError => self.same_error += 1,
            IterationClass::PermissionDenied => self.permission_denied += 1,
        }
        if let Some(trip) = self.over_threshold() {
            if self.state != BreakerState::Open {
                self.move_to(
                    BreakerState::Open,
                    Reason::Tripped(trip.clone()),
                    iteration,
                    at,
                );
            }
            return Some(trip);
        }
        let without_progress = self.no_progress + self.same_error + self.permission_denied;
        if self.state == BreakerState::Closed && without_progress >= self.thresholds.half_open_after
        {
            self.move_to(
                BreakerState::HalfOpen,
                Reason::WithoutProgress {
                    iterations: without_progress,
                },
                iteration,
                at,
            );
        }
        None
    }

    /// Moves an `OPEN` breaker to `HALF_OPEN` for one probe iteration (cooldown elapsed or
    /// `prpd resume`). Counters are kept, so a probe without progress reopens it at once.
    /// Does nothing in other states.
    pub fn probe(&mut self, at: u64) {
        if self.state == BreakerState::Open {
            self.move_to(
                BreakerState::HalfOpen,
                Reason::Probe,
                self.last_iteration,
                at,
            );
        }
    }

    /// Gives the breaker a fresh start when the run enters its phase (again): counters to zero
    /// and `CLOSED`, keeping the history. A run that comes back to GREEN after a QA REJECT has new
    /// feedback, so its earlier GREEN iterations say nothing about the new ones.
    pub fn restart(&mut self, at: u64) {
        self.no_progress = 0;
        self.same_error = 0;
        self.permission_denied = 0;
        if self.state != BreakerState::Closed {
            self.move_to(
                BreakerState::Closed,
                Reason::Restarted,
                self.last_iteration,
                at,
            );
        }
    }

    /// The first counter at or over its threshold, in the order no progress, same error,
    /// permission denied.
    fn over_threshold(&self) -> Option<Trip> {
        [
            (
                Counter::NoProgress,
                self.no_progress,
                self.thresholds.no_progress,
            ),
            (
                Counter::SameError,
                self.same_error,
                self.thresholds.same_error,
            ),
            (
                Counter::PermissionDenied,
                self.permission_denied,
                self.thresholds.permission_denied,
            ),
        ]
        .into_iter()
        .find(|(_, count, threshold)| *count > 0 && count >= threshold)
        .map(|(counter, count, threshold)| Trip {
            phase: self.phase,
            counter,
            count,
            threshold,
        })
    }

    fn move_to(&mut self, to: BreakerState, reason: Reason, iteration: u32, at: u64) {
        self.history.push(Transition {
            from: self.state,
            to,
            reason,
            iteration,
            at,
        });
        self.state = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records `classes` as iterations 1.. at times 100, 200, … and returns, per iteration,
    /// the state after it and whether it tripped.
    fn run(
        phase: Phase,
        classes: &[IterationClass],
    ) -> (Breaker, Vec<(BreakerState, Option<Trip>)>) {
        let mut breaker = Breaker::new(phase, Thresholds::default_for(phase));
        let mut steps = Vec::new();
        for (index, class) in classes.iter().enumerate() {
            let iteration = u32::try_from(index + 1).expect("a short test sequence");
            let trip = breaker.record(*class, iteration, u64::from(iteration) * 100);
            steps.push((breaker.state, trip));
        }
        (breaker, steps)
    }

    fn trip(phase: Phase, counter: Counter, count: u32, threshold: u32) -> Trip {
        Trip {
            phase,
            counter,
            count,
            threshold,
        }
    }

    /// Name, phase, the classes recorded, and per iteration the state after it and the trip.
    type Sequence = (
        &'static str,
        Phase,
        Vec<IterationClass>,
        Vec<(BreakerState, Option<Trip>)>,
    );

    #[test]
    #[expect(
        clippy::too_many_lines,
        reason = "one table of cases reads best in one place"
    )]
    fn breaker_moves_per_the_design_table() {
        use BreakerState::{Closed, HalfOpen, Open};
        use IterationClass::{
            Crash, Malformed, NoProgress, PermissionDenied, Progress, Quota, SameError, Timeout,
        };
        let cases: Vec<Sequence> = vec![
            (
                "RED: half-open after 2, open at 3",
                Phase::Red,
                vec![NoProgress, NoProgress, NoProgress],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Red, Counter::NoProgress, 3, 3))),
                ],
            ),
            (
                "GREEN: a threshold equal to the half-open trigger opens directly",
                Phase::Green,
                vec![NoProgress, NoProgress],
                vec![
                    (Closed, None),
                    (Open, Some(trip(Phase::Green, Counter::NoProgress, 2, 2))),
                ],
            ),
            (
                "half-open closes on progress and the counters start again",
                Phase::Red,
                vec![
                    NoProgress, NoProgress, Progress, NoProgress, NoProgress, NoProgress,
                ],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (Closed, None),
                    (Closed, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Red, Counter::NoProgress, 3, 3))),
                ],
            ),
            (
                "RED: same error has its own threshold of 5",
                Phase::Red,
                vec![SameError; 5],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (HalfOpen, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Red, Counter::SameError, 5, 5))),
                ],
            ),
            (
                "GREEN: same error opens at 3",
                Phase::Green,
                vec![SameError; 3],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Green, Counter::SameError, 3, 3))),
                ],
            ),
            (
                "QA: no progress opens at 3",
                Phase::Qa,
                vec![NoProgress; 3],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Qa, Counter::NoProgress, 3, 3))),
                ],
            ),
            (
                "REFACTOR: 5 iterations without progress",
                Phase::Refactor,
                vec![NoProgress; 5],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (HalfOpen, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Refactor, Counter::NoProgress, 5, 5))),
                ],
            ),
            (
                "permission denied twice opens",
                Phase::Refactor,
                vec![PermissionDenied, PermissionDenied],
                vec![
                    (Closed, None),
                    (
                        Open,
                        Some(trip(Phase::Refactor, Counter::PermissionDenied, 2, 2)),
                    ),
                ],
            ),
            (
                "quota is not counted",
                Phase::Green,
                vec![Quota, Quota, Quota, NoProgress, Quota],
                vec![
                    (Closed, None),
                    (Closed, None),
                    (Closed, None),
                    (Closed, None),
                    (Closed, None),
                ],
            ),
            (
                "timeout, crash and malformed count as no progress",
                Phase::Red,
                vec![Timeout, Crash, Malformed],
                vec![
                    (Closed, None),
                    (HalfOpen, None),
                    (Open, Some(trip(Phase::Red, Counter::NoProgress, 3, 3))),
                ],
            ),
            (
                "different kinds of no progress add up to the half-open trigger",
                Phase::Red,
                vec![NoProgress, SameError],
                vec![(Closed, None), (HalfOpen, None)],
            ),
            (
                "an iteration recorded while open reports the trip again",
                Phase::Green,
                vec![NoProgress, NoProgress, NoProgress],
                vec![
                    (Closed, None),
                    (Open, Some(trip(Phase::Green, Counter::NoProgress, 2, 2))),
                    (Open, Some(trip(Phase::Green, Counter::NoProgress, 3, 2))),
                ],
            ),
        ];
        for (name, phase, classes, expected) in cases {
            let (_, steps) = run(phase, &classes);
            assert_eq!(steps, expected, "{name}");
        }
    }

    #[test]
    fn history_records_every_transition_with_iteration_and_time() {
        use IterationClass::{NoProgress, Progress};
        let (breaker, _) = run(Phase::Red, &[NoProgress, NoProgress, Progress, NoProgress]);
        assert_eq!(
            breaker.history,
            vec![
                Transition {
                    from: BreakerState::Closed,
                    to: BreakerState::HalfOpen,
                    reason: Reason::WithoutProgress { iterations: 2 },
                    iteration: 2,
                    at: 200,
                },
                Transition {
                    from: BreakerState::HalfOpen,
                    to: BreakerState::Closed,
                    reason: Reason::Progress,
                    iteration: 3,
                    at: 300,
                },
            ]
        );
        assert_eq!(breaker.no_progress, 1);
    }

    #[test]
    fn probe_gives_one_iteration_then_reopens_without_progress() {
        let (mut breaker, _) = run(Phase::Green, &[IterationClass::NoProgress; 2]);
        assert_eq!(breaker.state, BreakerState::Open);
        breaker.probe(1_000);
        assert_eq!(breaker.state, BreakerState::HalfOpen);
        assert_eq!(
            breaker
                .history
                .last()
                .expect("the probe is recorded")
                .reason,
            Reason::Probe
        );
        assert_eq!(
            breaker.history.last().expect("the probe is recorded").at,
            1_000
        );
        assert_eq!(
            breaker
                .history
                .last()
                .expect("the probe is recorded")
                .iteration,
            2
        );

        let again = breaker.record(IterationClass::NoProgress, 3, 1_100);
        assert_eq!(again, Some(trip(Phase::Green, Counter::NoProgress, 3, 2)));
        assert_eq!(breaker.state, BreakerState::Open);

        breaker.probe(2_000);
        assert_eq!(breaker.record(IterationClass::Progress, 4, 2_100), None);
        assert_eq!(breaker.state, BreakerState::Closed);
        assert_eq!(
            (
                breaker.no_progress,
                breaker.same_error,
                breaker.permission_denied
            ),
            (0, 0, 0)
        );
    }

    #[test]
    fn restart_closes_and_zeroes_but_keeps_history() {
        let (mut breaker, _) = run(Phase::Red, &[IterationClass::NoProgress; 2]);
        assert_eq!(breaker.state, BreakerState::HalfOpen);
        breaker.restart(5_000);
        assert_eq!(breaker.state, BreakerState::Closed);
        assert_eq!(breaker.no_progress, 0);
        assert_eq!(breaker.history.len(), 2);
        assert_eq!(
            breaker.history.last().map(|t| (&t.reason, t.at)),
            Some((&Reason::Restarted, 5_000))
        );
        breaker.restart(6_000);
        assert_eq!(
            breaker.history.len(),
            2,
            "a closed breaker has nothing to record"
        );
    }

    #[test]
    fn probe_does_nothing_unless_open() {
        let mut breaker = Breaker::new(Phase::Red, Thresholds::default_for(Phase::Red));
        breaker.probe(10);
        assert_eq!(breaker.state, BreakerState::Closed);
        assert!(breaker.history.is_empty());
    }

    #[test]
    fn default_thresholds_are_the_seed_table() {
        let table = [
            (Phase::Red, 3, 5),
            (Phase::Green, 2, 3),
            (Phase::Refactor, 5, 5),
            (Phase::Document, 3, 5),
            (Phase::Qa, 3, 3),
        ];
        for (phase, no_progress, same_error) in table {
            assert_eq!(
                Thresholds::default_for(phase),
                Thresholds {
                    no_progress,
                    same_error,
                    permission_denied: 2,
                    half_open_after: 2,
                },
                "{phase}"
            );
        }
    }

    #[test]
    fn breaker_round_trips_through_json_with_readable_names() {
        let (breaker, _) = run(Phase::Green, &[IterationClass::SameError; 3]);
        let json = serde_json::to_string(&breaker).expect("a breaker serialises");
        assert!(json.contains(r#""state":"OPEN""#), "{json}");
        assert!(json.contains(r#""phase":"GREEN""#), "{json}");
        assert!(json.contains(r#""counter":"SAME_ERROR""#), "{json}");
        let back: Breaker = serde_json::from_str(&json).expect("a breaker deserialises");
        assert_eq!(back, breaker);
    }

    #[test]
    fn trip_names_phase_counter_and_threshold() {
        let trip = trip(Phase::Green, Counter::SameError, 3, 3);
        assert_eq!(
            trip.to_string(),
            "the GREEN breaker opened after 3 iterations ending on the same error (threshold 3)"
        );
    }
}
