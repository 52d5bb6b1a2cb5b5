//! The test runners built into the JavaScript runtimes other than Node: `bun test` and
//! `deno test`. Each prints one line per test and closes with its own figures.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::metrics::{Finding, Outcome, Voucher, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[
    ("", bun),
    (") ", bun_case),
    (" | ", deno),
    (" ... ", deno_case),
];

/// bun's closing figures, one per line: ` 2 pass`, ` 1 fail`, ` 1 skip`, ` 1 todo`. Its
/// ` 1 error` line counts an error that its `fail` line already counts.
fn bun(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\d+) (pass|fail|skip|todo)$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(count_items(std::iter::once((
        number(&captures[1]),
        &captures[2],
    )))))
}

/// `(pass) calc > adds [0.03ms]`, `(fail) …`, `(skip) …`, `(todo) …`.
fn bun_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\((pass|fail|skip|todo)\) (.+?)(?: \[[\d.]+m?s\])?$"));
    let captures = PATTERN.captures(line.trim_end())?;
    let outcome = match &captures[1] {
        "pass" => Outcome::Passed,
        "fail" => Outcome::Failed,
        _ => Outcome::Skipped,
    };
    Some(Finding::LooseCase(
        captures[2].to_owned(),
        outcome,
        Voucher::Summary,
    ))
}

/// deno's closing line: `ok | 2 passed | 0 failed (16ms)`, `FAILED | 1 passed | 2 failed
/// (1 step) (5ms)`, `ok | 1 passed | 0 failed | 1 ignored (4ms)`; steps are counted apart, in
/// parentheses, and are not tests.
fn deno(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(?:ok|FAILED) \| (\d+ passed.*?) \(\d+(?:\.\d+)?m?s\)$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(?:^|\| )(\d+) ([a-z]+)"));
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

/// `adds ... ok (540µs)`, `multiplies ... FAILED (680µs)`, `skipped ... ignored (0ms)`. A step
/// is indented under its test and is not a test. unittest's `-v` lines (`test_add
/// (test_calc.TestCalc.test_add) ... ok`) are left to the Python family.
fn deno_case(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\S.*?) \.\.\. (ok|FAILED|ignored)(?: \(.*\))?$"));
    static UNITTEST: LazyLock<Regex> = LazyLock::new(|| regex(r"^\w+ \([\w.]+\)$"));
    let captures = PATTERN.captures(line.trim_end())?;
    if UNITTEST.is_match(&captures[1]) {
        return None;
    }
    let outcome = match &captures[2] {
        "ok" => Outcome::Passed,
        "FAILED" => Outcome::Failed,
        _ => Outcome::Skipped,
    };
    Some(Finding::LooseCase(
        captures[1].to_owned(),
        outcome,
        Voucher::Summary,
    ))
}
