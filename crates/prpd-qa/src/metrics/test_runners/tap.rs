//! The Test Anything Protocol, which many runners speak (bats, prove's raw output,
//! `node --test --test-reporter=tap`, mocha's and busted's TAP reporters, node-tap): one
//! `ok N - name` or `not ok N - name` line per test and a plan line `1..N`.
//!
//! Only top-level lines count (TAP 14 indents subtests under their parent, whose own line
//! carries the result). A `# SKIP` directive is a skipped test and a `# TODO` one is not a
//! pass either way. Passing and skipped test lines are counted only when the output also holds
//! a plan, so a build log line such as `ok 2 files` is not taken for a test; a `not ok` line
//! always counts, because a runner that crashes before printing its plan (busted's TAP
//! reporter does) has still failed. A plan `1..0` says the run had no test.
//!
//! prove, the TAP harness, closes with `Files=2, Tests=5,` and lists under `Test Summary
//! Report` each file that failed, with how many of its tests failed.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::metrics::{Finding, Outcome, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("ok", test_line),
    ("1..", plan),
    ("Files=", prove_files),
    (" (Wstat: ", prove_failed_file),
];

/// `ok 1 - adds`, `not ok 2 - divides # TODO later`, `ok 3 # SKIP no network`. busted writes
/// the name after the directive (`ok 3 - # SKIP calc divides`): a line with a dash and no
/// description before the directive is named by the directive's text.
fn test_line(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(not ok|ok)(?:\s+(\d+))?\b\s*(-\s*)?([^#]*?)\s*(?:#\s*([A-Za-z]+)\b\s*(.*))?$")
    });
    if !(line.starts_with("ok") || line.starts_with("not ok")) {
        return None;
    }
    let captures = PATTERN.captures(line.trim_end())?;
    let directive = captures
        .get(5)
        .map(|directive| directive.as_str().to_ascii_lowercase());
    let outcome = match (&captures[1], directive.as_deref()) {
        (_, Some(word)) if word.starts_with("skip") || word == "todo" => Outcome::Skipped,
        ("ok", _) => Outcome::Passed,
        _ => Outcome::Failed,
    };
    let description = captures.get(4).map_or("", |text| text.as_str());
    let reason = captures.get(6).map_or("", |text| text.as_str().trim());
    let name = match (description.is_empty(), captures.get(3).is_some()) {
        (false, _) => description,
        (true, true) if directive.is_some() && !reason.is_empty() => reason,
        (true, _) => captures.get(2)?.as_str(),
    };
    Some(match outcome {
        Outcome::Failed => Finding::Case(name.to_owned(), outcome),
        Outcome::Passed | Outcome::Skipped => Finding::TapCase(name.to_owned(), outcome),
    })
}

/// `1..3`, `1..0 # SKIP no tests here`.
fn plan(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^1\.\.(\d+)(?:\s*#.*)?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::TapPlan(number(&captures[1])))
}

/// prove's closing line: `Files=2, Tests=5,  0 wallclock secs (…)`.
fn prove_files(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^Files=\d+, Tests=(\d+),"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::ProveTests(number(&captures[1])))
}

/// A file in prove's `Test Summary Report`: `t/calc.t (Wstat: 512 (exited 2) Tests: 3 Failed: 2)`.
fn prove_failed_file(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\S+ \(Wstat: .*Tests: \d+ Failed: (\d+)\)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::ProveFailedFile(number(&captures[1])))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn tap_lines_with_a_plan_are_counted_and_named() {
        let output = "\
1..4
ok 1 - adds
not ok 2 - divides by zero
# expected 0, got NaN
ok 3 multiplies # SKIP no multiplier yet
not ok 4 - rounds # TODO later
";
        assert_eq!(tests(output), Some((1.0, 1.0, 2.0, 4.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("adds"), Some(Outcome::Passed));
        assert_eq!(cases.get("divides by zero"), Some(Outcome::Failed));
        assert_eq!(cases.get("multiplies"), Some(Outcome::Skipped));
        assert_eq!(cases.get("rounds"), Some(Outcome::Skipped));
    }

    #[test]
    fn tap_lines_without_a_plan_are_not_tests() {
        assert_eq!(tests("ok 2 files copied\nbuild done\n"), None);
    }

    #[test]
    fn a_failure_without_a_plan_still_fails() {
        let output =
            "lua: TAP.lua:44: attempt to concatenate a nil value\nnot ok 1 - spec/calc_spec.lua\n";
        assert_eq!(tests(output), Some((0.0, 1.0, 0.0, 1.0)));
    }

    #[test]
    fn an_empty_plan_ran_no_test() {
        assert_eq!(parse("1..0\n").tests_ran(), Some(0));
    }

    #[test]
    fn busted_names_a_skipped_test_after_the_directive() {
        let output = "ok 1 - calc adds\nok 2 - # SKIP calc divides\n1..2\n";
        let metrics = parse(output);
        assert_eq!(
            metrics.test_cases().get("calc divides"),
            Some(Outcome::Skipped)
        );
        let unnamed = parse("ok 1 - adds\nok 2 # skip no divide yet\n1..2\n");
        assert_eq!(unnamed.test_cases().get("2"), Some(Outcome::Skipped));
    }

    #[test]
    fn prove_counts_a_file_that_died_after_its_tests_as_a_failure() {
        let output = "\
t/calc.t ..
Dubious, test returned 2 (wstat 512, 0x200)
Failed 2/3 subtests
t/strs.t ..
Dubious, test returned 255 (wstat 65280, 0xff00)
All 2 subtests passed

Test Summary Report
-------------------
t/calc.t (Wstat: 512 (exited 2) Tests: 3 Failed: 2)
  Failed tests:  2-3
  Non-zero exit status: 2
t/strs.t (Wstat: 65280 (exited 255) Tests: 2 Failed: 0)
  Non-zero exit status: 255
Files=2, Tests=5,  0 wallclock secs ( 0.01 usr  0.01 sys +  0.07 cusr  0.00 csys =  0.09 CPU)
Result: FAIL
";
        assert_eq!(tests(output), Some((3.0, 3.0, 0.0, 6.0)));
        let none = "Files=0, Tests=0,  0 wallclock secs ( 0.00 usr +  0.00 sys =  0.00 CPU)\nResult: NOTESTS\n";
        assert_eq!(parse(none).tests_ran(), Some(0));
    }

    #[test]
    fn an_unnamed_tap_test_is_named_by_its_number() {
        let metrics = parse("ok 1\nnot ok 2\n1..2\n");
        assert_eq!(metrics.test_cases().get("2"), Some(Outcome::Failed));
        assert_eq!(metrics.tests_ran(), Some(2));
    }

    #[test]
    fn indented_subtest_lines_are_left_to_their_parent() {
        let output = "1..1\n    ok 1 - inner\nok 1 - outer\n";
        let metrics = parse(output);
        assert_eq!(metrics.test_cases().len(), 1);
        assert_eq!(metrics.test_cases().get("outer"), Some(Outcome::Passed));
    }
}
