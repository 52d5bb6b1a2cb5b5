//! Python runners: pytest's summary line in all its forms and the lines that name its tests
//! (`-v`, xdist's `-v`, the short summary of `-r`), and unittest's (and nose2's, which prints
//! the same) `Ran N tests` with the result line after it, the per-test lines under `-v` and the
//! `FAIL: name (id)` headers of its failure details.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    (" in ", pytest),
    (".py", pytest_case),
    ("Ran ", unittest_ran),
    ("", unittest_result),
    (": ", unittest_failure),
    ("test", unittest_case),
    ("", unittest_outcome),
];

/// A pytest node id's outcome word.
fn pytest_word(word: &str) -> Option<Outcome> {
    match word {
        "PASSED" | "XPASS" => Some(Outcome::Passed),
        "FAILED" | "ERROR" => Some(Outcome::Failed),
        "SKIPPED" | "XFAIL" => Some(Outcome::Skipped),
        _ => None,
    }
}

/// pytest's lines that name a test: `tests/test_calc.py::test_mul FAILED   [ 50%]` (`-v`),
/// `[gw1] [100%] FAILED tests/test_calc.py::test_mul` (xdist `-v`) and the short summary's
/// `FAILED tests/test_calc.py::test_mul - assert 6 == 5` (`-r`, failures and errors by
/// default), where a collection error names the module: `ERROR tests/test_calc.py`.
fn pytest_case(line: &str) -> Option<Finding> {
    static VERBOSE: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(\S+\.py::\S.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: .*)?$")
    });
    static SHORT: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(?:\[gw\d+\] \[\s*\d+%\] )?(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+\.py(?:::\S+)?)(?: - .*)?$",
        )
    });
    let line = line.trim_end();
    if let Some(captures) = SHORT.captures(line) {
        return Some(Finding::Case(
            captures[2].to_owned(),
            pytest_word(&captures[1])?,
        ));
    }
    let captures = VERBOSE.captures(line)?;
    Some(Finding::Case(
        captures[1].to_owned(),
        pytest_word(&captures[2])?,
    ))
}

/// unittest's `Ran 4 tests in 0.001s`.
fn unittest_ran(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^Ran (\d+) tests? in [\d.]+s$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::RanTests(number(&captures[1])))
}

/// unittest's result line after `Ran N tests`: `OK`, `NO TESTS RAN` (Python 3.12+),
/// `OK (skipped=1, expected failures=1)` or `FAILED (failures=1, errors=1)`. An unexpected
/// success fails unittest's run (`FAILED (unexpected successes=1)`) but not nose2's (`OK (…)`),
/// so it counts as the run says.
fn unittest_result(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(OK|FAILED|NO TESTS RAN)(?: \(((?:[a-z ]+=\d+(?:, )?)+)\))?$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"([a-z ]+)=(\d+)"));
    if !(line.starts_with("OK") || line.starts_with("FAILED") || line.starts_with("NO TESTS")) {
        return None;
    }
    let captures = PATTERN.captures(line.trim_end())?;
    let run_failed = &captures[1] == "FAILED";
    let mut result = TestSummary::default();
    for item in captures
        .get(2)
        .map_or("", |items| items.as_str())
        .split(", ")
        .filter_map(|item| ITEM.captures(item))
    {
        let count = number(&item[2]);
        match &item[1] {
            "failures" | "errors" => result.failed = result.failed.saturating_add(count),
            "skipped" | "expected failures" => {
                result.skipped = result.skipped.saturating_add(count);
            }
            "unexpected successes" if run_failed => {
                result.failed = result.failed.saturating_add(count);
            }
            _ => {}
        }
    }
    Some(Finding::RanResult(result))
}

/// The header of one of unittest's failure details: `FAIL: test_mul (test_calc.TestCalc.test_mul)`,
/// `ERROR: …`, and `UNEXPECTED SUCCESS: …`, which fails unittest's run (nose2 prints none).
fn unittest_failure(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): ([\w.]+) \(([\w.]+)\)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::Case(
        unittest_name(&captures[1], &captures[2]),
        Outcome::Failed,
    ))
}

/// unittest's id of a test: `test_calc.TestCalc.test_mul`, whether the line printed it whole
/// (Python 3.11+) or as the class and the method (before).
fn unittest_name(method: &str, qualified: &str) -> String {
    if qualified.ends_with(&format!(".{method}")) {
        qualified.to_owned()
    } else {
        format!("{qualified}.{method}")
    }
}

/// unittest `-v`: `test_mul (test_calc.TestCalc.test_mul) ... ok` (Python 3.11+) or
/// `test_mul (test_calc.TestCalc) ... FAIL` (before). When the test writes output, the line
/// stops after `... ` and the outcome comes on a later line of its own; when the test has a
/// docstring, the name stands alone and its first line follows as `Doc line. ... ok`. A
/// module of a package that could not load is named by its dotted path:
/// `tests.test_calc (unittest.loader._FailedTest.tests.test_calc) ... ERROR`.
fn unittest_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^([\w.]+) \(([\w.]+)\)(?: \.\.\.(?: (.*))?)?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let name = unittest_name(&captures[1], &captures[2]);
    match captures.get(3).map(|rest| unittest_word(rest.as_str())) {
        Some(Some(outcome)) => Some(Finding::Case(name, outcome)),
        Some(None) | None => Some(Finding::CaseStarted(name)),
    }
}

/// The outcome of a unittest `-v` test whose name came on an earlier line: the word alone
/// after the test's output, or a docstring line ending in ` ... word`.
fn unittest_outcome(line: &str) -> Option<Finding> {
    let line = line.trim();
    let word = line.rsplit_once(" ... ").map_or(line, |(_, word)| word);
    unittest_word(word).map(Finding::CaseEnded)
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
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn unittest_verbose_names_each_test() {
        let output = "\
test_add (test_calc.TestCalc.test_add) ... ok
test_mul (test_calc.TestCalc) ... FAIL
test_noisy (test_calc.TestCalc.test_noisy) ... printing something
ok
test_old (test_calc.TestCalc.test_old) ... skipped 'obsolete'
test_wip (test_calc.TestCalc.test_wip) ... expected failure
test_doc (test_calc.TestCalc.test_doc)
AC-1: multiply returns the product. ... ok
tests.test_sign (unittest.loader._FailedTest.tests.test_sign) ... ERROR
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
        assert_eq!(
            cases.get("test_calc.TestCalc.test_doc"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            cases.get("unittest.loader._FailedTest.tests.test_sign"),
            Some(Outcome::Failed),
            "a package's module that could not load"
        );
        assert_eq!(tests(output), Some((3.0, 2.0, 2.0, 7.0)));
    }

    #[test]
    fn unittest_ran_line_and_result_line_make_the_counts() {
        let failing = "\
.Ewarning: slow path
.F
======================================================================
ERROR: test_divide (test_calc.TestCalc.test_divide)
----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1)
";
        assert_eq!(tests(failing), Some((2.0, 2.0, 0.0, 4.0)));
        assert_eq!(
            parse(failing)
                .test_cases()
                .get("test_calc.TestCalc.test_divide"),
            Some(Outcome::Failed)
        );
        let no_tests = "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nOK\n";
        assert_eq!(parse(no_tests).tests_ran(), Some(0));
        assert_eq!(tests("OK\n"), None);
    }

    #[test]
    fn an_unexpected_success_counts_as_the_run_says() {
        let unittest = "Ran 4 tests in 0.000s\n\nFAILED (skipped=1, expected failures=1, unexpected successes=1)\n";
        assert_eq!(tests(unittest), Some((1.0, 1.0, 2.0, 4.0)));
        let nose2 = "Ran 4 tests in 0.000s\n\nOK (skipped=1, expected failures=1, unexpected successes=1)\n";
        assert_eq!(tests(nose2), Some((2.0, 0.0, 2.0, 4.0)));
    }

    #[test]
    fn pytest_names_tests_in_verbose_xdist_and_short_summary_lines() {
        let output = "\
tests/test_calc.py::test_add PASSED                                      [ 25%]
tests/test_calc.py::test_mul SKIPPED (not ready)                         [ 50%]
[gw1] [100%] FAILED tests/test_calc.py::test_div[0-1] 
XFAIL tests/test_calc.py::test_half - rounding
ERROR tests/test_other.py - ImportError while importing test module '/tmp/x/tests/test_other.py'.
SKIPPED [1] tests/test_calc.py:10: not ready
";
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(
            cases.get("tests/test_calc.py::test_add"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            cases.get("tests/test_calc.py::test_mul"),
            Some(Outcome::Skipped)
        );
        assert_eq!(
            cases.get("tests/test_calc.py::test_div[0-1]"),
            Some(Outcome::Failed)
        );
        assert_eq!(
            cases.get("tests/test_calc.py::test_half"),
            Some(Outcome::Skipped)
        );
        assert_eq!(cases.get("tests/test_other.py"), Some(Outcome::Failed));
        assert_eq!(cases.len(), 5);
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
