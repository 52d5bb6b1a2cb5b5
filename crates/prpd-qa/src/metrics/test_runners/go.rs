//! go test in its three forms (plain, `-v`, `-json`) and gotestsum's default output.
//!
//! Every `--- PASS/FAIL/SKIP: Name` line names a test, subtests (`TestMul/zero`, indented)
//! included, as gotestsum counts them. Without `-v` go prints such lines only for failed tests,
//! and one line per package: a package none of whose tests was named stands for its tests
//! (`ok  \tpkg` one passed, `FAIL\tpkg [build failed]` one failed), so a package that does not
//! build is never silently dropped. `-json` carries the same facts as one event per line.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::metrics::{Finding, GoPackage, Outcome, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("--- ", go_test),
    ("\"Action\":", go_json),
    ("\t", go_package),
    ("=== ", gotestsum_case),
    ("  ", gotestsum_package),
    ("DONE ", gotestsum_done),
];

/// `--- PASS: TestAdd (0.00s)`, indented for a subtest: `    --- FAIL: TestMul/zero (0.00s)`.
fn go_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \([\d.]+s\)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::GoTest(
        captures[2].to_owned(),
        outcome(&captures[1])?,
    ))
}

fn outcome(word: &str) -> Option<Outcome> {
    match word.to_ascii_lowercase().as_str() {
        "pass" => Some(Outcome::Passed),
        "fail" => Some(Outcome::Failed),
        "skip" => Some(Outcome::Skipped),
        _ => None,
    }
}

/// The package lines `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]` and
/// `?   \tpkg\t[no test files]`.
fn go_package(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(ok|FAIL|\?)\s+(\S+)(?:\s+(.*))?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let rest = captures.get(3).map_or("", |rest| rest.as_str());
    let package = match &captures[1] {
        _ if rest.contains("[no test files]") || rest.contains("[no tests to run]") => {
            GoPackage::NoTests
        }
        "ok" => GoPackage::Ok,
        "FAIL" => GoPackage::Fail,
        _ => return None,
    };
    Some(Finding::GoPackage(package, captures[2].to_owned()))
}

/// One `go test -json` event that ends a test or a package:
/// `{"Time":"…","Action":"fail","Package":"example.com/calc","Test":"TestMul/zero","Elapsed":0}`.
/// A package event without a test stands for the package, as a package line does.
fn go_json(line: &str) -> Option<Finding> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Event {
        action: String,
        package: Option<String>,
        test: Option<String>,
    }
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    let event: Event = serde_json::from_str(line).ok()?;
    let outcome = outcome(&event.action)?;
    match (event.test, event.package) {
        (Some(test), _) => Some(Finding::GoTest(test, outcome)),
        (None, Some(package)) => {
            let package_result = match outcome {
                Outcome::Passed => GoPackage::Ok,
                Outcome::Failed => GoPackage::Fail,
                Outcome::Skipped => GoPackage::NoTests,
            };
            Some(Finding::GoPackage(package_result, package))
        }
        (None, None) => None,
    }
}

/// gotestsum's failure and skip headings: `=== FAIL: calc TestMul/zero (0.00s)`.
fn gotestsum_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^=== (FAIL|SKIP): \S+ (\S+) \([\d.]+s\)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::GoTest(
        captures[2].to_owned(),
        outcome(&captures[1])?,
    ))
}

/// gotestsum's package lines, `✓  strs (3ms)`, `✖  calc (5ms)`, `∅  cmd/calc`: the packages'
/// tests are counted by the `DONE` line and named under `=== FAIL:`, so these name nothing.
fn gotestsum_package(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(?:✓|✖|∅|↷)  \S+(?: \([^)]*\))?$"));
    if !line.starts_with(['✓', '✖', '∅', '↷']) {
        return None;
    }
    PATTERN
        .is_match(line.trim_end())
        .then_some(Finding::NotATest)
}

/// gotestsum's closing line: `DONE 6 tests, 2 skipped, 3 failures, 1 error in 0.31s`. Its
/// tests include the failed and skipped ones; errors (a package that did not build) are not
/// tests but count as failures.
fn gotestsum_done(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^DONE (\d+) tests?((?:, \d+ [a-z]+)*) in [\d.]+m?s$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    let items = count_items(ITEM.captures_iter(&captures[2]).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }));
    let tests = number(&captures[1]);
    let failures = ITEM
        .captures_iter(&captures[2])
        .filter(|item| item[2].starts_with("failure"))
        .map(|item| number(&item[1]))
        .fold(0u32, u32::saturating_add);
    Some(Finding::Tests(TestSummary {
        passed: tests.saturating_sub(failures).saturating_sub(items.skipped),
        failed: items.failed,
        skipped: items.skipped,
        total: None,
    }))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

    #[test]
    fn go_test_verbose_names_tests_and_subtests() {
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
        assert_eq!(tests(output), Some((1.0, 2.0, 1.0, 4.0)));
        let metrics = parse(output);
        assert_eq!(
            metrics.test_cases().get("TestTable/zero"),
            Some(Outcome::Failed)
        );
        assert_eq!(metrics.test_cases().get("example.com/calc"), None);
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
    fn a_package_that_does_not_build_is_a_failure_beside_passing_ones() {
        let output = "\
# example.com/calc/calc
calc/calc.go:8:28: cannot use \"x\" (untyped string constant) as int value in return statement
FAIL\texample.com/calc/calc [build failed]
ok  \texample.com/calc/strs\t0.002s
";
        assert_eq!(tests(output), Some((1.0, 1.0, 0.0, 2.0)));
    }

    #[test]
    fn go_json_events_name_tests_and_packages() {
        let output = r#"{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"--- PASS: TestAdd (0.00s)\n"}
{"Action":"pass","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Test":"TestMul/zero","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.006}
{"Action":"skip","Package":"example.com/calc/cmd","Elapsed":0}
"#;
        assert_eq!(tests(output), Some((1.0, 1.0, 0.0, 2.0)));
    }

    #[test]
    fn regression_gotestsum_package_lines_are_not_tests() {
        let output = "✖  calc (5ms)\n∅  cmd/calc\n✓  strs (3ms)\n\n=== FAIL: calc TestDiv (0.00s)\n\nDONE 2 tests, 1 failure in 0.3s\n";
        let metrics = parse(output);
        let names: Vec<_> = metrics.test_cases().iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["TestDiv"]);
        assert_eq!(tests(output), Some((1.0, 1.0, 0.0, 2.0)));
    }

    #[test]
    fn gotestsum_done_line_counts_errors_as_failures() {
        assert_eq!(
            tests("DONE 6 tests, 2 skipped, 1 failure, 1 error in 0.31s\n"),
            Some((3.0, 2.0, 2.0, 7.0))
        );
        assert_eq!(tests("DONE 0 tests in 0.09s\n"), Some((0.0, 0.0, 0.0, 0.0)));
    }
}
