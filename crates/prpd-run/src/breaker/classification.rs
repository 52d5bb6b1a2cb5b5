//! Iteration classification: what one iteration of a phase amounted to, read from what prpd
//! measured before and after it. It is kept apart from the breaker's state machine because the
//! two change for different reasons: these rules say what counts as progress in each phase,
//! while the breaker only counts the classes it is given and decides when to open.

use serde::{Deserialize, Serialize};

use crate::gate::TestCounts;
use prpd_base::phase::Phase;

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
    /// [`normalise_error`](super::normalise_error) of the iteration's main error output, if it
    /// failed with one.
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
}
