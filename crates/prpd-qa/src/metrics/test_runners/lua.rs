//! busted's default output: its summary line, and the heading over each failed, errored or
//! pending test (`Failure -> spec/calc_spec.lua @ 9`) whose next line is the test's name.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[(" / ", busted), (" -> ", busted_heading)];

/// `Failure -> spec/calc_spec.lua @ 9`, `Error -> …`, `Pending -> …`: the next line names the
/// test (or the file, when the error came before any test).
fn busted_heading(line: &str) -> Option<Finding> {
    let (word, _) = line.split_once(" -> ")?;
    match word {
        "Failure" | "Error" => Some(Finding::NameNext(Outcome::Failed)),
        "Pending" => Some(Finding::NameNext(Outcome::Skipped)),
        _ => None,
    }
}

/// `3 successes / 0 failures / 1 errors / 0 pending : 0.012 seconds`; one is `1 success`.
fn busted(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(\d+) success(?:es)? / (\d+) failures? / (\d+) errors? / (\d+) pending")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]).saturating_add(number(&captures[3])),
        skipped: number(&captures[4]),
        total: None,
    }))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn busted_names_failed_and_pending_tests() {
        let output = "\
+-*.
1 success / 1 failure / 1 error / 1 pending : 0.001 seconds

Pending -> spec/calc_spec.lua @ 20
calc rounds

Failure -> spec/calc_spec.lua @ 9
calc mul by zero
spec/calc_spec.lua:10: Expected objects to be equal.

Error -> spec/calc_spec.lua @ 14
calc divides
./calc.lua:4: attempt to perform arithmetic on local 'b' (a string value)
";
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("calc rounds"), Some(Outcome::Skipped));
        assert_eq!(cases.get("calc mul by zero"), Some(Outcome::Failed));
        assert_eq!(cases.get("calc divides"), Some(Outcome::Failed));
        assert_eq!(cases.len(), 3);
        assert_eq!(tests(output), Some((1.0, 2.0, 1.0, 4.0)));
    }

    #[test]
    fn busted_summary() {
        let output = "●●◼\n2 successes / 1 failure / 0 errors / 1 pending : 0.012 seconds\n";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }
}
