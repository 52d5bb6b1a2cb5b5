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
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::base::config::Thresholds;
use crate::base::phase::Phase;
use crate::run::gate::TestCounts;

/// How the agent invocation of an iteration ended, as the agent module read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AgentEnd {
    /// The agent exited and printed a parsable status block.
    Ok,
    /// The agent exited but printed no status block, or one that does not parse.
    Malformed,
    /// The agent (or its tool runner) reported that a permission was refused.
    PermissionDenied,
    /// The agent hit a rate or usage limit; the iteration should be retried later.
    Quota,
    /// prpd killed the agent at its timeout.
    TimedOut,
    /// The agent exited abnormally (non-zero without a recognised cause, or by a signal).
    Crashed,
}

/// What prpd measured in the target repo after one iteration. Figures that were not measured in
/// this phase are `None` and never count as a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The commit HEAD points at.
    pub head: String,
    /// A hash of the working tree (tracked and untracked files, ignored ones excluded).
    pub tree_hash: String,
    /// Test counts from the phase's test run.
    pub tests: Option<TestCounts>,
    /// Checklist checks that passed (DOCUMENT: the documentation checks; QA: all checks).
    pub checks_passing: Option<u32>,
    /// Blocking checks that failed (QA).
    pub blocking_failed: Option<u32>,
    /// Lint error count (REFACTOR).
    pub lint_errors: Option<u32>,
    /// Highest cyclomatic complexity reported (REFACTOR).
    pub max_complexity: Option<u32>,
    /// [`normalise_error`] of the iteration's main error output, if it failed with one.
    pub error_signature: Option<String>,
    /// How the agent invocation ended.
    pub agent: AgentEnd,
}

/// The kind of an iteration, as the breaker counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IterationClass {
    /// A measured figure moved the phase's way, or the tree changed without making it worse.
    Progress,
    /// Nothing measured changed, or the change made the phase's own figure worse.
    NoProgress,
    /// The iteration ended on the same normalised error as the one before.
    SameError,
    /// The agent printed no status block or an unparsable one.
    Malformed,
    /// The agent was refused a permission.
    PermissionDenied,
    /// A rate or usage limit: not counted, the orchestrator pauses and retries.
    Quota,
    /// The agent was killed at its timeout.
    Timeout,
    /// The agent crashed.
    Crash,
}

/// Classifies one iteration of `phase` by comparing what was measured after it (`now`) with what
/// was measured before it (`prev`: the previous iteration, or the snapshot taken when the phase
/// started).
///
/// Rules, first match wins:
/// 1. an agent that did not end cleanly classifies the iteration by how it ended: work left
///    behind by a killed, crashed or confused agent is not trusted as progress (the next
///    iteration measures the tree again); timeouts and crashes count as no progress;
/// 2. without `prev` there is nothing to compare with: progress;
/// 3. the phase's own figure moved its way (RED more failing tests, GREEN fewer, REFACTOR fewer
///    lint errors or lower complexity, DOCUMENT more passing checks, QA more passing checks or
///    fewer blockers): progress;
/// 4. the same error signature as before: same error (even if files changed: the agent is busy
///    but stuck);
/// 5. HEAD or the tree hash changed and the phase's figure did not get worse: progress;
/// 6. otherwise: no progress.
///
/// The agent saying it is done is never progress: a claim is not a measurement, and a done
/// phase whose gate 1 holds exits anyway.
pub fn classify(phase: Phase, prev: Option<&Observation>, now: &Observation) -> IterationClass {
    match now.agent {
        AgentEnd::Ok => {}
        AgentEnd::Malformed => return IterationClass::Malformed,
        AgentEnd::PermissionDenied => return IterationClass::PermissionDenied,
        AgentEnd::Quota => return IterationClass::Quota,
        AgentEnd::TimedOut => return IterationClass::Timeout,
        AgentEnd::Crashed => return IterationClass::Crash,
    }
    let Some(prev) = prev else {
        return IterationClass::Progress;
    };
    let direction = phase_direction(phase, prev, now);
    if direction == Direction::Better {
        return IterationClass::Progress;
    }
    if now.error_signature.is_some() && now.error_signature == prev.error_signature {
        return IterationClass::SameError;
    }
    let changed = now.head != prev.head || now.tree_hash != prev.tree_hash;
    if changed && direction == Direction::Same {
        IterationClass::Progress
    } else {
        IterationClass::NoProgress
    }
}

/// Which way the phase's own figures moved between two observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Better,
    Same,
    Worse,
}

/// Compares the figures that measure progress in `phase`. Better wins over worse when a phase
/// has two figures and they move apart (QA: one more check passes while another blocks).
fn phase_direction(phase: Phase, prev: &Observation, now: &Observation) -> Direction {
    let failing = |o: &Observation| o.tests.map(|t| t.failing);
    let moves = match phase {
        Phase::Red => vec![compare(failing(prev), failing(now), Want::Higher)],
        Phase::Green => vec![compare(failing(prev), failing(now), Want::Lower)],
        Phase::Refactor => vec![
            compare(prev.lint_errors, now.lint_errors, Want::Lower),
            compare(prev.max_complexity, now.max_complexity, Want::Lower),
        ],
        Phase::Document => vec![compare(
            prev.checks_passing,
            now.checks_passing,
            Want::Higher,
        )],
        Phase::Qa => vec![
            compare(prev.checks_passing, now.checks_passing, Want::Higher),
            compare(prev.blocking_failed, now.blocking_failed, Want::Lower),
        ],
        Phase::Ship => vec![],
    };
    if moves.contains(&Direction::Better) {
        Direction::Better
    } else if moves.contains(&Direction::Worse) {
        Direction::Worse
    } else {
        Direction::Same
    }
}

/// Which way a figure should move to count as progress.
#[derive(Debug, Clone, Copy)]
enum Want {
    Higher,
    Lower,
}

fn compare(prev: Option<u32>, now: Option<u32>, want: Want) -> Direction {
    let (Some(prev), Some(now)) = (prev, now) else {
        return Direction::Same;
    };
    match (now.cmp(&prev), want) {
        (std::cmp::Ordering::Equal, _) => Direction::Same,
        (std::cmp::Ordering::Greater, Want::Higher) | (std::cmp::Ordering::Less, Want::Lower) => {
            Direction::Better
        }
        (std::cmp::Ordering::Greater, Want::Lower) | (std::cmp::Ordering::Less, Want::Higher) => {
            Direction::Worse
        }
    }
}

/// Rewrites error output so that the same error in two runs has the same signature: timestamps,
/// UUIDs, hex ids, temp-dir names and standalone numbers (line:col, counts, durations, pids)
/// become placeholders, and whitespace runs become one space. Numbers glued to letters are kept,
/// so `E0308` and `E0599` stay different errors.
pub fn normalise_error(text: &str) -> String {
    static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
    });
    static CLOCK: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"));
    static UUID: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
    });
    static HEX: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\b(?:0x[0-9a-f]+|[0-9a-f]{7,})\b"));
    static TEMP_DIR: LazyLock<Regex> = LazyLock::new(|| regex(r"\.tmp[A-Za-z0-9]{6}\b"));
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d+(?:\.\d+)?"));
    static SPACE: LazyLock<Regex> = LazyLock::new(|| regex(r"\s+"));

    let text = TIMESTAMP.replace_all(text, "<time>");
    let text = CLOCK.replace_all(&text, "<time>");
    let text = UUID.replace_all(&text, "<uuid>");
    let text = HEX.replace_all(&text, |found: &regex::Captures<'_>| {
        let word = &found[0];
        let is_id = word.starts_with("0x")
            || word.starts_with("0X")
            || (word.bytes().any(|b| b.is_ascii_digit())
                && word.bytes().any(|b| b.is_ascii_alphabetic()));
        if is_id {
            "<hex>".to_owned()
        } else {
            word.to_owned()
        }
    });
    let text = TEMP_DIR.replace_all(&text, ".tmp<id>");
    let text = NUMBER.replace_all(&text, "<n>");
    SPACE.replace_all(&text, " ").trim().to_owned()
}

/// Compiles one of this module's fixed patterns.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the breaker's error patterns are valid regexes")
}

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

    fn observation(failing: u32) -> Observation {
        Observation {
            head: "c0ffee1".to_owned(),
            tree_hash: "tree-1".to_owned(),
            tests: Some(TestCounts {
                passing: 4,
                failing,
            }),
            checks_passing: Some(5),
            blocking_failed: Some(2),
            lint_errors: Some(3),
            max_complexity: Some(8),
            error_signature: None,
            agent: AgentEnd::Ok,
        }
    }

    fn with(base: &Observation, change: impl FnOnce(&mut Observation)) -> Observation {
        let mut changed = base.clone();
        change(&mut changed);
        changed
    }

    /// Name, phase, previous observation, current observation, expected class.
    type ClassifyCase<'a> = (
        &'static str,
        Phase,
        Option<&'a Observation>,
        Observation,
        IterationClass,
    );

    #[test]
    #[expect(
        clippy::too_many_lines,
        reason = "one table of cases reads best in one place"
    )]
    fn classify_follows_the_rules_in_order() {
        let prev = observation(2);
        let signature = Some("error[E0308]: mismatched types".to_owned());
        let prev_with_error = with(&prev, |o| o.error_signature.clone_from(&signature));
        let cases: Vec<ClassifyCase<'_>> = vec![
            (
                "a malformed agent is malformed even when the figures improved",
                Phase::Red,
                Some(&prev),
                with(&prev, |o| {
                    o.tests = Some(TestCounts {
                        passing: 4,
                        failing: 5,
                    });
                    o.agent = AgentEnd::Malformed;
                }),
                IterationClass::Malformed,
            ),
            (
                "permission denied",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| o.agent = AgentEnd::PermissionDenied),
                IterationClass::PermissionDenied,
            ),
            (
                "quota",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| o.agent = AgentEnd::Quota),
                IterationClass::Quota,
            ),
            (
                "a timed-out agent's edits are not progress",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| {
                    o.tree_hash = "tree-2".to_owned();
                    o.agent = AgentEnd::TimedOut;
                }),
                IterationClass::Timeout,
            ),
            (
                "crash",
                Phase::Qa,
                Some(&prev),
                with(&prev, |o| o.agent = AgentEnd::Crashed),
                IterationClass::Crash,
            ),
            (
                "the first iteration has nothing to compare with",
                Phase::Red,
                None,
                prev.clone(),
                IterationClass::Progress,
            ),
            (
                "RED: more failing tests",
                Phase::Red,
                Some(&prev),
                with(&prev, |o| {
                    o.tests = Some(TestCounts {
                        passing: 4,
                        failing: 3,
                    });
                }),
                IterationClass::Progress,
            ),
            (
                "RED: nothing measured changed",
                Phase::Red,
                Some(&prev),
                prev.clone(),
                IterationClass::NoProgress,
            ),
            (
                "RED: fewer failing tests is worse even though the tree changed",
                Phase::Red,
                Some(&prev),
                with(&prev, |o| {
                    o.tree_hash = "tree-2".to_owned();
                    o.tests = Some(TestCounts {
                        passing: 5,
                        failing: 1,
                    });
                }),
                IterationClass::NoProgress,
            ),
            (
                "RED: a tree change with the same counts is progress",
                Phase::Red,
                Some(&prev),
                with(&prev, |o| o.tree_hash = "tree-2".to_owned()),
                IterationClass::Progress,
            ),
            (
                "a new commit is progress",
                Phase::Document,
                Some(&prev),
                with(&prev, |o| o.head = "beef002".to_owned()),
                IterationClass::Progress,
            ),
            (
                "the same error with a changed tree is same error",
                Phase::Green,
                Some(&prev_with_error),
                with(&prev_with_error, |o| o.tree_hash = "tree-2".to_owned()),
                IterationClass::SameError,
            ),
            (
                "the same error but the figure improved is progress",
                Phase::Green,
                Some(&prev_with_error),
                with(&prev_with_error, |o| {
                    o.tests = Some(TestCounts {
                        passing: 5,
                        failing: 1,
                    });
                }),
                IterationClass::Progress,
            ),
            (
                "a different error with nothing else changed is no progress",
                Phase::Green,
                Some(&prev_with_error),
                with(&prev_with_error, |o| {
                    o.error_signature = Some("error[E0599]: no method".to_owned());
                }),
                IterationClass::NoProgress,
            ),
            (
                "GREEN: fewer failing tests",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| {
                    o.tests = Some(TestCounts {
                        passing: 5,
                        failing: 1,
                    });
                }),
                IterationClass::Progress,
            ),
            (
                "GREEN: more failing tests is worse even though the tree changed",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| {
                    o.tree_hash = "tree-2".to_owned();
                    o.tests = Some(TestCounts {
                        passing: 3,
                        failing: 3,
                    });
                }),
                IterationClass::NoProgress,
            ),
            (
                "REFACTOR: fewer lint errors",
                Phase::Refactor,
                Some(&prev),
                with(&prev, |o| o.lint_errors = Some(1)),
                IterationClass::Progress,
            ),
            (
                "REFACTOR: lower complexity",
                Phase::Refactor,
                Some(&prev),
                with(&prev, |o| o.max_complexity = Some(6)),
                IterationClass::Progress,
            ),
            (
                "REFACTOR: higher complexity is worse even though the tree changed",
                Phase::Refactor,
                Some(&prev),
                with(&prev, |o| {
                    o.tree_hash = "tree-2".to_owned();
                    o.max_complexity = Some(12);
                }),
                IterationClass::NoProgress,
            ),
            (
                "DOCUMENT: more checks pass",
                Phase::Document,
                Some(&prev),
                with(&prev, |o| o.checks_passing = Some(6)),
                IterationClass::Progress,
            ),
            (
                "DOCUMENT: test counts do not measure DOCUMENT",
                Phase::Document,
                Some(&prev),
                with(&prev, |o| {
                    o.tests = Some(TestCounts {
                        passing: 9,
                        failing: 0,
                    });
                }),
                IterationClass::NoProgress,
            ),
            (
                "QA: fewer blockers",
                Phase::Qa,
                Some(&prev),
                with(&prev, |o| o.blocking_failed = Some(1)),
                IterationClass::Progress,
            ),
            (
                "QA: more checks pass while a blocker is added: better wins",
                Phase::Qa,
                Some(&prev),
                with(&prev, |o| {
                    o.checks_passing = Some(6);
                    o.blocking_failed = Some(3);
                }),
                IterationClass::Progress,
            ),
            (
                "QA: same checks and same blockers",
                Phase::Qa,
                Some(&prev),
                prev.clone(),
                IterationClass::NoProgress,
            ),
            (
                "a figure that was not measured never counts as a change",
                Phase::Green,
                Some(&prev),
                with(&prev, |o| o.tests = None),
                IterationClass::NoProgress,
            ),
        ];
        for (name, phase, prev, now, expected) in cases {
            assert_eq!(classify(phase, prev, &now), expected, "{name}");
        }
    }

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

    #[test]
    fn normalise_error_gives_the_same_error_the_same_signature() {
        let first = "2024-05-01T10:00:01.123Z thread 'main' panicked at src/lib.rs:42:9:\n  \
                     assertion failed: left == right (left: 3, right: 4)\n\
                     commit 3f2a9c1d pid 4242 took 0.53s in /tmp/.tmpAb12Cd/x";
        let second = "2024-06-11T23:59:59Z thread 'main' panicked at src/lib.rs:57:13:\n\
                      assertion failed: left == right (left: 10, right: 11)\n\
                      commit 9e8d7c6b pid 17 took 12.01s in /tmp/.tmpZz99Qq/x";
        assert_eq!(normalise_error(first), normalise_error(second));
        assert_eq!(
            normalise_error(first),
            "<time> thread 'main' panicked at src/lib.rs:<n>:<n>: assertion failed: left == \
             right (left: <n>, right: <n>) commit <hex> pid <n> took <n>s in /tmp/.tmp<id>/x"
        );
    }

    #[test]
    fn normalise_error_keeps_different_errors_apart() {
        let pairs = [
            (
                "error[E0308]: mismatched types --> src/a.rs:1:2",
                "error[E0599]: no method named `x` --> src/a.rs:1:2",
            ),
            (
                "FAILED tests/test_login.py::test_ok",
                "FAILED tests/test_login.py::test_logout",
            ),
            ("cannot find value `id2`", "cannot find value `id3`"),
        ];
        for (one, other) in pairs {
            assert_ne!(
                normalise_error(one),
                normalise_error(other),
                "{one} / {other}"
            );
        }
        assert_eq!(
            normalise_error("id 550e8400-e29b-41d4-a716-446655440000 at 0x7ffd5e8c"),
            "id <uuid> at <hex>"
        );
    }
}
