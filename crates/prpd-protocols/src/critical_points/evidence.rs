//! Evidence as `verify_plan` receives it — test result rows, scan findings, log lines,
//! screenshot paths — read into rows; `reading.rs` says how a row speaks of a hint.

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
    /// A line quoted from a file the run changed: what the file says, not a report of how
    /// something ran (only prpd's in-run evidence makes these).
    #[serde(skip)]
    pub is_file_line: bool,
}

impl Evidence {
    /// A row whose text alone tells how it went.
    pub fn line(text: impl Into<String>) -> Evidence {
        Evidence {
            text: text.into(),
            source: None,
            passed: None,
            is_file_line: false,
        }
    }

    /// A row from `source` that says whether it passed.
    pub fn judged(text: impl Into<String>, source: impl Into<String>, passed: bool) -> Evidence {
        Evidence {
            text: text.into(),
            source: Some(source.into()),
            passed: Some(passed),
            is_file_line: false,
        }
    }

    /// A line of `file`, as the run left it.
    pub fn file_line(text: impl Into<String>, file: impl Into<String>) -> Evidence {
        Evidence {
            is_file_line: true,
            ..Evidence::judged(text, file, true)
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
                is_file_line: false,
            })
        }
        other => Err(at(format!(
            "expected a string or an object {{text, source?, passed?}}, got {}",
            type_name(other)
        ))),
    }
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
}
