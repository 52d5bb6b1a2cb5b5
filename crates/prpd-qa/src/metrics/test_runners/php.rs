//! PHPUnit: `OK (3 tests, 3 assertions)`, the `Tests: 3, Assertions: 2, Failures: 1.` line of a
//! run that did not simply pass, `No tests executed!`, and the numbered lists under
//! `There was 1 error:` / `There were 2 failures:` that name the tests.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("OK (", phpunit_ok),
    ("Tests: ", phpunit_counts),
    ("No tests executed!", phpunit_none),
    ("There w", phpunit_heading),
    (") ", phpunit_item),
];

/// `OK (3 tests, 3 assertions)`
fn phpunit_ok(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^OK \((\d+) tests?, \d+ assertions?\)$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        ..TestSummary::default()
    }))
}

/// `Tests: 3, Assertions: 2, Errors: 1, Failures: 1.` or
/// `Tests: 3, Assertions: 1, Skipped: 1, Incomplete: 1.` Errors and failures failed;
/// skipped and incomplete tests did not pass; risky tests and warnings ran and passed.
fn phpunit_counts(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests: (\d+), Assertions: \d+((?:, [A-Za-z]+: \d+)*)\.$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"([A-Za-z]+): (\d+)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = TestSummary::default();
    for item in ITEM.captures_iter(&captures[2]) {
        let count = number(&item[2]);
        match &item[1] {
            "Errors" | "Failures" => summary.failed = summary.failed.saturating_add(count),
            "Skipped" | "Incomplete" => summary.skipped = summary.skipped.saturating_add(count),
            _ => {}
        }
    }
    summary.passed = number(&captures[1])
        .saturating_sub(summary.failed)
        .saturating_sub(summary.skipped);
    Some(Finding::Tests(summary))
}

/// `No tests executed!`
fn phpunit_none(line: &str) -> Option<Finding> {
    (line.trim() == "No tests executed!").then_some(Finding::Tests(TestSummary::default()))
}

/// `There was 1 error:`, `There were 2 failures:`, `There was 1 skipped test:`,
/// `There was 1 incomplete test:`, `There was 1 risky test:`.
fn phpunit_heading(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^There (?:was|were) \d+ (error|failure|skipped|incomplete|risky|warning)")
    });
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[1] {
        "error" | "failure" => Some(Outcome::Failed),
        "skipped" | "incomplete" => Some(Outcome::Skipped),
        _ => None,
    };
    Some(Finding::ListHeading(outcome))
}

/// A test in PHPUnit's lists: `1) CalcTest::testDivides`, with a data set when there is one
/// (`2) CalcTest::testAdd with data set #1 (2, 2)`).
fn phpunit_item(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^\d+\) (\S+::\S.*)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::ListItem(captures[1].to_owned()))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn phpunit_summaries() {
        assert_eq!(
            tests("OK (3 tests, 3 assertions)\n"),
            Some((3.0, 0.0, 0.0, 3.0))
        );
        assert_eq!(
            tests("Tests: 3, Assertions: 1, Skipped: 1, Incomplete: 1.\n"),
            Some((1.0, 0.0, 2.0, 3.0))
        );
        assert_eq!(parse("No tests executed!\n").tests_ran(), Some(0));
    }

    #[test]
    fn phpunit_lists_name_the_failed_tests() {
        let output = "\
There was 1 error:

1) CalcTest::testDivides
DivisionByZeroError: Division by zero

--

There was 1 failure:

1) CalcTest::testMulZero
Failed asserting that 0 is identical to 1.

ERRORS!
Tests: 3, Assertions: 2, Errors: 1, Failures: 1.
";
        assert_eq!(tests(output), Some((1.0, 2.0, 0.0, 3.0)));
        let metrics = parse(output);
        assert_eq!(
            metrics.test_cases().get("CalcTest::testDivides"),
            Some(Outcome::Failed)
        );
        assert_eq!(metrics.test_cases().len(), 2);
    }
}
