//! ExUnit (`mix test`): the `3 tests, 1 failure, 1 skipped` line, `There are no tests to run`,
//! and the numbered failures `  1) test divides (CalcTest)`.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    (" failure", exunit_summary),
    ("There are no tests to run", exunit_none),
    (") ", exunit_failure),
];

/// `3 tests, 0 failures`, `1 doctest, 3 tests, 2 failures, 1 excluded, 1 skipped`,
/// `2 properties, 3 tests, 1 failure, 1 invalid`. Failed, invalid and skipped tests are
/// among the tests counted first; excluded ones did not run and are not.
fn exunit_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\d+ (?:doctests?|tests?|propert(?:y|ies))(?:, \d+ [a-z]+)*$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let line = line.trim();
    if !PATTERN.is_match(line) {
        return None;
    }
    let mut total = 0u32;
    let mut summary = TestSummary::default();
    for item in ITEM.captures_iter(line) {
        let count = number(&item[1]);
        match &item[2] {
            "doctest" | "doctests" | "test" | "tests" | "property" | "properties" => {
                total = total.saturating_add(count);
            }
            "failure" | "failures" | "invalid" => {
                summary.failed = summary.failed.saturating_add(count);
            }
            "skipped" => summary.skipped = summary.skipped.saturating_add(count),
            _ => {}
        }
    }
    summary.passed = total
        .saturating_sub(summary.failed)
        .saturating_sub(summary.skipped);
    Some(Finding::Tests(summary))
}

/// `There are no tests to run`
fn exunit_none(line: &str) -> Option<Finding> {
    (line.trim() == "There are no tests to run").then_some(Finding::Tests(TestSummary::default()))
}

/// `  1) test mul by zero (CalcTest)`, `  2) doctest Calc.add/2 (1) (CalcTest)`.
fn exunit_failure(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\s+\d+\) ((?:test|doctest|property) .+ \([\w.]+\))$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::Case(captures[1].to_owned(), Outcome::Failed))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn exunit_summaries() {
        assert_eq!(tests("3 tests, 0 failures\n"), Some((3.0, 0.0, 0.0, 3.0)));
        assert_eq!(
            tests("1 doctest, 3 tests, 2 failures, 1 excluded, 1 skipped\n"),
            Some((1.0, 2.0, 1.0, 4.0))
        );
        assert_eq!(parse("There are no tests to run\n").tests_ran(), Some(0));
    }

    #[test]
    fn exunit_names_failed_tests() {
        let output = ".
  1) test mul by zero (CalcTest)
     test/calc_test.exs:9
     Assertion with == failed

3 tests, 1 failure
";
        let metrics = parse(output);
        assert_eq!(
            metrics.test_cases().get("test mul by zero (CalcTest)"),
            Some(Outcome::Failed)
        );
        assert_eq!(tests(output), Some((2.0, 1.0, 0.0, 3.0)));
    }
}
