//! busted's default summary line.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::qa::metrics::{Finding, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[(" / ", busted)];

/// `3 successes / 0 failures / 1 errors / 0 pending : 0.012 seconds`
fn busted(line: &str) -> Option<Finding> {
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

#[cfg(test)]
mod tests {
    use crate::qa::metrics::tests::tests;

    #[test]
    fn busted_summary() {
        let output = "●●◼\n2 successes / 1 failure / 0 errors / 1 pending : 0.012 seconds\n";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }
}
