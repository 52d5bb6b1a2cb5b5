//! JavaScript runners: jest's `Tests:` line, vitest's `Tests` line and the figures `node --test`
//! prints under its spec and TAP reporters.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::qa::metrics::{Finding, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] =
    &[("Tests:", jest), ("Tests ", vitest), ("", node_test)];

/// `Tests:       1 failed, 2 skipped, 3 passed, 6 total`
fn jest(line: &str) -> Option<Finding> {
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
fn vitest(line: &str) -> Option<Finding> {
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
fn node_test(line: &str) -> Option<Finding> {
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

#[cfg(test)]
mod tests {
    use crate::qa::metrics::tests::tests;

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
}
