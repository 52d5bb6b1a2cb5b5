//! pytest's summary line in all its forms.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use super::count_items;
use crate::qa::metrics::{Finding, TestSummary, number, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[(" in ", pytest)];

/// `==== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ====`, `3 passed in 0.01s` (`-q`)
/// and `==== no tests ran in 0.01s ====`.
fn pytest(line: &str) -> Option<Finding> {
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

#[cfg(test)]
mod tests {
    use crate::qa::metrics::tests::tests;

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
}
