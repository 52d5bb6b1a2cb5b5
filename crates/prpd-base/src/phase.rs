//! The phases of the loop: the one word every subsystem uses for where a run is. It lives in
//! the base because configuration (per-phase agents and breaker thresholds) names phases too.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A phase of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Phase {
    /// Write failing tests for the PRP.
    Red,
    /// Make the tests pass without changing them.
    Green,
    /// Improve the code while the tests keep passing.
    Refactor,
    /// Update README, ADRs and CHANGELOG.
    Document,
    /// Run the QA checklist and decide APPROVE or REJECT.
    Qa,
    /// Push the branch and open the pull request.
    Ship,
}

impl Phase {
    /// The phases an agent iterates in (all but SHIP), in loop order: the phases with a
    /// breaker, a gate and an agent.
    pub const ITERATING: [Phase; 5] = [
        Phase::Red,
        Phase::Green,
        Phase::Refactor,
        Phase::Document,
        Phase::Qa,
    ];

    /// Every phase, in loop order.
    pub const ALL: [Phase; 6] = [
        Phase::Red,
        Phase::Green,
        Phase::Refactor,
        Phase::Document,
        Phase::Qa,
        Phase::Ship,
    ];
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Red => "RED",
            Phase::Green => "GREEN",
            Phase::Refactor => "REFACTOR",
            Phase::Document => "DOCUMENT",
            Phase::Qa => "QA",
            Phase::Ship => "SHIP",
        })
    }
}
