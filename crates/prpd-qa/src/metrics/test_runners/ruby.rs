//! Ruby runners: RSpec's `3 examples, 1 failure, 1 pending` line with its `Failures:` and
//! `Pending:` lists, and minitest's `4 runs, 4 assertions, 0 failures, 0 errors, 0 skips`
//! line with its numbered `Failure:` / `Error:` headings.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried: minitest's numbered headings before
/// RSpec's numbered list items, which they resemble.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    (" example", rspec_summary),
    (":", rspec_heading),
    ("Finished in ", finished),
    (" runs, ", minitest_summary),
    (") ", minitest_heading),
    (") ", rspec_item),
];

/// `3 examples, 2 failures, 1 pending`, and when a file does not load,
/// `0 examples, 0 failures, 1 error occurred outside of examples`.
fn rspec_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?$",
        )
    });
    let captures = PATTERN.captures(line.trim())?;
    let count = |index| captures.get(index).map_or(0, |text| number(text.as_str()));
    let failures = count(2);
    let pending = count(3);
    Some(Finding::Tests(TestSummary {
        passed: count(1).saturating_sub(failures).saturating_sub(pending),
        failed: failures.saturating_add(count(4)),
        skipped: pending,
        total: None,
    }))
}

/// `Failures:` and `Pending: (Failures listed here are expected …)` open RSpec's lists of
/// tests; `Failed examples:` repeats the failures as commands and closes the list.
fn rspec_heading(line: &str) -> Option<Finding> {
    let line = line.trim_end();
    if line == "Failures:" {
        Some(Finding::ListHeading(Some(Outcome::Failed)))
    } else if line == "Pending:" || line.starts_with("Pending: (") {
        Some(Finding::ListHeading(Some(Outcome::Skipped)))
    } else if line == "Failed examples:" {
        Some(Finding::ListHeading(None))
    } else {
        None
    }
}

/// `Finished in 0.01 seconds`: the lists above it end (RSpec, minitest and ExUnit print it).
fn finished(line: &str) -> Option<Finding> {
    line.trim_start()
        .starts_with("Finished in ")
        .then_some(Finding::ListHeading(None))
}

/// An RSpec list item, two spaces in: `  1) Calc.mul multiplies by zero`.
fn rspec_item(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^  \d+\) (\S.*)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::ListItem(captures[1].to_owned()))
}

/// `4 runs, 3 assertions, 1 failures, 1 errors, 0 skips`
fn minitest_summary(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips$")
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

/// `  1) Failure:`, `  2) Error:`, `  3) Skipped:` (under `--verbose`): the next line names the
/// test, `CalcTest#test_mul_zero [test/calc_test.rb:10]:`.
fn minitest_heading(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\s*\d+\) (Failure|Error|Skipped):$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[1] {
        "Skipped" => Outcome::Skipped,
        _ => Outcome::Failed,
    };
    Some(Finding::NameNext(outcome))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn rspec_lists_name_failed_and_pending_examples() {
        let output = "\
.F*

Pending: (Failures listed here are expected and do not affect your suite's status)

  1) Calc divides
     # Temporarily skipped with xit

Failures:

  1) Calc.mul multiplies by zero
     Failure/Error: expect(Calc.mul(2, 0)).to eq(1)

Finished in 0.01 seconds (files took 0.06 seconds to load)
3 examples, 1 failure, 1 pending

Failed examples:

rspec ./spec/calc_spec.rb:9 # Calc.mul multiplies by zero
";
        assert_eq!(tests(output), Some((1.0, 1.0, 1.0, 3.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("Calc divides"), Some(Outcome::Skipped));
        assert_eq!(
            cases.get("Calc.mul multiplies by zero"),
            Some(Outcome::Failed)
        );
        assert_eq!(cases.len(), 2);
    }

    #[test]
    fn rspec_error_outside_examples_is_a_failure() {
        let output = "0 examples, 0 failures, 1 error occurred outside of examples\n";
        assert_eq!(tests(output), Some((0.0, 1.0, 0.0, 1.0)));
    }

    #[test]
    fn numbered_lines_outside_a_list_name_nothing() {
        assert!(parse("  1) unpack the archive\n").test_cases().is_empty());
    }

    #[test]
    fn minitest_summary_and_names() {
        let output = "\
FE..

  1) Failure:
CalcTest#test_mul_zero [/tmp/calc/test/calc_test.rb:10]:
Expected: 1
  Actual: 0

  2) Error:
CalcTest#test_divides:
ZeroDivisionError: divided by 0

4 runs, 3 assertions, 1 failures, 1 errors, 0 skips
";
        assert_eq!(tests(output), Some((2.0, 2.0, 0.0, 4.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("CalcTest#test_mul_zero"), Some(Outcome::Failed));
        assert_eq!(cases.get("CalcTest#test_divides"), Some(Outcome::Failed));
    }
}
