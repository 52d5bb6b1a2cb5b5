//! `dotnet test` (the `VSTest` runner and the .NET 9+ terminal logger): the per-assembly line
//! `Failed!  - Failed: 1, Passed: 2, Skipped: 0, Total: 3, Duration: 5 ms - Calc.Tests.dll (net8.0)`,
//! the terminal logger's `Test summary: total: 3, failed: 1, succeeded: 2, skipped: 0, …`,
//! `No test is available in …`, and the per-test lines `  Failed Calc.Tests.Multiplies [4 ms]`.
//!
//! Unlike the other families, these forms are read from the SDK's documented output, not from a
//! capture: the .NET SDK is in none of the registries this project's machines can reach
//! (`tests/fixtures/runner-output/README.md`).

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("!  - Failed:", vstest_summary),
    ("Test summary: total:", terminal_logger_summary),
    ("No test is available in ", no_test_available),
    (" [", test_line),
];

/// `Passed!  - Failed:     0, Passed:     2, Skipped:     0, Total:     2, Duration: 3 ms - x.dll (net8.0)`;
/// one per test assembly, summed like cargo's per-binary lines.
fn vstest_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+),\s+Passed:\s+(\d+),\s+Skipped:\s+(\d+),\s+Total:\s+(\d+)",
        )
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        failed: number(&captures[1]),
        passed: number(&captures[2]),
        skipped: number(&captures[3]),
        total: Some(number(&captures[4])),
    }))
}

/// `Test summary: total: 3, failed: 1, succeeded: 2, skipped: 0, duration: 1.4s`
fn terminal_logger_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)(?:,|$)",
        )
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        total: Some(number(&captures[1])),
        failed: number(&captures[2]),
        passed: number(&captures[3]),
        skipped: number(&captures[4]),
    }))
}

/// `No test is available in /src/Calc.Tests/bin/Debug/net8.0/Calc.Tests.dll. Make sure …`:
/// the assembly ran no test.
fn no_test_available(line: &str) -> Option<Finding> {
    line.trim_start()
        .starts_with("No test is available in ")
        .then_some(Finding::Tests(TestSummary::default()))
}

/// `  Failed Calc.Tests.CalcTests.Multiplies [4 ms]`, `  Passed Calc.Tests.CalcTests.Adds [1 ms]`,
/// `  Skipped Calc.Tests.CalcTests.Later [1 ms]` (passing ones at normal verbosity and above).
fn test_line(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^\s+(Passed|Failed|Skipped) ([\w.+`<>,()\x22 -]+?) \[(?:< ?)?\d+(?:\.\d+)? ?(?:ms|s|m)\]$",
        )
    });
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[1] {
        "Passed" => Outcome::Passed,
        "Failed" => Outcome::Failed,
        _ => Outcome::Skipped,
    };
    Some(Finding::Case(captures[2].to_owned(), outcome))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn vstest_summaries_are_summed_per_assembly() {
        let output = "\
Passed!  - Failed:     0, Passed:     2, Skipped:     0, Total:     2, Duration: 3 ms - Calc.Tests.dll (net8.0)
Failed!  - Failed:     1, Passed:     3, Skipped:     1, Total:     5, Duration: 12 ms - Text.Tests.dll (net8.0)
";
        assert_eq!(tests(output), Some((5.0, 1.0, 1.0, 7.0)));
    }

    #[test]
    fn terminal_logger_summary_and_no_tests() {
        assert_eq!(
            tests("Test summary: total: 3, failed: 1, succeeded: 2, skipped: 0, duration: 1.4s\n"),
            Some((2.0, 1.0, 0.0, 3.0))
        );
        let none = "No test is available in /src/Calc.Tests/bin/Debug/net8.0/Calc.Tests.dll. Make sure that test discoverer & executors are registered and platform & framework version settings are appropriate and try again.\n";
        assert_eq!(parse(none).tests_ran(), Some(0));
    }

    #[test]
    fn test_lines_name_each_outcome() {
        let output = "  Passed Calc.Tests.CalcTests.Adds [1 ms]
  Failed Calc.Tests.CalcTests.Multiplies [4 ms]
  Error Message:
   Assert.Equal() Failure: Values differ
  Skipped Calc.Tests.CalcTests.Later [< 1 ms]
Failed!  - Failed:     1, Passed:     1, Skipped:     1, Total:     3, Duration: 9 ms - Calc.Tests.dll (net8.0)
";
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(
            cases.get("Calc.Tests.CalcTests.Adds"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            cases.get("Calc.Tests.CalcTests.Multiplies"),
            Some(Outcome::Failed)
        );
        assert_eq!(
            cases.get("Calc.Tests.CalcTests.Later"),
            Some(Outcome::Skipped)
        );
        assert_eq!(tests(output), Some((1.0, 1.0, 1.0, 3.0)));
    }

    #[test]
    fn a_failing_assembly_is_never_read_as_passing() {
        let metrics = parse(
            "Failed!  - Failed:     2, Passed:     0, Skipped:     0, Total:     2, Duration: 3 ms - A.dll (net8.0)\n",
        );
        assert_eq!(metrics.tests_ran(), Some(2));
        assert_eq!(
            tests(
                "Failed!  - Failed:     2, Passed:     0, Skipped:     0, Total:     2, Duration: 3 ms - A.dll (net8.0)\n"
            ),
            Some((0.0, 2.0, 0.0, 2.0))
        );
    }
}
