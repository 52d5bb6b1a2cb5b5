//! Linters' counts: eslint, ruff (and mypy), luacheck, golangci-lint and cargo clippy summary
//! lines, and flake8's per-item lines.
//!
//! A linter's summary line is the figure prpd trusts; the flake8 item parser exists for the
//! linters that print no summary, and the tally only counts items when no summary was seen.

use std::sync::LazyLock;

use regex::Regex;

use super::{Finding, LintSummary, number, regex};

/// `✖ 5 problems (3 errors, 2 warnings)`
pub(super) fn eslint(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^✖ \d+ problems? \((\d+) errors?, (\d+) warnings?\)"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: number(&captures[2]),
    }))
}

/// ruff `Found 3 errors.` (mypy's `Found 3 errors in 2 files` reads the same) and
/// `All checks passed!`.
pub(super) fn ruff(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^Found (\d+) errors?\b"));
    let line = line.trim();
    if line == "All checks passed!" {
        return Some(Finding::LintClean);
    }
    let captures = PATTERN.captures(line)?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: 0,
    }))
}

/// `Total: 2 warnings / 1 error in 3 files`
pub(super) fn luacheck(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Total: (\d+) warnings? / (\d+) errors? in \d+ files?"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[2]),
        warnings: number(&captures[1]),
    }))
}

/// golangci-lint `3 issues:` (followed by per-linter counts) and `0 issues.`
pub(super) fn golangci_lint(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\d+) issues?[:.]$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: 0,
    }))
}

/// cargo clippy: ``error: could not compile `app` (lib) due to 3 previous errors; 2 warnings
/// emitted`` and ``warning: `app` (lib) generated 4 warnings``.
pub(super) fn clippy(line: &str) -> Option<Finding> {
    static FAILED: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^error: could not compile `[^`]+`(?: \([^)]*\))?(?: due to (\d+) previous errors?)?(?:; (\d+) warnings? emitted)?",
        )
    });
    static WARNED: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^warning: `[^`]+`(?: \([^)]*\))? generated (\d+) warnings?"));
    let line = line.trim();
    if let Some(captures) = FAILED.captures(line) {
        return Some(Finding::Lint(LintSummary {
            errors: captures.get(1).map_or(1, |errors| number(errors.as_str())),
            warnings: captures
                .get(2)
                .map_or(0, |warnings| number(warnings.as_str())),
        }));
    }
    let captures = WARNED.captures(line)?;
    Some(Finding::Lint(LintSummary {
        errors: 0,
        warnings: number(&captures[1]),
    }))
}

/// flake8 (and pycodestyle) items: `app/main.py:3:1: E302 expected 2 blank lines, found 1`.
pub(super) fn flake8_item(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^[^\s:][^:]*:\d+:\d+: ([A-Z]+)\d+ "));
    let captures = PATTERN.captures(line)?;
    Some(Finding::LintItem {
        warning: &captures[1] == "W",
    })
}

#[cfg(test)]
mod tests {
    use crate::metrics::tests::{number_of, parse};

    fn lint(text: &str) -> Option<(f64, f64)> {
        let metrics = parse(text);
        Some((
            number_of(&metrics, "lint_errors")?,
            number_of(&metrics, "lint_warnings")?,
        ))
    }

    #[test]
    fn eslint_problems() {
        let output = "\
/repo/src/app.js
  1:10  error    'x' is defined but never used  no-unused-vars
  3:1   warning  Unexpected console statement   no-console

✖ 5 problems (3 errors, 2 warnings)
  1 error and 0 warnings potentially fixable with the `--fix` option.
";
        assert_eq!(lint(output), Some((3.0, 2.0)));
    }

    #[test]
    fn ruff_found_and_clean() {
        let output = "app.py:1:8: F401 [*] `os` imported but unused\napp.py:4:1: E402 Module level import not at top of file\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.\n";
        assert_eq!(
            lint(output),
            Some((2.0, 0.0)),
            "summary wins over item lines"
        );
        assert_eq!(lint("All checks passed!\n"), Some((0.0, 0.0)));
    }

    #[test]
    fn luacheck_total() {
        let output = "Checking src/app.lua                          2 warnings\n\n    src/app.lua:3:7: unused variable x\n\nTotal: 2 warnings / 1 error in 3 files\n";
        assert_eq!(lint(output), Some((1.0, 2.0)));
    }

    #[test]
    fn golangci_lint_issue_count() {
        let output = "main.go:5:2: Error return value is not checked (errcheck)\n\tos.Remove(\"x\")\n\t^\n3 issues:\n* errcheck: 2\n* unused: 1\n";
        assert_eq!(lint(output), Some((3.0, 0.0)));
        assert_eq!(lint("0 issues.\n"), Some((0.0, 0.0)));
    }

    #[test]
    fn clippy_errors_and_warnings() {
        let failed = "\
    Checking app v0.1.0 (/repo)
error: this looks like you are trying to swap `a` and `b`
warning: unused variable: `x`
error: could not compile `app` (lib) due to 3 previous errors; 2 warnings emitted
";
        assert_eq!(lint(failed), Some((3.0, 2.0)));
        let warned = "warning: `app` (lib) generated 4 warnings (run `cargo clippy --fix --lib -p app` to apply 1 suggestion)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.51s\n";
        assert_eq!(lint(warned), Some((0.0, 4.0)));
    }

    #[test]
    fn flake8_items_are_counted_without_a_summary() {
        let output = "app/main.py:3:1: E302 expected 2 blank lines, found 1\napp/main.py:9:80: E501 line too long (88 > 79 characters)\napp/util.py:1:1: W391 blank line at end of file\n";
        assert_eq!(lint(output), Some((2.0, 1.0)));
    }
}
