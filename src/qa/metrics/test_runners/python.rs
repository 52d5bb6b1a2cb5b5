//! Python runners: pytest's summary line in all its forms, and unittest's per-test lines
//! under `-v`.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::qa::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    (" in ", pytest),
    ("test", unittest_case),
    ("", unittest_outcome),
];

/// unittest `-v`: `test_mul (test_calc.TestCalc.test_mul) ... ok` (Python 3.11+) or
/// `test_mul (test_calc.TestCalc) ... FAIL` (before). When the test writes output, the line
/// stops after `... ` and the outcome comes on a later line of its own.
fn unittest_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\w+) \(([\w.]+)\) \.\.\.(?: (.*))?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let method = &captures[1];
    let qualified = &captures[2];
    let name = if qualified.ends_with(&format!(".{method}")) {
        qualified.to_owned()
    } else {
        format!("{qualified}.{method}")
    };
    match captures.get(3).map(|rest| unittest_word(rest.as_str())) {
        Some(Some(outcome)) => Some(Finding::Case(name, outcome)),
        Some(None) | None => Some(Finding::CaseStarted(name)),
    }
}

/// The outcome word of a unittest `-v` line, alone on its line after a test's output.
fn unittest_outcome(line: &str) -> Option<Finding> {
    unittest_word(line.trim()).map(Finding::CaseEnded)
}

fn unittest_word(word: &str) -> Option<Outcome> {
    match word {
        "ok" | "unexpected success" => Some(Outcome::Passed),
        "FAIL" | "ERROR" => Some(Outcome::Failed),
        "expected failure" => Some(Outcome::Skipped),
        _ if word.starts_with("skipped") => Some(Outcome::Skipped),
        _ => None,
    }
}

/// `==== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ====`, `3 passed in 0.01s` (`-q`)
/// and `==== no tests ran in 0.01s ====`.
fn pytest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^=*\s*(\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+m?s(?: \([^)]*\))?\s*=*$")
    });
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    if &captures[1] == "no tests ran" {
        return Some(Finding::Tests(TestSummary::default()));
    }
    Some(Finding::Tests(count_items(
        ITEM.captures_iter(&captures[1]).map(|item| {
            (
                number(&item[1]),
                item.get(2).map_or("", |word| word.as_str()),
            )
        }),
    )))
}

#[cfg(test)]
mod tests {
    use crate::qa::metrics::Outcome;
    use crate::qa::metrics::tests::{parse, tests};

    #[test]
    fn unittest_verbose_names_each_test() {
        let output = "\
test_add (test_calc.TestCalc.test_add) ... ok
test_mul (test_calc.TestCalc) ... FAIL
test_noisy (test_calc.TestCalc.test_noisy) ... printing something
ok
test_old (test_calc.TestCalc.test_old) ... skipped 'obsolete'
test_wip (test_calc.TestCalc.test_wip) ... expected failure
";
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(
            cases.get("test_calc.TestCalc.test_add"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            cases.get("test_calc.TestCalc.test_mul"),
            Some(Outcome::Failed)
        );
        assert_eq!(
            cases.get("test_calc.TestCalc.test_noisy"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            cases.get("test_calc.TestCalc.test_old"),
            Some(Outcome::Skipped)
        );
        assert_eq!(
            cases.get("test_calc.TestCalc.test_wip"),
            Some(Outcome::Skipped)
        );
        assert_eq!(tests(output), Some((2.0, 1.0, 2.0, 5.0)));
    }

    #[test]
    fn pytest_summaries() {
        let banner = "\
============================= test session starts ==============================
collected 6 items

tests/test_app.py ...F.s                                                 [100%]
=================== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ===================
";
        assert_eq!(tests(banner), Some((3.0, 1.0, 2.0, 6.0)));
        assert_eq!(tests("5 passed in 0.03s\n"), Some((5.0, 0.0, 0.0, 5.0)));
        assert_eq!(
            tests(
                "============================ no tests ran in 0.01s =============================\n"
            ),
            Some((0.0, 0.0, 0.0, 0.0))
        );
        assert_eq!(
            tests("==== 1 failed, 2 passed, 1 error in 1.50s ====\n"),
            Some((2.0, 2.0, 0.0, 4.0))
        );
    }
}
