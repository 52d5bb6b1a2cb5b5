//! Evidence as `verify_plan` receives it — test result rows, scan findings, log lines,
//! screenshot paths — and how a hint is found in it. A row matches a hint when it contains the
//! hint, case and runs of whitespace aside. A matching row counts *against* the point when it
//! says the thing failed: its `passed` is `false`, or, for a row that does not say, its text
//! outside the hint carries a failure marker (`FAILED`, `fail`, `not ok`, an upper-case
//! `ERROR`, `✗`, `✕`, `❌`), unless the marker is counted as none (`0 failed`, `no failures`).
//! So `FAILED tests/test_login.py::test_login` never proves `test_login`.

use serde_json::Value;

use super::plan::type_name;

/// One row of evidence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Evidence {
    pub text: String,
    /// Where the row came from (a file, a check), when the caller said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Whether the row reports a success, when the caller said; otherwise read from its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

impl Evidence {
    /// A row whose text alone tells how it went.
    pub fn line(text: impl Into<String>) -> Evidence {
        Evidence {
            text: text.into(),
            source: None,
            passed: None,
        }
    }

    /// A row from `source` that says whether it passed.
    pub fn judged(text: impl Into<String>, source: impl Into<String>, passed: bool) -> Evidence {
        Evidence {
            text: text.into(),
            source: Some(source.into()),
            passed: Some(passed),
        }
    }
}

/// Evidence `verify_plan` cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad_evidence: {0}")]
pub struct BadEvidence(pub String);

/// Reads `evidence`: a list whose entries are strings or `{text, source?, passed?}` objects, or
/// one string holding one row per line.
pub fn read(value: Option<&Value>) -> Result<Vec<Evidence>, BadEvidence> {
    match value {
        None | Some(Value::Null) => Err(BadEvidence(
            "evidence is required: a list of rows (test results, findings, log lines, paths)"
                .to_owned(),
        )),
        Some(Value::String(text)) => Ok(text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(Evidence::line)
            .collect()),
        Some(Value::Array(entries)) => entries
            .iter()
            .enumerate()
            .map(|(index, entry)| row(index, entry))
            .collect(),
        Some(other) => Err(BadEvidence(format!(
            "evidence must be a list or a string, got {}",
            type_name(other)
        ))),
    }
}

fn row(index: usize, entry: &Value) -> Result<Evidence, BadEvidence> {
    let at = |message: String| BadEvidence(format!("evidence[{index}]: {message}"));
    match entry {
        Value::String(text) => Ok(Evidence::line(text.clone())),
        Value::Object(fields) => {
            let text = match fields.get("text") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => {
                    return Err(at(format!(
                        "text must be a string, got {}",
                        type_name(other)
                    )));
                }
                None => return Err(at("missing text".to_owned())),
            };
            let source = match fields.get("source") {
                None | Some(Value::Null) => None,
                Some(Value::String(source)) => Some(source.clone()),
                Some(other) => {
                    return Err(at(format!(
                        "source must be a string, got {}",
                        type_name(other)
                    )));
                }
            };
            let passed = match fields.get("passed") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(passed)) => Some(*passed),
                Some(other) => {
                    return Err(at(format!(
                        "passed must be a boolean, got {}",
                        type_name(other)
                    )));
                }
            };
            Ok(Evidence {
                text,
                source,
                passed,
            })
        }
        other => Err(at(format!(
            "expected a string or an object {{text, source?, passed?}}, got {}",
            type_name(other)
        ))),
    }
}

/// How a row that contains a hint speaks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The row contains the hint and does not say it failed.
    Supports,
    /// The row contains the hint and says it failed.
    Contradicts,
}

/// How `row` reads for `hint`, or `None` when it does not contain it.
pub fn reading(row: &Evidence, hint: &str) -> Option<Reading> {
    let hint = folded(hint);
    if hint.is_empty() {
        return None;
    }
    let text = folded(&row.text);
    let start = text.find(&hint)?;
    let failed = if let Some(passed) = row.passed {
        !passed
    } else {
        let outside = format!("{} {}", &text[..start], &text[start + hint.len()..]);
        // Upper-case ERROR is a marker; a lower-case "error" is too often prose.
        has_failure_marker(&outside) || has_upper_error(&fold_spaces(&row.text), &hint)
    };
    Some(if failed {
        Reading::Contradicts
    } else {
        Reading::Supports
    })
}

/// Lower case with runs of whitespace made one space.
fn folded(text: &str) -> String {
    fold_spaces(text).to_lowercase()
}

fn fold_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

const MARKER_WORDS: &[&str] = &[
    "fail", "failed", "fails", "failure", "failures", "failing", "not ok",
];
const MARKER_SYMBOLS: &[char] = &['✗', '✕', '❌', '✘'];

/// Whether lower-cased `text` says something failed (`0 failed` and `no failures` do not).
fn has_failure_marker(text: &str) -> bool {
    if text.contains(MARKER_SYMBOLS) {
        return true;
    }
    MARKER_WORDS.iter().any(|word| {
        text.match_indices(word).any(|(at, _)| {
            let before = &text[..at];
            let after = &text[at + word.len()..];
            let starts_word = before
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let ends_word = after.chars().next().is_none_or(|c| !c.is_alphanumeric());
            starts_word && ends_word && !counted_as_none(before)
        })
    })
}

/// Whether the word before a marker makes it a count of none: `0 failed`, `no failures`.
fn counted_as_none(before: &str) -> bool {
    let last_word = before
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    last_word == "0" || last_word == "no"
}

/// Whether `text` (case kept) has the word `ERROR` outside the hint.
fn has_upper_error(text: &str, hint_folded: &str) -> bool {
    let lower = text.to_lowercase();
    let hint_range = lower
        .find(hint_folded)
        .map(|start| start..start + hint_folded.len());
    text.match_indices("ERROR").any(|(at, _)| {
        let inside_hint = hint_range.as_ref().is_some_and(|range| range.contains(&at));
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let ends_word = text[at + 5..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        starts_word && ends_word && !inside_hint
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_read_from_lists_objects_and_strings() {
        let rows = read(Some(&json!([
            "test_login passed",
            {"text": "scan: 0 findings", "source": "semgrep", "passed": true},
        ])))
        .expect("valid");
        assert_eq!(rows[0], Evidence::line("test_login passed"));
        assert_eq!(
            rows[1],
            Evidence::judged("scan: 0 findings", "semgrep", true)
        );
        let lines = read(Some(&json!("a\n\n b \n"))).expect("valid");
        assert_eq!(lines.len(), 2);
        for (bad, message) in [
            (None, "evidence is required"),
            (Some(json!(3)), "must be a list or a string, got a number"),
            (Some(json!([{"source": "x"}])), "evidence[0]: missing text"),
            (
                Some(json!([{"text": "x", "passed": "yes"}])),
                "passed must be a boolean",
            ),
            (
                Some(json!([true])),
                "evidence[0]: expected a string or an object",
            ),
        ] {
            let error = read(bad.as_ref()).expect_err("refused");
            assert!(error.to_string().contains(message), "{error}");
        }
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "one table")]
    fn how_a_row_reads_for_a_hint() {
        let cases: [(&str, Option<bool>, &str, Option<Reading>); 16] = [
            (
                "test login ... ok",
                None,
                "test login",
                Some(Reading::Supports),
            ),
            (
                "test  LOGIN ... ok",
                None,
                "Test login",
                Some(Reading::Supports),
            ),
            (
                "test login ... FAILED",
                None,
                "test login",
                Some(Reading::Contradicts),
            ),
            (
                "FAILED tests/test_x.py::test_login",
                None,
                "test_login",
                Some(Reading::Contradicts),
            ),
            (
                "--- FAIL: TestLogin (0.01s)",
                None,
                "TestLogin",
                Some(Reading::Contradicts),
            ),
            (
                "not ok 3 - login works",
                None,
                "login works",
                Some(Reading::Contradicts),
            ),
            (
                "✕ login works (5 ms)",
                None,
                "login works",
                Some(Reading::Contradicts),
            ),
            (
                "✓ login works (5 ms)",
                None,
                "login works",
                Some(Reading::Supports),
            ),
            (
                "15 passed, 0 failed",
                None,
                "15 passed",
                Some(Reading::Supports),
            ),
            (
                "15 passed, 10 failed",
                None,
                "15 passed",
                Some(Reading::Contradicts),
            ),
            (
                "scan finished with no failures",
                None,
                "scan finished",
                Some(Reading::Supports),
            ),
            (
                "ERROR in src/app.ts",
                None,
                "src/app.ts",
                Some(Reading::Contradicts),
            ),
            (
                "shows an error message ok",
                None,
                "shows an error message",
                Some(Reading::Supports),
            ),
            (
                "the failing test is fixed",
                Some(true),
                "test is fixed",
                Some(Reading::Supports),
            ),
            (
                "all good",
                Some(false),
                "all good",
                Some(Reading::Contradicts),
            ),
            ("something else", None, "login", None),
        ];
        for (text, passed, hint, expected) in cases {
            let row = Evidence {
                text: text.to_owned(),
                source: None,
                passed,
            };
            assert_eq!(reading(&row, hint), expected, "{text:?} for {hint:?}");
        }
    }

    #[test]
    fn a_hint_that_names_the_failure_is_not_its_own_marker() {
        assert_eq!(
            reading(
                &Evidence::line("login fails with a wrong password: ok"),
                "login fails with a wrong password"
            ),
            Some(Reading::Supports)
        );
        assert_eq!(reading(&Evidence::line("ok"), "  "), None);
    }
}
