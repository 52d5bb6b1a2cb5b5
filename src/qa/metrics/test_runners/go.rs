//! go test's per-test lines (`-v`) and package lines.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::qa::metrics::{Finding, GoPackage, GoResult, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[("", go_test)];

/// go test: top-level `--- PASS: TestX (0.00s)` lines (sub-tests are indented and not
/// counted) and the package lines `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `?   \tpkg\t[no test files]`.
fn go_test(line: &str) -> Option<Finding> {
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

#[cfg(test)]
mod tests {
    use crate::qa::metrics::tests::{parse, tests};

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
}
