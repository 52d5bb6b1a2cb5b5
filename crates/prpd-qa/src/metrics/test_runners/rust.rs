//! cargo test's `test result:` line (one per test binary) and its per-test lines, and
//! nextest's `Summary` line and per-test lines.
//!
//! cargo's own lines start at the beginning of the line: nextest repeats a failed test's
//! captured output indented under it, `test result:` line included, and that copy must not be
//! counted a second time.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::metrics::{Finding, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("test result: ", cargo_test),
    ("Summary [", nextest),
    ("test ", cargo_case),
    ("s] ", nextest_case),
];

/// `test calc::tests::mul ... ok` (`FAILED`, `ignored`); doc-tests print
/// `test src/lib.rs - add (line 3) ... ok`.
fn cargo_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^test (\S.*?) \.\.\. (ok|FAILED|ignored)(?:, .*)?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[2] {
        "ok" => Outcome::Passed,
        "ignored" => Outcome::Skipped,
        _ => Outcome::Failed,
    };
    Some(Finding::Case(captures[1].to_owned(), outcome))
}

/// nextest's per-test line `        PASS [   0.006s] (1/4) calc tests::add_small`: the binary
/// and the test make the name. The counter `(1/4)` is absent in older versions.
fn nextest_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^\s+([A-Z][A-Z-]*) \[\s*[\d.]+s\] (?:\(\s*\d+/\d+\) )?(\S+ \S.*)$")
    });
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[1] {
        "PASS" | "FLAKY" => Outcome::Passed,
        "SKIP" => Outcome::Skipped,
        "FAIL" | "TIMEOUT" | "ABORT" | "LEAK-FAIL" => Outcome::Failed,
        word if word.starts_with("SIG") => Outcome::Failed,
        _ => return None,
    };
    Some(Finding::Case(captures[2].to_owned(), outcome))
}

/// `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s`
fn cargo_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
    });
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: number(&captures[3]),
        total: None,
    }))
}

/// `     Summary [   0.015s] 3 tests run: 2 passed, 1 failed, 1 skipped`; a run cancelled at
/// the first failure says `2/4 tests run`.
fn nextest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Summary \[[^\]]*\] (\d+)(?:/\d+)? tests? run: (.*)$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = count_items(ITEM.captures_iter(&captures[2]).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }));
    let run = number(&captures[1]);
    summary.total = Some(run.saturating_add(summary.skipped));
    Some(Finding::Tests(summary))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn cargo_test_names_each_test() {
        let output = "\
test parse::tests::empty ... ok
test parse::tests::full ... FAILED
test slow ... ignored, needs a network
test src/lib.rs - add (line 3) ... ok
test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("parse::tests::empty"), Some(Outcome::Passed));
        assert_eq!(cases.get("parse::tests::full"), Some(Outcome::Failed));
        assert_eq!(cases.get("slow"), Some(Outcome::Skipped));
        assert_eq!(
            cases.get("src/lib.rs - add (line 3)"),
            Some(Outcome::Passed)
        );
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }

    #[test]
    fn cargo_test_sums_every_binary() {
        let output = "\
running 2 tests
test parse::tests::empty ... ok
test parse::tests::full ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

running 3 tests
test it::a ... ok
test it::b ... ignored
test it::c ... ok

test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

   Doc-tests app

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        assert_eq!(tests(output), Some((3.0, 1.0, 1.0, 5.0)));
    }

    #[test]
    fn nextest_summary() {
        let output = "\
    Starting 4 tests across 2 binaries (1 test skipped)
        PASS [   0.004s] app tests::a
        FAIL [   0.005s] app tests::b
------------
     Summary [   0.015s] 3 tests run: 2 passed, 1 failed, 1 skipped
        FAIL [   0.005s] app tests::b
error: test run failed
";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
        let metrics = parse(output);
        assert_eq!(
            metrics.test_cases().get("app tests::b"),
            Some(Outcome::Failed)
        );
    }

    #[test]
    fn regression_nextest_captured_cargo_lines_are_not_counted_twice() {
        let output = "    Starting 2 tests across 1 binary
        FAIL [   0.005s] (1/2) calc tests::mul_zero
  stdout ───

    running 1 test
    test tests::mul_zero ... FAILED

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out; finished in 0.00s

  Cancelling due to test failure: 1 test still running
        PASS [   0.006s] (2/2) calc tests::add_small
     Summary [   0.006s] 2/2 tests run: 1 passed, 1 failed, 0 skipped
";
        assert_eq!(tests(output), Some((1.0, 1.0, 0.0, 2.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("tests::mul_zero"), None);
        assert_eq!(cases.get("calc tests::mul_zero"), Some(Outcome::Failed));
        assert_eq!(cases.get("calc tests::add_small"), Some(Outcome::Passed));
    }
}
