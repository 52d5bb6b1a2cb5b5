//! Test runners' summary lines: cargo test, nextest, jest, vitest, node --test, busted, pytest,
//! go test and the plain `N passed, N failed` line.
//!
//! They live together because they share one vocabulary: each runner counts passed, failed and
//! skipped tests under its own words (`successes`, `pending`, `ignored`), and [`count_items`]
//! maps those words onto one [`TestSummary`], so a new runner only needs its line's pattern.

use std::sync::LazyLock;

use regex::Regex;

use super::{Finding, GoPackage, GoResult, TestSummary, number, regex};

/// Reads `N word` items (`3 passed`, `1 failed`) into a summary with the given vocabulary.
fn count_items<'a>(items: impl Iterator<Item = (u32, &'a str)>) -> TestSummary {
    let mut summary = TestSummary::default();
    for (count, word) in items {
        match word.to_ascii_lowercase().as_str() {
            "passed" | "pass" | "passing" | "xpassed" | "successes" | "success" => {
                summary.passed = summary.passed.saturating_add(count);
            }
            "failed" | "fail" | "failing" | "failures" | "failure" | "errors" | "error"
            | "cancelled" | "timed" => summary.failed = summary.failed.saturating_add(count),
            "skipped" | "skip" | "pending" | "ignored" | "xfailed" | "todo" => {
                summary.skipped = summary.skipped.saturating_add(count);
            }
            "total" | "tests" => summary.total = Some(count),
            _ => {}
        }
    }
    summary
}

/// `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s`
pub(super) fn cargo_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: number(&captures[3]),
        total: None,
    }))
}

/// `     Summary [   0.015s] 3 tests run: 2 passed, 1 failed, 1 skipped`
pub(super) fn nextest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Summary \[[^\]]*\] (\d+) tests? run: (.*)$"));
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

/// `Tests:       1 failed, 2 skipped, 3 passed, 6 total`
pub(super) fn jest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests:\s+(\d+ [a-z]+(?:, \d+ [a-z]+)*)$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(count_items(
        ITEM.captures_iter(&captures[1]).map(|item| {
            (
                number(&item[1]),
                item.get(2).map_or("", |word| word.as_str()),
            )
        }),
    )))
}

/// `      Tests  1 failed | 2 passed (3)`
pub(super) fn vitest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests\s+(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \((\d+)\)"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = count_items(ITEM.captures_iter(&captures[1]).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }));
    summary.total = Some(number(&captures[2]));
    Some(Finding::Tests(summary))
}

/// node --test: TAP `# pass 3` and the spec reporter's `ℹ pass 3`, one figure per line.
pub(super) fn node_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|skip|todo)\s+(\d+)$"));
    let line = line.trim();
    if !line.starts_with("# ") && !line.starts_with("ℹ ") {
        return None;
    }
    let captures = PATTERN.captures(line)?;
    let count = number(&captures[2]);
    let mut summary = count_items(std::iter::once((count, &captures[1])));
    if summary.total.is_none() {
        summary.total = Some(0);
    }
    Some(Finding::Tests(summary))
}

/// `3 successes / 0 failures / 1 errors / 0 pending : 0.012 seconds`
pub(super) fn busted(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(\d+) successes? / (\d+) failures? / (\d+) errors? / (\d+) pending")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]).saturating_add(number(&captures[3])),
        skipped: number(&captures[4]),
        total: None,
    }))
}

/// `==== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ====`, `3 passed in 0.01s` (`-q`)
/// and `==== no tests ran in 0.01s ====`.
pub(super) fn pytest(line: &str) -> Option<Finding> {
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

/// go test: top-level `--- PASS: TestX (0.00s)` lines (sub-tests are indented and not
/// counted) and the package lines `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `?   \tpkg\t[no test files]`.
pub(super) fn go_test(line: &str) -> Option<Finding> {
    static PACKAGE: LazyLock<Regex> = LazyLock::new(|| regex(r"^(ok|FAIL|\?)\s+\S+(?:\s+(.*))?$"));
    if let Some(rest) = line.strip_prefix("--- ") {
        let result = match rest.split(':').next()? {
            "PASS" => GoResult::Pass,
            "FAIL" => GoResult::Fail,
            "SKIP" => GoResult::Skip,
            _ => return None,
        };
        return Some(Finding::GoTest(result));
    }
    if !line.contains('\t') {
        return None;
    }
    let captures = PACKAGE.captures(line)?;
    let rest = captures.get(2).map_or("", |rest| rest.as_str());
    let package = match &captures[1] {
        _ if rest.contains("[no test files]") || rest.contains("[no tests to run]") => {
            GoPackage::NoTests
        }
        "ok" => GoPackage::Ok,
        "FAIL" => GoPackage::Fail,
        _ => return None,
    };
    Some(Finding::GoPackage(package))
}

/// The plain `N passed, N failed` line (optionally `, N skipped`, optionally `word:` before),
/// which small hand-written runners print.
pub(super) fn plain_counts(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(?:[A-Za-z][\w-]*:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\.?$")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: captures
            .get(3)
            .map_or(0, |skipped| number(skipped.as_str())),
        total: None,
    }))
}

#[cfg(test)]
mod tests {
    use crate::qa::metrics::tests::{parse, tests};

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

    #[test]
    fn go_test_verbose_counts_top_level_results() {
        let output = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestTable
=== RUN   TestTable/zero
    --- FAIL: TestTable/zero (0.00s)
--- FAIL: TestTable (0.00s)
=== RUN   TestSlow
    slow_test.go:9: short mode
--- SKIP: TestSlow (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s
?   \texample.com/calc/cmd\t[no test files]
FAIL
";
        assert_eq!(tests(output), Some((1.0, 1.0, 1.0, 3.0)));
    }

    #[test]
    fn go_test_without_verbose_counts_packages() {
        let output = "\
ok  \texample.com/calc\t0.004s
ok  \texample.com/calc/internal\t(cached)
?   \texample.com/calc/cmd\t[no test files]
";
        assert_eq!(tests(output), Some((2.0, 0.0, 0.0, 2.0)));
    }

    #[test]
    fn go_test_with_only_no_test_files_ran_nothing() {
        let metrics = parse("?   \texample.com/calc\t[no test files]\n");
        assert_eq!(metrics.tests_ran(), Some(0));
    }

    #[test]
    fn jest_tests_line() {
        let output = "\
Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 3 passed, 4 total
Snapshots:   0 total
Time:        1.2 s
";
        assert_eq!(tests(output), Some((3.0, 1.0, 0.0, 4.0)));
    }

    #[test]
    fn vitest_tests_line() {
        let passing =
            " Test Files  1 passed (1)\n      Tests  3 passed (3)\n   Start at  10:00:00\n";
        assert_eq!(tests(passing), Some((3.0, 0.0, 0.0, 3.0)));
        let failing = " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n";
        assert_eq!(tests(failing), Some((2.0, 1.0, 0.0, 3.0)));
    }

    #[test]
    fn node_test_tap_and_spec_reporters() {
        let tap = "\
TAP version 13
ok 1 - adds
ok 2 - subtracts
not ok 3 - divides
1..3
# tests 3
# suites 0
# pass 2
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 41.2
";
        assert_eq!(tests(tap), Some((2.0, 1.0, 0.0, 3.0)));
        let spec = "✔ adds (0.5ms)\nℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ skipped 0\n";
        assert_eq!(tests(spec), Some((3.0, 0.0, 0.0, 3.0)));
    }

    #[test]
    fn busted_summary() {
        let output = "●●◼\n2 successes / 1 failure / 0 errors / 1 pending : 0.012 seconds\n";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }

    #[test]
    fn plain_counts_line() {
        assert_eq!(tests("4 passed, 0 failed\n"), Some((4.0, 0.0, 0.0, 4.0)));
        assert_eq!(
            tests("Results: 4 passed, 1 failed, 2 skipped\n"),
            Some((4.0, 1.0, 2.0, 7.0))
        );
    }
}
