//! Cyclomatic complexity: the worst score radon, gocyclo, eslint's complexity rule, luacheck,
//! lizard or a project's own script reports.
//!
//! Every parser here yields one function's score; the tally keeps the maximum, because the
//! checklist's threshold is about the most complex function, not an average.

use std::sync::LazyLock;

use regex::Regex;

use super::{Finding, float, regex};

/// radon `cc -s`: `    F 12:0 handle_request - B (7)`. Without `-s` radon prints only the
/// rank (`M 40:4 Router.route - C`); the rank's lowest score stands in for the score, so a
/// listed C-ranked function counts as at least 11.
pub(super) fn radon(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^[FMC] \d+:\d+ \S+ - ([A-F])(?: \((\d+)\))?$"));
    let captures = PATTERN.captures(line.trim())?;
    if let Some(score) = captures.get(2) {
        return float(score.as_str()).map(Finding::Complexity);
    }
    let lowest = match &captures[1] {
        "A" => 1.0,
        "B" => 6.0,
        "C" => 11.0,
        "D" => 21.0,
        "E" => 31.0,
        _ => 41.0,
    };
    Some(Finding::Complexity(lowest))
}

/// gocyclo: `12 main (*Server).handle server.go:40:1`
pub(super) fn gocyclo(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\d+) \S+ \S+ \S+\.go:\d+:\d+$"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

/// eslint's complexity rule: `Function 'parse' has a complexity of 12. Maximum allowed is 10.`
pub(super) fn eslint_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"has a complexity of (\d+)"));
    let captures = PATTERN.captures(line)?;
    float(&captures[1]).map(Finding::Complexity)
}

/// luacheck with `--max-cyclomatic-complexity`:
/// `src/app.lua:3:1: cyclomatic complexity of function 'parse' is too high (12 > 10)`
pub(super) fn luacheck_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"cyclomatic complexity of .* is too high \((\d+) > \d+\)"));
    let captures = PATTERN.captures(line)?;
    float(&captures[1]).map(Finding::Complexity)
}

/// A lizard function row: `      12      4     80      2      14 parse@3-16@src/app.py`
/// (NLOC, CCN, token, PARAM, length, location).
pub(super) fn lizard(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\d+\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\S+@\d+-\d+@\S+"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

/// `max_complexity: 7` (or `= 7`), for project scripts that compute the figure themselves.
pub(super) fn generic_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^max_complexity\s*[:=]\s*(\d+(?:\.\d+)?)$"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

#[cfg(test)]
mod tests {
    use crate::metrics::tests::{number_of, parse};

    #[test]
    fn complexity_parsers() {
        let radon = "app/server.py\n    F 12:0 handle_request - B (7)\n    M 40:4 Router.route - C (12)\n    C 30:0 Router - A (4)\n";
        assert_eq!(number_of(&parse(radon), "max_complexity"), Some(12.0));
        let radon_ranks = "app/server.py\n    M 40:4 Router.route - C\n    F 90:0 legacy - D\n2 blocks (classes, functions, methods) analyzed.\nAverage complexity: C (17.5)\n";
        assert_eq!(number_of(&parse(radon_ranks), "max_complexity"), Some(21.0));
        let gocyclo = "14 main (*Server).handle server.go:40:1\n3 main main main.go:5:1\n";
        assert_eq!(number_of(&parse(gocyclo), "max_complexity"), Some(14.0));
        let eslint = "/repo/src/a.js\n  3:1  error  Function 'parse' has a complexity of 12. Maximum allowed is 10  complexity\n  9:1  error  Arrow function has a complexity of 11. Maximum allowed is 10  complexity\n";
        assert_eq!(number_of(&parse(eslint), "max_complexity"), Some(12.0));
        let luacheck = "Checking src/app.lua                              1 warning\n\n    src/app.lua:3:1: cyclomatic complexity of function 'parse' is too high (12 > 10)\n\nTotal: 1 warning / 0 errors in 1 file\n";
        assert_eq!(number_of(&parse(luacheck), "max_complexity"), Some(12.0));
        let lizard = "\
================================================
  NLOC    CCN   token  PARAM  length  location
------------------------------------------------
       3      1     13      0       3 main@1-3@./a.c
      18      6     90      2      20 parse@5-24@./a.c
2 file analyzed.
";
        assert_eq!(number_of(&parse(lizard), "max_complexity"), Some(6.0));
        assert_eq!(
            number_of(&parse("max_complexity: 9\n"), "max_complexity"),
            Some(9.0)
        );
    }
}
