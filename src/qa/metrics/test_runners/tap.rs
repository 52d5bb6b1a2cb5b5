//! The Test Anything Protocol, which many runners speak (bats, prove's raw output,
//! `node --test --test-reporter=tap`, mocha's and busted's TAP reporters, node-tap): one
//! `ok N - name` or `not ok N - name` line per test and a plan line `1..N`.
//!
//! Only top-level lines count (TAP 14 indents subtests under their parent, whose own line
//! carries the result). A `# SKIP` directive is a skipped test and a `# TODO` one is not a
//! pass either way. Test lines are counted only when the output also holds a plan, so a build
//! log line such as `ok 2 files` is not taken for a test.

use std::sync::LazyLock;

use regex::Regex;

use super::Parser;
use crate::qa::metrics::{Finding, Outcome, regex};

/// This family's parsers, in the order they are tried.
pub(super) const PARSERS: &[(&str, Parser)] = &[("ok", test_line), ("1..", plan)];

/// `ok 1 - adds`, `not ok 2 - divides # TODO later`, `ok 3 # SKIP no network`.
fn test_line(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(not ok|ok)(?:\s+(\d+))?\b\s*(?:-\s*)?([^#]*?)\s*(?:#\s*([A-Za-z]+)\b.*)?$")
    });
    if !(line.starts_with("ok") || line.starts_with("not ok")) {
        return None;
    }
    let captures = PATTERN.captures(line.trim_end())?;
    let directive = captures
        .get(4)
        .map(|directive| directive.as_str().to_ascii_lowercase());
    let outcome = match (&captures[1], directive.as_deref()) {
        (_, Some(word)) if word.starts_with("skip") || word == "todo" => Outcome::Skipped,
        ("ok", _) => Outcome::Passed,
        _ => Outcome::Failed,
    };
    let description = captures.get(3).map_or("", |text| text.as_str());
    let name = if description.is_empty() {
        captures.get(2)?.as_str()
    } else {
        description
    };
    Some(Finding::TapCase(name.to_owned(), outcome))
}

/// `1..3`, `1..0 # SKIP no tests here`.
fn plan(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^1\.\.\d+(?:\s*#.*)?$"));
    PATTERN
        .is_match(line.trim_end())
        .then_some(Finding::TapPlan)
}

#[cfg(test)]
mod tests {
    use crate::qa::metrics::Outcome;
    use crate::qa::metrics::tests::{parse, tests};

    #[test]
    fn tap_lines_with_a_plan_are_counted_and_named() {
        let output = "\
1..4
ok 1 - adds
not ok 2 - divides by zero
# expected 0, got NaN
ok 3 multiplies # SKIP no multiplier yet
not ok 4 - rounds # TODO later
";
        assert_eq!(tests(output), Some((1.0, 1.0, 2.0, 4.0)));
        let metrics = parse(output);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("adds"), Some(Outcome::Passed));
        assert_eq!(cases.get("divides by zero"), Some(Outcome::Failed));
        assert_eq!(cases.get("multiplies"), Some(Outcome::Skipped));
        assert_eq!(cases.get("rounds"), Some(Outcome::Skipped));
    }

    #[test]
    fn tap_lines_without_a_plan_are_not_tests() {
        assert_eq!(tests("ok 2 files copied\nbuild done\n"), None);
    }

    #[test]
    fn an_unnamed_tap_test_is_named_by_its_number() {
        let metrics = parse("ok 1\nnot ok 2\n1..2\n");
        assert_eq!(metrics.test_cases().get("2"), Some(Outcome::Failed));
        assert_eq!(metrics.tests_ran(), Some(2));
    }

    #[test]
    fn indented_subtest_lines_are_left_to_their_parent() {
        let output = "1..1\n    ok 1 - inner\nok 1 - outer\n";
        let metrics = parse(output);
        assert_eq!(metrics.test_cases().len(), 1);
        assert_eq!(metrics.test_cases().get("outer"), Some(Outcome::Passed));
    }
}
