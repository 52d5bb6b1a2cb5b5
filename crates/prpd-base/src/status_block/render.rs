//! Writing a [`StatusBlock`] as text: the block prpd prints to stdout and `phase-status.log`.
//!
//! Rendering is kept apart from parsing because it trusts its input: values were normalised
//! when they entered the block, so the renderer only lays them out, and the tests here check
//! that the layout parses back to the same block.

use std::fmt;

use super::{END_DELIMITER, START_DELIMITER, StatusBlock, Value};

/// Renders the block: start delimiter, `KEY: value` lines with two-space nesting and `- item`
/// lists, the end delimiter and a newline. Empty lists render as `[]` and empty maps as `{}`,
/// an empty scalar as a bare `KEY:`.
impl fmt::Display for StatusBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{START_DELIMITER}")?;
        render_entries(f, &self.fields, 0)?;
        writeln!(f, "{END_DELIMITER}")
    }
}

fn render_entries(
    f: &mut fmt::Formatter<'_>,
    entries: &[(String, Value)],
    depth: usize,
) -> fmt::Result {
    let indent = "  ".repeat(depth);
    for (key, value) in entries {
        match value {
            Value::Scalar(text) if text.is_empty() => writeln!(f, "{indent}{key}:")?,
            Value::Scalar(text) => writeln!(f, "{indent}{key}: {text}")?,
            Value::List(items) if items.is_empty() => writeln!(f, "{indent}{key}: []")?,
            Value::List(items) => {
                writeln!(f, "{indent}{key}:")?;
                for item in items {
                    if item.is_empty() {
                        writeln!(f, "{indent}  -")?;
                    } else {
                        writeln!(f, "{indent}  - {item}")?;
                    }
                }
            }
            Value::Map(nested) if nested.is_empty() => writeln!(f, "{indent}{key}: {{}}")?,
            Value::Map(nested) => {
                writeln!(f, "{indent}{key}:")?;
                render_entries(f, nested, depth + 1)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::status_block::tests::{FULL_PHASE_BLOCK, block};
    use crate::status_block::{PhaseStatus, StatusBlock, TestCounts, Value, Verdict};

    #[test]
    fn full_phase_block_round_trips() {
        let parsed = block(FULL_PHASE_BLOCK);
        assert_eq!(parsed.to_string(), FULL_PHASE_BLOCK);
        assert_eq!(block(&parsed.to_string()), parsed);

        assert_eq!(parsed.status(), Some(PhaseStatus::InProgress));
        assert_eq!(
            parsed.tests(),
            Some(TestCounts {
                total: 12,
                passing: 9,
                failing: 2,
                skipped: 1
            })
        );
        assert_eq!(
            parsed.get_path(&["FILES", "CREATED"]),
            Some(&Value::from(vec!["src/parser.rs", "tests/parser_test.rs"]))
        );
        assert_eq!(
            parsed.get_path(&["FILES", "DELETED"]),
            Some(&Value::List(Vec::new()))
        );
        assert_eq!(
            parsed.blockers(),
            [
                "test_parse_empty fails: index out of range",
                "missing fixture data/empty.txt"
            ]
        );
        assert_eq!(parsed.exit_signal(), Some(false));
    }

    #[test]
    fn built_block_renders_and_parses_back() {
        let mut built = StatusBlock::new();
        built
            .set("TIMESTAMP", "2025-01-15T10:30:00Z")
            .set("PHASE", "GREEN")
            .set("STATUS", PhaseStatus::InProgress)
            .set("ITERATION", 3_u32)
            .set("PROGRESS_PERCENT", 60_u64)
            .set(
                "TESTS",
                TestCounts {
                    total: 12,
                    passing: 9,
                    failing: 2,
                    skipped: 1,
                },
            )
            .set(
                "FILES",
                Value::Map(vec![
                    (
                        "CREATED".to_owned(),
                        vec!["src/parser.rs", "tests/parser_test.rs"].into(),
                    ),
                    ("MODIFIED".to_owned(), vec!["src/lib.rs"].into()),
                    ("DELETED".to_owned(), Value::List(Vec::new())),
                ]),
            )
            .set(
                "CIRCUIT_BREAKER",
                Value::Map(vec![
                    ("STATE".to_owned(), "HALF_OPEN".into()),
                    ("NO_PROGRESS_COUNT".to_owned(), 2_u64.into()),
                ]),
            )
            .set(
                "DUAL_GATE",
                Value::Map(vec![
                    ("GATE_1".to_owned(), false.into()),
                    ("GATE_2".to_owned(), false.into()),
                    ("CAN_EXIT".to_owned(), false.into()),
                ]),
            )
            .set(
                "BLOCKERS",
                vec![
                    "test_parse_empty fails: index out of range",
                    "missing fixture data/empty.txt",
                ],
            )
            .set("EXIT_SIGNAL", false)
            .set("RECOMMENDATION", "Fix the empty-input case in parse()");
        let rendered = built.to_string();
        assert_eq!(rendered, FULL_PHASE_BLOCK);
        assert_eq!(block(&rendered), built);
    }

    #[test]
    fn qa_block_renders_as_snapshot() {
        let mut qa = StatusBlock::new();
        qa.set("PHASE", "QA")
            .set("STATUS", PhaseStatus::Complete)
            .set("VERDICT", Verdict::Reject)
            .set("ATTEMPT", 2_u32)
            .set("BLOCKERS", vec!["clippy: 3 warnings", ""])
            .set("NOTES", "")
            .set("EXTRA", Value::Map(Vec::new()))
            .set("EXIT_SIGNAL", false);
        insta::assert_snapshot!(qa.to_string());
        assert_eq!(block(&qa.to_string()), qa);
    }
}
