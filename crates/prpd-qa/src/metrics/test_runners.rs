//! Test runners' output: summary lines (counts) and per-test lines (names), one child module
//! per family of runners.
//!
//! They live together because they share one vocabulary: each runner counts passed, failed and
//! skipped tests under its own words (`successes`, `pending`, `ignored`), and [`count_items`]
//! maps those words onto one [`TestSummary`], so a new runner only needs its line's pattern.
//! Each family exports its parsers in a `PARSERS` list; [`FAMILIES`] orders the families,
//! specific formats before generic ones.

mod ctest;
mod dotnet;
mod elixir;
mod go;
mod javascript;
mod js_runtimes;
mod jvm;
mod lua;
mod php;
mod plain;
mod python;
mod ruby;
mod rust;
mod tap;

use crate::metrics::{Finding, TestSummary};

/// A parser of one kind of line.
pub(super) type Parser = fn(&str) -> Option<Finding>;

/// Every family's parsers, in the order they are tried. go and PHPUnit come before the
/// JavaScript runners, whose symbol-marked and numbered test lines (`✓ adds`, `1) adds`) look
/// like gotestsum's package lines and PHPUnit's list items.
pub(super) const FAMILIES: &[&[(&str, Parser)]] = &[
    rust::PARSERS,
    go::PARSERS,
    php::PARSERS,
    javascript::PARSERS,
    lua::PARSERS,
    python::PARSERS,
    js_runtimes::PARSERS,
    elixir::PARSERS,
    ruby::PARSERS,
    jvm::PARSERS,
    dotnet::PARSERS,
    ctest::PARSERS,
    tap::PARSERS,
    plain::PARSERS,
];

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
