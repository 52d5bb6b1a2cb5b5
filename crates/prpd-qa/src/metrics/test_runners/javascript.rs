//! JavaScript runners on Node: the closing lines of jest (`Tests:`), vitest (`Tests`),
//! `node --test` (spec and TAP), mocha (`2 passing`), jasmine (`3 specs, 1 failure`), ava and
//! node-tap, and the lines that name their tests.
//!
//! Most of these runners mark a test with a symbol (`✓ adds`, `✕ multiplies`, `○ skipped
//! divides`), which a build step may print too (`✔ compiled`). Such lines are
//! [`Finding::LooseCase`]s: they name tests only when the output also holds a runner's closing
//! line, so they can never turn a log without test figures into a passing run. The runners on
//! other runtimes (bun, deno) live in `js_runtimes`.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::metrics::{Finding, Outcome, TestSummary, Voucher, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("Tests:", jest),
    ("No tests found, exiting", jest_no_tests),
    ("Test suite failed to run", jest_suite_failed),
    ("Tests ", vitest),
    ("No test files found, exiting", vitest_no_tests),
    ("FAIL ", vitest_file_failed),
    ("", node_test),
    ("{ total: ", node_tap),
    ("    ", node_tap_case),
    ("", mocha),
    (")", mocha_failed_case),
    ("- ", mocha_pending_case),
    (" spec", jasmine),
    (") ", jasmine_case),
    ("  ", jasmine_outcome),
    ("", ava),
    ("", marked_case),
];

/// `Tests:       1 failed, 2 skipped, 3 passed, 6 total`
fn jest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests:\s+(\d+ [a-z]+(?:, \d+ [a-z]+)*)$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(items(&captures[1])))
}

/// jest's `No tests found, exiting with code 1`: it ran nothing.
fn jest_no_tests(line: &str) -> Option<Finding> {
    line.starts_with("No tests found, exiting with code")
        .then(|| Finding::Tests(TestSummary::default()))
}

/// jest's `● Test suite failed to run`: a test file that could not load is one failure, though
/// jest's own `Tests:` line says `0 total`.
fn jest_suite_failed(line: &str) -> Option<Finding> {
    (line.trim() == "● Test suite failed to run").then_some(Finding::Tests(TestSummary {
        failed: 1,
        ..TestSummary::default()
    }))
}

/// `      Tests  1 failed | 2 passed (3)`
fn vitest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests\s+(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \((\d+)\)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = items(&captures[1]);
    summary.total = Some(number(&captures[2]));
    Some(Finding::Tests(summary))
}

/// vitest's `No test files found, exiting with code 1`: it ran nothing.
fn vitest_no_tests(line: &str) -> Option<Finding> {
    line.trim_start()
        .starts_with("No test files found, exiting with code")
        .then(|| Finding::Tests(TestSummary::default()))
}

/// vitest's ` FAIL  test/calc.test.js [ test/calc.test.js ]`: the file failed before its tests
/// ran (its `Tests` line then says `no tests`), which counts as one failed test named by the file.
fn vitest_file_failed(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^FAIL\s+(\S+) \[ (\S+) \]$"));
    let captures = PATTERN.captures(line.trim())?;
    (captures[1] == captures[2]).then(|| Finding::Case(captures[1].to_owned(), Outcome::Failed))
}

/// node --test: the spec reporter's `ℹ pass 3`, one figure per line. Its TAP reporter prints the
/// same figures as TAP comments (`# pass 3`), and so does mocha's, which leaves the pending
/// tests out: those are [`Finding::TapCount`]s, weighed against the TAP lines.
fn node_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(#|ℹ) (tests|pass|fail|cancelled|skipped|skip|todo)\s+(\d+)$"));
    let line = line.trim();
    if !line.starts_with("# ") && !line.starts_with("ℹ ") {
        return None;
    }
    let captures = PATTERN.captures(line)?;
    let count = number(&captures[3]);
    let mut summary = count_items(std::iter::once((count, &captures[2])));
    if summary.total.is_none() {
        summary.total = Some(0);
    }
    if &captures[1] == "#" {
        Some(Finding::TapCount(summary))
    } else {
        Some(Finding::Tests(summary))
    }
}

/// node-tap's closing comment `# { total: 3, pass: 1, fail: 2 }`: the tests, not the files.
fn node_tap(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^# \{ (total: \d+(?:, [a-z]+: \d+)*) \}$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"([a-z]+): (\d+)"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::TapCount(count_items(
        ITEM.captures_iter(&captures[1]).map(|item| {
            (
                number(&item[2]),
                item.get(1).map_or("", |word| word.as_str()),
            )
        }),
    )))
}

/// node-tap's tests, one level below each file's TAP line: `    ok 1 - adds # time=8.4ms`,
/// `    ok 2 - multiplies # SKIP not ready`. The assertions inside a test (`ok 1 - should be
/// equal`, deeper, without a time) are not tests.
fn node_tap_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^ {4}(not ok|ok) \d+ - (.+?) # (time=|SKIP|TODO)"));
    let captures = PATTERN.captures(line)?;
    let outcome = match (&captures[1], &captures[3]) {
        (_, "SKIP" | "TODO") => Outcome::Skipped,
        ("ok", _) => Outcome::Passed,
        _ => Outcome::Failed,
    };
    Some(Finding::LooseCase(
        captures[2].to_owned(),
        outcome,
        Voucher::Summary,
    ))
}

/// mocha's closing lines, one figure each: `  2 passing (5ms)`, `  1 failing`, `  2 pending`.
fn mocha(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\d+) (passing|failing|pending)(?: \(\d+(?:\.\d+)?m?s\))?$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(count_items(std::iter::once((
        number(&captures[1]),
        &captures[2],
    )))))
}

/// mocha's spec list names a failure by its number: `    1) multiplies`. The details below
/// the list start `  1) calc` (the suite, two spaces in), which is left alone.
fn mocha_failed_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {4,}\d+\) (.+)$"));
    let captures = PATTERN.captures(line)?;
    Some(Finding::LooseCase(
        captures[1].to_owned(),
        Outcome::Failed,
        Voucher::Summary,
    ))
}

/// mocha's spec list marks a pending test with a dash: `    - multiplies`.
fn mocha_pending_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {4,}- (\S.*)$"));
    let captures = PATTERN.captures(line)?;
    Some(Finding::LooseCase(
        captures[1].to_owned(),
        Outcome::Skipped,
        Voucher::Skips,
    ))
}

/// jasmine's `3 specs, 1 failure, 2 pending specs` and `No specs found`.
fn jasmine(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\d+) specs?, (\d+) failures?(?:, (\d+) pending specs?)?$"));
    let line = line.trim();
    if line == "No specs found" {
        return Some(Finding::Tests(TestSummary::default()));
    }
    let captures = PATTERN.captures(line)?;
    let total = number(&captures[1]);
    let failed = number(&captures[2]);
    let skipped = captures
        .get(3)
        .map_or(0, |pending| number(pending.as_str()));
    Some(Finding::Tests(TestSummary {
        passed: total.saturating_sub(failed.saturating_add(skipped)),
        failed,
        skipped,
        total: Some(total),
    }))
}

/// jasmine numbers its failures and its pending specs by their full name, `1) calc multiplies`,
/// and says which on the next line.
fn jasmine_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^\d+\) (\S.*)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    Some(Finding::CaseStarted(captures[1].to_owned()))
}

/// The line after a numbered jasmine spec: `  Message:` opens a failure; jasmine's own reasons
/// for a pending spec (`Temporarily disabled with xit`, `No reason given`) close a skip.
fn jasmine_outcome(line: &str) -> Option<Finding> {
    match line.trim_end() {
        "  Message:" => Some(Finding::CaseEnded(Outcome::Failed)),
        "  No reason given" => Some(Finding::CaseEnded(Outcome::Skipped)),
        reason if reason.starts_with("  Temporarily disabled with x") => {
            Some(Finding::CaseEnded(Outcome::Skipped))
        }
        _ => None,
    }
}

/// ava: `✔ adds`, `✘ [fail]: divides Error thrown in test` (ava's message follows the title),
/// `- [skip] multiplies`, `- [todo] divides`, `✔ [expected fail] rounds`, `✘ [unexpected pass]:
/// rounds`; a file that failed before its tests, `✘ test/calc.js exited with a non-zero exit
/// code: 1`; a file without tests, `✘ No tests found in test/calc.js`. Its closing lines (`2 tests
/// failed`, `1 known failure`) leave the passed tests out, so they only vouch for the list.
fn ava(line: &str) -> Option<Finding> {
    static CASE: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(✘ \[fail\]:|✘ \[unexpected pass\]:|- \[skip\]|- \[todo\]|✔ \[expected fail\]) (.+)$",
        )
    });
    static MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r" (?:Error thrown in test|Rejected promise returned by test|Test finished without running any assertions|Promise returned by test never resolved|Observable returned by test never completed|Test timeout exceeded)$",
        )
    });
    static EXITED: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^✘ (\S+) exited with a non-zero exit code: \d+$"));
    static CLOSING: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^\d+ (?:tests? (?:passed|failed|skipped|todo)|known failures?|uncaught exceptions?|unhandled rejections?)$",
        )
    });
    let line = line.trim();
    if line.starts_with("✘ No tests found in ") {
        return Some(Finding::Tests(TestSummary::default()));
    }
    if CLOSING.is_match(line) {
        return Some(Finding::Vouch);
    }
    if let Some(captures) = EXITED.captures(line) {
        return Some(Finding::LooseCase(
            captures[1].to_owned(),
            Outcome::Failed,
            Voucher::Summary,
        ));
    }
    let captures = CASE.captures(line)?;
    let outcome = match &captures[1] {
        "- [skip]" | "- [todo]" | "✔ [expected fail]" => Outcome::Skipped,
        _ => Outcome::Failed,
    };
    let name = MESSAGE.replace(&captures[2], "");
    Some(Finding::LooseCase(
        name.into_owned(),
        outcome,
        Voucher::Summary,
    ))
}

/// A test marked by a symbol: jest's `✓ adds (3 ms)`, `✕ multiplies`, `○ skipped …`,
/// `✎ todo …`; vitest's `✓ adds 2ms`, `× multiplies`, `↓ skipped`, `□ todo`; mocha's and ava's
/// `✔ adds`; node's spec reporter `✔ adds (1.2ms)`, `✖ multiplies`, `﹣ skipped # reason`, and
/// `✖ divides (0.2ms) # reason` for a todo test (a failure has no `#`). vitest's line for a
/// whole file, `✓ test/calc.test.js (2 tests) 3ms`, node's `✖ failing tests:` and eslint's
/// `✖ 3 problems (3 errors, 0 warnings)` are not tests.
fn marked_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^(✓|✔|×|✕|✖|↓|□|﹣|○ skipped|✎ todo) (.+?)(?: \(?\d+(?:\.\d+)? ?(?:ms|s|µs)\)?)?(?: # (.*))?$",
        )
    });
    static NOT_A_TEST: LazyLock<Regex> = LazyLock::new(|| {
        regex(r" \(\d+ tests?(?: \|[^)]*)?\)$|^failing tests:$|^\d+ problems? \(")
    });
    let captures = PATTERN.captures(line.trim())?;
    let name = &captures[2];
    if NOT_A_TEST.is_match(name) {
        return None;
    }
    let outcome = match (&captures[1], captures.get(3)) {
        ("✓" | "✔", _) => Outcome::Passed,
        ("×" | "✕" | "✖", None) => Outcome::Failed,
        _ => Outcome::Skipped,
    };
    Some(Finding::LooseCase(
        name.to_owned(),
        outcome,
        Voucher::Summary,
    ))
}

/// Reads `3 passed, 1 failed` or `3 passed | 1 failed` into a summary.
fn items(text: &str) -> TestSummary {
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    count_items(ITEM.captures_iter(text).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }))
}

#[cfg(test)]
mod tests {
    use crate::metrics::Outcome;
    use crate::metrics::tests::{parse, tests};

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
    fn regression_node_test_tap_counts_nested_tests_that_the_tap_lines_leave_to_their_suite() {
        let tap = "\
TAP version 13
# Subtest: calc
    # Subtest: adds
    ok 1 - adds
    # Subtest: multiplies
    not ok 2 - multiplies
    1..2
not ok 1 - calc
1..1
# tests 2
# suites 1
# pass 1
# fail 1
";
        assert_eq!(tests(tap), Some((1.0, 1.0, 0.0, 2.0)));
    }

    #[test]
    fn marked_lines_without_a_runner_summary_are_not_tests() {
        let build = "✔ compiled 12 files\n✓ lint clean\n";
        assert_eq!(tests(build), None);
        assert!(parse(build).test_cases().is_empty());
    }

    #[test]
    fn mocha_dash_lines_are_pending_tests_only_where_mocha_counted_pending_ones() {
        let passing = "  calc\n    ✔ adds\n    - not a test\n\n  1 passing (2ms)\n";
        let metrics = parse(passing);
        assert_eq!(metrics.test_cases().get("adds"), Some(Outcome::Passed));
        assert_eq!(metrics.test_cases().get("not a test"), None);
        let pending = "  calc\n    - later\n\n  0 passing (2ms)\n  1 pending\n";
        assert_eq!(
            parse(pending).test_cases().get("later"),
            Some(Outcome::Skipped)
        );
    }
}
