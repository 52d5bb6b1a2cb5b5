//! Code duplication: the percentage and clone counts jscpd and dupl report.
//!
//! They sit apart from the other families because duplication has two figures that stand in
//! for each other: a tool that reports zero clones but no percentage still measured 0%.

use std::sync::LazyLock;

use regex::Regex;

use super::{Finding, float, number, regex};

/// jscpd: the console table's `Total:` row (duplicated lines come first), the older
/// `… duplicated lines … (3.2%)` sentence, the threshold error, and `Found N clones.`
pub(super) fn jscpd(line: &str) -> Option<Finding> {
    static PERCENT: LazyLock<Regex> = LazyLock::new(|| regex(r"\((\d+(?:\.\d+)?)%\)"));
    static CLONES: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Found (\d+) (?:exact )?clones?\.?$"));
    static TOO_MANY: LazyLock<Regex> =
        LazyLock::new(|| regex(r"too many duplicates \((\d+(?:\.\d+)?)%\)"));
    let trimmed = line.trim();
    if let Some(captures) = CLONES.captures(trimmed) {
        return Some(Finding::DuplicationClones(number(&captures[1])));
    }
    if trimmed.contains("too many duplicates")
        && let Some(captures) = TOO_MANY.captures(trimmed)
    {
        return float(&captures[1]).map(Finding::DuplicationPercentage);
    }
    let is_total_row = trimmed
        .trim_start_matches(['│', '|', ' '])
        .starts_with("Total:");
    if is_total_row || trimmed.contains("duplicated lines") {
        let captures = PERCENT.captures(trimmed)?;
        return float(&captures[1]).map(Finding::DuplicationPercentage);
    }
    None
}

/// dupl: `Found total 3 clone groups.`
pub(super) fn dupl(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Found total (\d+) clone groups?\.?$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::DuplicationClones(number(&captures[1])))
}

#[cfg(test)]
mod tests {
    use crate::metrics::tests::{number_of, parse};

    #[test]
    fn jscpd_total_row_and_sentences() {
        let table = "\
Clone found (javascript):
 - src/a.js [1:1 - 20:2] (19 lines, 120 tokens)
   src/b.js [1:1 - 20:2]

┌────────────┬────────────────┬─────────────┬──────────────┬──────────────┬──────────────────┬───────────────────┐
│ Format     │ Files analyzed │ Total lines │ Total tokens │ Clones found │ Duplicated lines │ Duplicated tokens │
├────────────┼────────────────┼─────────────┼──────────────┼──────────────┼──────────────────┼───────────────────┤
│ javascript │ 2              │ 40          │ 240          │ 1            │ 19 (47.5%)       │ 120 (50%)         │
├────────────┼────────────────┼─────────────┼──────────────┼──────────────┼──────────────────┼───────────────────┤
│ Total:     │ 2              │ 40          │ 240          │ 1            │ 19 (47.5%)       │ 120 (50%)         │
└────────────┴────────────────┴─────────────┴──────────────┴──────────────┴──────────────────┴───────────────────┘
Found 1 clones.
";
        let metrics = parse(table);
        assert_eq!(number_of(&metrics, "duplication_percentage"), Some(47.5));
        assert_eq!(number_of(&metrics, "duplication_clones"), Some(1.0));
        let old = "Found 3 exact clones with 25(3.2%) duplicated lines in 10 (1 formats) files.\n";
        assert_eq!(number_of(&parse(old), "duplication_percentage"), Some(3.2));
        let none = parse("Found 0 clones.\n");
        assert_eq!(number_of(&none, "duplication_percentage"), Some(0.0));
    }

    #[test]
    fn dupl_clone_groups() {
        let some =
            parse("found 2 clones:\n  a.go:3,20\n  b.go:5,22\nFound total 1 clone groups.\n");
        assert_eq!(number_of(&some, "duplication_clones"), Some(1.0));
        assert_eq!(number_of(&some, "duplication_percentage"), None);
        let none = parse("Found total 0 clone groups.\n");
        assert_eq!(number_of(&none, "duplication_percentage"), Some(0.0));
    }
}
