//! The tests a run named, each with how it ended.
//!
//! Counts say how many tests passed; names say which. prpd needs the names to prove that the
//! tests RED wrote fail without the feature and pass with it (a skipped test or a padding test
//! cannot stand in for a missing one), so every runner whose output prints per-test lines
//! reports them here. A name only has to be stable for one runner and one command: the two
//! runs prpd compares always use the same command, read by the same parser.

use std::collections::BTreeMap;

/// How one named test ended. Expected failures, `xfail`, `todo` and pending tests are
/// [`Outcome::Skipped`]: they did not pass. Errors are [`Outcome::Failed`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Passed,
    Skipped,
    Failed,
}

impl Outcome {
    /// The word the report uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        }
    }
}

/// Named tests and their outcomes, ordered by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestCases(BTreeMap<String, Outcome>);

impl TestCases {
    /// Records a test. A name seen twice (two binaries, a retried test) keeps its worse
    /// outcome, so a failure is never hidden by a later pass of the same name.
    pub fn record(&mut self, name: &str, outcome: Outcome) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        let entry = self.0.entry(name.to_owned()).or_insert(outcome);
        *entry = (*entry).max(outcome);
    }

    /// How the test called `name` ended, if the output named it.
    pub fn get(&self, name: &str) -> Option<Outcome> {
        self.0.get(name).copied()
    }

    /// Every named test, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Outcome)> {
        self.0
            .iter()
            .map(|(name, outcome)| (name.as_str(), *outcome))
    }

    /// The names of the tests that ended with `outcome`.
    pub fn named(&self, outcome: Outcome) -> impl Iterator<Item = &str> {
        self.iter()
            .filter(move |(_, ended)| *ended == outcome)
            .map(|(name, _)| name)
    }

    /// How many tests ended with `outcome`.
    pub fn count(&self, outcome: Outcome) -> u32 {
        u32::try_from(self.named(outcome).count()).unwrap_or(u32::MAX)
    }

    /// How many tests the output named.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the output named no test.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_seen_twice_keeps_its_worse_outcome() {
        let mut cases = TestCases::default();
        cases.record("t::a", Outcome::Failed);
        cases.record("t::a", Outcome::Passed);
        cases.record("t::b", Outcome::Passed);
        cases.record("t::b", Outcome::Skipped);
        cases.record("  ", Outcome::Passed);
        assert_eq!(cases.get("t::a"), Some(Outcome::Failed));
        assert_eq!(cases.get("t::b"), Some(Outcome::Skipped));
        assert_eq!(cases.len(), 2);
        assert_eq!(cases.count(Outcome::Passed), 0);
        assert_eq!(cases.named(Outcome::Failed).collect::<Vec<_>>(), ["t::a"]);
    }
}
