//! Names of the tests that failed, read from a test runner's output, so that a REJECT and the
//! GREEN agent's feedback can say *which* tests fail rather than only how many — the lines that
//! name them are often far above the last lines of the output.
//!
//! Recognised: TAP (`node --test`, prove: `not ok 3 - name`), cargo test (`test a::b ... FAILED`),
//! go test (`--- FAIL: TestName`), pytest (`FAILED tests/x.py::test_y`), jest and vitest
//! (`✕ name`, `× name`), busted (`Failure → spec/x_spec.lua @ 3` followed by the name).

use std::io::BufRead;

/// At most this many names are kept; a run with more failures says "and N more".
pub const MAX_NAMES: usize = 20;

/// Failing test names found in `reader`, in output order, without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailingTests {
    /// The first [`MAX_NAMES`] names.
    pub names: Vec<String>,
    /// How many more failures were seen beyond those.
    pub more: usize,
}

impl FailingTests {
    /// One line for a report: `a, b and 3 more`.
    pub fn summary(&self) -> String {
        let names = self.names.join(", ");
        if self.more == 0 {
            names
        } else {
            format!("{names} and {} more", self.more)
        }
    }
}

impl FailingTests {
    /// The failing tests among `cases` (read from a JUnit report), in name order.
    pub fn named(cases: &crate::qa::metrics::TestCases) -> FailingTests {
        let mut names = cases.named(crate::qa::metrics::Outcome::Failed);
        let mut found = FailingTests {
            names: names.by_ref().take(MAX_NAMES).map(str::to_owned).collect(),
            more: 0,
        };
        found.more = names.count();
        found
    }
}

/// Reads failing test names from a runner's output, line by line.
pub fn parse(reader: impl BufRead) -> FailingTests {
    let mut found = FailingTests::default();
    for line in reader.split(b'\n').map_while(Result::ok) {
        let line = String::from_utf8_lossy(&line);
        let Some(name) = failing_name(line.trim_end_matches('\r')) else {
            continue;
        };
        if found.names.iter().any(|known| known == &name) {
            continue;
        }
        if found.names.len() < MAX_NAMES {
            found.names.push(name);
        } else {
            found.more += 1;
        }
    }
    found
}

/// Reads failing test names from a log file; an unreadable log has none.
pub fn parse_log(path: &std::path::Path) -> FailingTests {
    std::fs::File::open(path)
        .map(|file| parse(std::io::BufReader::new(file)))
        .unwrap_or_default()
}

/// The failing test a single output line names, if it names one.
fn failing_name(line: &str) -> Option<String> {
    let trimmed = line.trim();
    let name = if let Some(rest) = trimmed.strip_prefix("not ok ") {
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let rest = rest.strip_prefix("- ").unwrap_or(rest);
        rest.split(" # ").next().unwrap_or(rest)
    } else if let Some(rest) = trimmed.strip_prefix("--- FAIL: ") {
        rest.split(" (").next().unwrap_or(rest)
    } else if let Some(rest) = trimmed.strip_prefix("FAILED ") {
        rest.split(" - ").next().unwrap_or(rest)
    } else if let Some(rest) = trimmed.strip_prefix("test ") {
        rest.strip_suffix(" ... FAILED")?
    } else if let Some(rest) = trimmed
        .strip_prefix("✕ ")
        .or_else(|| trimmed.strip_prefix("× "))
    {
        strip_duration(rest)
    } else {
        return None;
    };
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// jest and vitest end a result line with its duration: `name (5 ms)`.
fn strip_duration(text: &str) -> &str {
    match text.rfind(" (") {
        Some(index) if text.ends_with("ms)") || text.ends_with(" s)") => &text[..index],
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn names_from_each_runner() {
        let cases = [
            ("not ok 5 - counts to three", Some("counts to three")),
            ("not ok 2 - flaky # TODO later", Some("flaky")),
            (
                "test parser::tests::empty ... FAILED",
                Some("parser::tests::empty"),
            ),
            ("test parser::tests::empty ... ok", None),
            ("--- FAIL: TestAdd (0.00s)", Some("TestAdd")),
            (
                "FAILED tests/test_x.py::test_y - AssertionError: 1 != 2",
                Some("tests/test_x.py::test_y"),
            ),
            ("  ✕ adds numbers (3 ms)", Some("adds numbers")),
            ("   × vitest case 12ms", Some("vitest case 12ms")),
            ("ok 1 - passes", None),
            ("FAILED", None),
        ];
        for (line, expected) in cases {
            assert_eq!(failing_name(line).as_deref(), expected, "{line}");
        }
    }

    #[test]
    fn duplicates_are_dropped_and_the_rest_counted() {
        let mut text = String::from("not ok 1 - same\nnot ok 1 - same\n");
        for index in 0..25 {
            writeln!(text, "not ok {index} - case {index}").expect("write to a String");
        }
        let found = parse(text.as_bytes());
        assert_eq!(found.names.len(), MAX_NAMES);
        assert_eq!(found.names[0], "same");
        assert_eq!(found.more, 6);
        assert!(found.summary().ends_with("and 6 more"));
    }
}
