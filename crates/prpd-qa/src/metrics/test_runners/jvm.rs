//! JVM build tools: Maven Surefire's `Results:` line `Tests run: 4, Failures: 1, Errors: 1,
//! Skipped: 0` with its `<<< FAILURE!` lines, and Gradle's `4 tests completed, 2 failed` with
//! its `calc.CalcTest > divides FAILED` lines. Tests are named `package.Class.method`.
//!
//! Surefire also prints one `Tests run:` line per test class, ending `Time elapsed: … - in
//! calc.CalcTest`; only the closing line (no time) is counted, once per module. Gradle prints
//! no figure at all when every test passed.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("Tests run: ", surefire_results),
    ("Time elapsed: ", surefire_failure),
    (" completed, ", gradle_summary),
    (" > ", gradle_case),
];

/// `[ERROR] Tests run: 4, Failures: 1, Errors: 1, Skipped: 0`
fn surefire_results(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(?:\[(?:INFO|WARNING|ERROR)\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)$",
        )
    });
    let captures = PATTERN.captures(line.trim())?;
    let failed = number(&captures[2]).saturating_add(number(&captures[3]));
    let skipped = number(&captures[4]);
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1])
            .saturating_sub(failed)
            .saturating_sub(skipped),
        failed,
        skipped,
        total: None,
    }))
}

/// `[ERROR] divides(calc.CalcTest)  Time elapsed: 0.01 s  <<< ERROR!` (Surefire 2) or
/// `[ERROR] calc.CalcTest.divides -- Time elapsed: 0.01 s <<< FAILURE!` (Surefire 3).
fn surefire_failure(line: &str) -> Option<Finding> {
    static OLD: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^\[ERROR\] ([\w$]+)\(([\w.$]+)\)\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!$")
    });
    static NEW: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^\[ERROR\] ([\w.$]+\.[\w$]+) -- Time elapsed: .*<<< (?:FAILURE|ERROR)!$")
    });
    let line = line.trim_end();
    if let Some(captures) = OLD.captures(line) {
        return Some(Finding::Case(
            format!("{}.{}", &captures[2], &captures[1]),
            Outcome::Failed,
        ));
    }
    let captures = NEW.captures(line)?;
    Some(Finding::Case(captures[1].to_owned(), Outcome::Failed))
}

/// `4 tests completed, 2 failed` (`, 1 skipped`).
fn gradle_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?$"));
    let captures = PATTERN.captures(line.trim())?;
    let failed = number(&captures[2]);
    let skipped = captures.get(3).map_or(0, |text| number(text.as_str()));
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1])
            .saturating_sub(failed)
            .saturating_sub(skipped),
        failed,
        skipped,
        total: None,
    }))
}

/// `calc.CalcTest > divides FAILED` (and `PASSED` / `SKIPPED` when the build logs them).
fn gradle_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^([\w.$]+) > (.+?) (PASSED|FAILED|SKIPPED)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[3] {
        "PASSED" => Outcome::Passed,
        "SKIPPED" => Outcome::Skipped,
        _ => Outcome::Failed,
    };
    Some(Finding::Case(
        format!("{}.{}", &captures[1], &captures[2]),
        outcome,
    ))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn surefire_counts_the_results_line_only() {
        let output = "\
[INFO] Running calc.CalcTest
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.09 s <<< FAILURE! - in calc.CalcTest
[ERROR] multipliesByZero(calc.CalcTest)  Time elapsed: 0.001 s  <<< FAILURE!
[ERROR] calc.CalcTest.divides -- Time elapsed: 0.01 s <<< ERROR!
[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0 s - in calc.StrsTest
[INFO] Results:
[ERROR] Tests run: 4, Failures: 1, Errors: 1, Skipped: 0
";
        assert_eq!(tests(output), Some((2.0, 2.0, 0.0, 4.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(
            cases.get("calc.CalcTest.multipliesByZero"),
            Some(Outcome::Failed)
        );
        assert_eq!(cases.get("calc.CalcTest.divides"), Some(Outcome::Failed));
    }

    #[test]
    fn gradle_summary_and_names() {
        let output = "\
calc.CalcTest > divides FAILED
    java.lang.ArithmeticException at CalcTest.java:22

4 tests completed, 1 failed, 1 skipped
";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
        assert_eq!(
            parse(output).test_cases().get("calc.CalcTest.divides"),
            Some(Outcome::Failed)
        );
    }
}
