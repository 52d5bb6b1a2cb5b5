//! The plain `N passed, N failed` line that small hand-written runners print.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[(" passed, ", plain_counts)];

/// The plain `N passed, N failed` line (optionally `, N skipped`, optionally `word:` before),
/// which small hand-written runners print.
fn plain_counts(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(?:[A-Za-z][\w-]*:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\.?$")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::PlainTests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: captures
            .get(3)
            .map_or(0, |skipped| number(skipped.as_str())),
        total: None,
    }))
}

#[cfg(test)]
mod tests {
    use crate::metrics::tests::tests;

    #[test]
    fn regression_a_plain_line_that_repeats_unittests_summary_is_not_counted_twice() {
        let output = "\
test_add (tests.test_calc.TestCalc.test_add) ... ok
test_mul (tests.test_calc.TestCalc.test_mul) ... ERROR

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (errors=1)
1 passed, 1 failed
";
        assert_eq!(tests(output), Some((1.0, 1.0, 0.0, 2.0)));
    }

    #[test]
    fn plain_counts_line() {
        assert_eq!(tests("4 passed, 0 failed\n"), Some((4.0, 0.0, 0.0, 4.0)));
        assert_eq!(
            tests("Results: 4 passed, 1 failed, 2 skipped\n"),
            Some((4.0, 1.0, 2.0, 7.0))
        );
    }
}
