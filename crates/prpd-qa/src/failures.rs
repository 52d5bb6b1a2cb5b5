//! The names of the tests that failed, so that a REJECT and the GREEN agent's feedback can say
//! *which* tests fail rather than only how many — the lines that name them are often far above
//! the last lines of the output. The names are the ones the runner's output (or the JUnit
//! report) gave `metrics/cases.rs`; this module only bounds and phrases them.

/// At most this many names are kept; a run with more failures says "and N more".
pub const MAX_NAMES: usize = 20;

/// The names of a run's failing tests, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailingTests {
    /// The first [`MAX_NAMES`] names.
    pub names: Vec<String>,
    /// How many more failures were seen beyond those.
    pub more: usize,
}

impl FailingTests {
    /// One line for a report: `a, b and 3 more`.
    pub fn summary(&self) -> String {
        let names = self.names.join(", ");
        if self.more == 0 {
            names
        } else {
            format!("{names} and {} more", self.more)
        }
    }

    /// The failing tests among `cases`, in name order.
    pub fn named(cases: &crate::metrics::TestCases) -> FailingTests {
        let mut names = cases.named(crate::metrics::Outcome::Failed);
        let mut found = FailingTests {
            names: names.by_ref().take(MAX_NAMES).map(str::to_owned).collect(),
            more: 0,
        };
        found.more = names.count();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Outcome, TestCases};

    #[test]
    fn the_first_names_are_kept_and_the_rest_counted() {
        let mut cases = TestCases::default();
        cases.record("passes", Outcome::Passed);
        for index in 0..25 {
            cases.record(&format!("case {index:02}"), Outcome::Failed);
        }
        let found = FailingTests::named(&cases);
        assert_eq!(found.names.len(), MAX_NAMES);
        assert_eq!(found.names[0], "case 00");
        assert_eq!(found.more, 5);
        assert!(found.summary().ends_with("and 5 more"));
    }
}
