//! CTest, CMake's test driver: one line per test, `1/3 Test #1: adds ....   Passed    0.00 sec`,
//! and `No tests were found!!!`.
//!
//! Counts come from the per-test lines, not from the closing `100% tests passed, 0 tests
//! failed out of 3`: that line leaves disabled tests out and counts skipped ones as passed.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] =
    &[(" Test ", ctest_case), ("No tests were found", ctest_none)];

/// `3/4 Test #3: divides ....***Not Run (Disabled)   0.00 sec`. `Passed` passed; `Skipped` and
/// `Not Run (Disabled)` did not run; anything else (`***Failed`, `***Exception: Numerical`,
/// `***Timeout`, `Not Run` for a missing program) failed.
fn ctest_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(?:\*\*\*)?(.+?)\s+[\d.]+ sec$")
    });
    let captures = PATTERN.captures(line.trim_end())?;
    let status = &captures[2];
    let outcome = if status == "Passed" {
        Outcome::Passed
    } else if status == "Skipped" || status.starts_with("Not Run (Disabled)") {
        Outcome::Skipped
    } else {
        Outcome::Failed
    };
    Some(Finding::Case(captures[1].to_owned(), outcome))
}

/// `No tests were found!!!`
fn ctest_none(line: &str) -> Option<Finding> {
    line.trim()
        .starts_with("No tests were found")
        .then_some(Finding::Tests(TestSummary::default()))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn ctest_lines_are_counted_one_by_one() {
        let output = "\
Test project /tmp/calc/build
    Start 1: adds
1/4 Test #1: adds .............................   Passed    0.00 sec
2/4 Test #2: multiplies .......................***Failed    0.01 sec
3/4 Test #3: divides ..........................***Not Run (Disabled)   0.00 sec
4/4 Test #4: rounds ...........................***Exception: Numerical  0.00 sec

25% tests passed, 2 tests failed out of 3
";
        assert_eq!(tests(output), Some((1.0, 2.0, 1.0, 4.0)));
        let metrics = parse(output);
        assert_eq!(metrics.test_cases().get("rounds"), Some(Outcome::Failed));
        assert_eq!(metrics.test_cases().get("divides"), Some(Outcome::Skipped));
        assert_eq!(parse("No tests were found!!!\n").tests_ran(), Some(0));
    }
}
