//! Reading `PRP_PHASE_STATUS` blocks out of agent output: finding the last complete block and
//! parsing its `KEY: value` body into a [`StatusBlock`].
//!
//! The parser sits apart from the model because it is where untrusted text comes in: the
//! delimiter rules, indentation and the errors that name a malformed line are its business
//! alone. Scalars are read with the same normalisation [`StatusBlock::set`] applies, so what
//! is parsed and what is built compare equal.

use super::{
    END_DELIMITER, START_DELIMITER, StatusBlock, Value, is_key_char, lookup, scalar_from_text,
};

/// What [`find_last`] saw in agent output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No complete block.
    None,
    /// The last complete block, parsed.
    Block(StatusBlock),
    /// The last complete block did not parse.
    Malformed(StatusBlockError),
}

/// Why a block body did not parse. Line numbers count from 1 at the first line after the start
/// delimiter (blank lines included).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusBlockError {
    #[error("line {line}: expected `KEY: value`, found `{found}`")]
    ExpectedKeyValue { line: usize, found: String },
    #[error(
        "line {line}: unexpected indentation (only lines under a `KEY:` with an empty value are indented), found `{found}`"
    )]
    UnexpectedIndent { line: usize, found: String },
    #[error("line {line}: duplicate key `{key}`")]
    DuplicateKey { line: usize, key: String },
}

/// Finds the last complete block in agent output and parses it.
///
/// A delimiter counts only when it is the whole line apart from surrounding whitespace (so CRLF
/// and indented blocks are fine, a delimiter quoted inside a sentence is not). A start without a
/// matching end is ignored, and a later start replaces an earlier one that was never closed.
/// If the last complete block is malformed the answer is [`Found::Malformed`], even when an
/// earlier block was fine: the agent's last word is what counts.
pub fn find_last(text: &str) -> Found {
    let lines: Vec<&str> = text.lines().collect();
    let mut open: Option<usize> = None;
    let mut last: Option<(usize, usize)> = None;
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed == START_DELIMITER {
            open = Some(index + 1);
        } else if trimmed == END_DELIMITER
            && let Some(start) = open.take()
        {
            last = Some((start, index));
        }
    }
    match last {
        None => Found::None,
        Some((start, end)) => match parse_lines(&lines[start..end]) {
            Ok(block) => Found::Block(block),
            Err(error) => Found::Malformed(error),
        },
    }
}

/// Parses the lines between the delimiters.
///
/// Blank lines are skipped and line ends (`\r`, trailing spaces) trimmed; indentation is read
/// relative to the least indented line, so a block indented as a whole parses too.
///
/// Trailing comments: the seed's template writes `GATE_1: {true|false}  # blocking_failed == 0`,
/// and agents copy such lines. A ` # …` tail is dropped only when what precedes it is a boolean,
/// an integer or an uppercase word (`COMPLETE`, `CLOSED`): such a value never contains ` #`
/// itself. Anywhere else (`RECOMMENDATION: fix issue # 42`) the `#` is part of the value, and
/// list items are never cut.
pub fn parse_body(body: &str) -> Result<StatusBlock, StatusBlockError> {
    let lines: Vec<&str> = body.lines().collect();
    parse_lines(&lines)
}

/// A non-blank body line.
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
    raw: &'a str,
}

impl Line<'_> {
    fn list_item(&self) -> Option<&str> {
        if self.text == "-" {
            Some("")
        } else {
            self.text.strip_prefix("- ").map(str::trim)
        }
    }
}

fn parse_lines(raw_lines: &[&str]) -> Result<StatusBlock, StatusBlockError> {
    let lines: Vec<Line<'_>> = raw_lines
        .iter()
        .enumerate()
        .filter_map(|(index, raw)| {
            let raw = raw.trim_end();
            let text = raw.trim_start();
            (!text.is_empty()).then(|| Line {
                number: index + 1,
                indent: raw.len() - text.len(),
                text,
                raw,
            })
        })
        .collect();
    let base = lines.iter().map(|line| line.indent).min().unwrap_or(0);
    let mut position = 0;
    let fields = parse_map(&lines, &mut position, base)?;
    Ok(StatusBlock { fields })
}

/// Parses `KEY: value` lines at exactly `indent`, stopping at the first less indented line.
fn parse_map(
    lines: &[Line<'_>],
    position: &mut usize,
    indent: usize,
) -> Result<Vec<(String, Value)>, StatusBlockError> {
    let mut entries = Vec::new();
    while let Some(line) = lines.get(*position) {
        if line.indent < indent {
            break;
        }
        if line.indent > indent {
            return Err(StatusBlockError::UnexpectedIndent {
                line: line.number,
                found: line.raw.to_owned(),
            });
        }
        let (key, text) =
            split_key_value(line.text).ok_or_else(|| StatusBlockError::ExpectedKeyValue {
                line: line.number,
                found: line.raw.to_owned(),
            })?;
        if lookup(&entries, key).is_some() {
            return Err(StatusBlockError::DuplicateKey {
                line: line.number,
                key: key.to_owned(),
            });
        }
        *position += 1;
        let value = if text.is_empty() {
            match lines.get(*position) {
                Some(next) if next.indent > indent && next.list_item().is_some() => {
                    Value::List(parse_list(lines, position, next.indent))
                }
                Some(next) if next.indent > indent => {
                    Value::Map(parse_map(lines, position, next.indent)?)
                }
                Some(next) if next.indent == indent && next.list_item().is_some() => {
                    Value::List(parse_list(lines, position, indent))
                }
                Some(_) | None => Value::Scalar(String::new()),
            }
        } else {
            scalar_from_text(text)
        };
        entries.push((key.to_owned(), value));
    }
    Ok(entries)
}

/// Collects `- item` lines at exactly `indent`; whatever follows is the caller's to judge.
fn parse_list(lines: &[Line<'_>], position: &mut usize, indent: usize) -> Vec<String> {
    let mut items = Vec::new();
    while let Some(line) = lines.get(*position) {
        match line.list_item() {
            Some(item) if line.indent == indent => items.push(item.to_owned()),
            Some(_) | None => break,
        }
        *position += 1;
    }
    items
}

/// Splits `KEY: value` (or `KEY:`) into a valid key and the trimmed value text.
fn split_key_value(text: &str) -> Option<(&str, &str)> {
    let (key, rest) = text.split_once(':')?;
    let key = key.trim_end();
    let separated = rest.is_empty() || rest.starts_with([' ', '\t']);
    (separated && is_valid_key(key)).then(|| (key, rest.trim()))
}

fn is_valid_key(key: &str) -> bool {
    key.chars().next().is_some_and(|first| first != '-') && key.chars().all(is_key_char)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status_block::tests::{FULL_PHASE_BLOCK, block, scalar};
    use crate::status_block::{PhaseStatus, Verdict};

    /// The seed's QA block, verbatim (placeholders and comments included).
    const SEED_QA_BLOCK: &str = "\
---PRP_PHASE_STATUS---
TIMESTAMP: {ISO-8601}
PHASE: QA
STATUS: {IN_PROGRESS|COMPLETE}
ITERATION: {integer}
PROGRESS_PERCENT: {calculated}

QA_METRICS:
  CHECKS_TOTAL: {integer}
  CHECKS_PASSING: {integer}
  CHECKS_FAILING: {integer}
  BLOCKING_ISSUES: {integer}
  WARNING_ISSUES: {integer}

MEMORY_CONTEXT:
  QUERIES_EXECUTED: 4
  HISTORICAL_BUGS_FOUND: {integer}
  PATTERNS_IDENTIFIED: {integer}

VERDICT: {APPROVE|REJECT}
ATTEMPT: {1|2|3}

CIRCUIT_BREAKER:
  STATE: {CLOSED|HALF_OPEN|OPEN}
  NO_PROGRESS_COUNT: {integer}

DUAL_GATE:
  GATE_1: {true|false}  # blocking_failed == 0
  GATE_2: {true|false}  # exit_signal AND verdict == APPROVE
  CAN_EXIT: {true|false}

EXIT_SIGNAL: {true|false}
RECOMMENDATION: {single line}
---END_PRP_PHASE_STATUS---
";

    /// The seed's QA block as an agent fills it in, comments kept.
    const FILLED_QA_BLOCK: &str = "\
---PRP_PHASE_STATUS---
TIMESTAMP: 2025-01-15T10:30:00Z
PHASE: QA
STATUS: COMPLETE
ITERATION: 2
PROGRESS_PERCENT: 100

QA_METRICS:
  CHECKS_TOTAL: 24
  CHECKS_PASSING: 23
  CHECKS_FAILING: 1
  BLOCKING_ISSUES: 0
  WARNING_ISSUES: 1

MEMORY_CONTEXT:
  QUERIES_EXECUTED: 4
  HISTORICAL_BUGS_FOUND: 2
  PATTERNS_IDENTIFIED: 3

VERDICT: APPROVE
ATTEMPT: 1

CIRCUIT_BREAKER:
  STATE: CLOSED
  NO_PROGRESS_COUNT: 0

DUAL_GATE:
  GATE_1: true  # blocking_failed == 0
  GATE_2: true  # exit_signal AND verdict == APPROVE
  CAN_EXIT: true

EXIT_SIGNAL: true
RECOMMENDATION: Ready for SHIP # after one warning is looked at
---END_PRP_PHASE_STATUS---
";

    #[test]
    fn seed_qa_block_parses_with_every_field() {
        let parsed = block(SEED_QA_BLOCK);
        let keys: Vec<&str> = parsed
            .fields()
            .iter()
            .map(|(key, _)| key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "TIMESTAMP",
                "PHASE",
                "STATUS",
                "ITERATION",
                "PROGRESS_PERCENT",
                "QA_METRICS",
                "MEMORY_CONTEXT",
                "VERDICT",
                "ATTEMPT",
                "CIRCUIT_BREAKER",
                "DUAL_GATE",
                "EXIT_SIGNAL",
                "RECOMMENDATION",
            ]
        );
        assert_eq!(parsed.phase(), Some("QA"));
        assert_eq!(
            parsed.get_path(&["MEMORY_CONTEXT", "QUERIES_EXECUTED"]),
            Some(&scalar("4"))
        );
        // Placeholders are not values: the typed accessors refuse them.
        assert_eq!(parsed.status(), None);
        assert_eq!(parsed.verdict(), None);
        assert_eq!(parsed.exit_signal(), None);
        assert_eq!(
            parsed.get_path(&["DUAL_GATE", "GATE_1"]),
            Some(&scalar("{true|false}  # blocking_failed == 0"))
        );
    }

    #[test]
    fn filled_qa_block_gives_every_typed_field() {
        let parsed = block(FILLED_QA_BLOCK);
        assert_eq!(parsed.str("TIMESTAMP"), Some("2025-01-15T10:30:00Z"));
        assert_eq!(parsed.phase(), Some("QA"));
        assert_eq!(parsed.status(), Some(PhaseStatus::Complete));
        assert_eq!(parsed.int("ITERATION"), Some(2));
        assert_eq!(parsed.int("PROGRESS_PERCENT"), Some(100));
        let metric = |key| {
            parsed
                .get_path(&["QA_METRICS", key])
                .and_then(Value::as_int)
        };
        assert_eq!(
            [
                "CHECKS_TOTAL",
                "CHECKS_PASSING",
                "CHECKS_FAILING",
                "BLOCKING_ISSUES",
                "WARNING_ISSUES"
            ]
            .map(metric),
            [Some(24), Some(23), Some(1), Some(0), Some(1)]
        );
        let memory = |key| {
            parsed
                .get_path(&["MEMORY_CONTEXT", key])
                .and_then(Value::as_int)
        };
        assert_eq!(
            [
                "QUERIES_EXECUTED",
                "HISTORICAL_BUGS_FOUND",
                "PATTERNS_IDENTIFIED"
            ]
            .map(memory),
            [Some(4), Some(2), Some(3)]
        );
        assert_eq!(parsed.verdict(), Some(Verdict::Approve));
        assert_eq!(parsed.int("ATTEMPT"), Some(1));
        assert_eq!(
            parsed
                .get_path(&["CIRCUIT_BREAKER", "STATE"])
                .and_then(Value::as_str),
            Some("CLOSED")
        );
        let gate = |key| {
            parsed
                .get_path(&["DUAL_GATE", key])
                .and_then(Value::as_bool)
        };
        assert_eq!(
            ["GATE_1", "GATE_2", "CAN_EXIT"].map(gate),
            [Some(true), Some(true), Some(true)]
        );
        assert_eq!(parsed.exit_signal(), Some(true));
        assert_eq!(
            parsed.str("RECOMMENDATION"),
            Some("Ready for SHIP # after one warning is looked at")
        );
        assert_eq!(parsed.tests(), None);
        assert_eq!(parsed.blockers(), Vec::<String>::new());
    }

    #[test]
    fn crlf_input_parses_like_lf() {
        let crlf = FULL_PHASE_BLOCK.replace('\n', "\r\n");
        assert_eq!(block(&crlf), block(FULL_PHASE_BLOCK));
    }

    #[test]
    fn indented_block_with_trailing_spaces_and_cr_parses() {
        let messy = FULL_PHASE_BLOCK
            .lines()
            .map(|line| format!("    {line}  "))
            .collect::<Vec<_>>()
            .join("\r\n");
        assert_eq!(block(&messy), block(FULL_PHASE_BLOCK));
    }

    #[test]
    fn text_around_the_block_is_ignored() {
        let output = format!(
            "I fixed the parser. STATUS: COMPLETE soon.\n```\n{FULL_PHASE_BLOCK}```\nEXIT_SIGNAL: true\nDone.\n"
        );
        assert_eq!(block(&output), block(FULL_PHASE_BLOCK));
    }

    #[test]
    fn last_complete_block_wins() {
        let first =
            "---PRP_PHASE_STATUS---\nPHASE: GREEN\nITERATION: 1\n---END_PRP_PHASE_STATUS---\n";
        let second =
            "---PRP_PHASE_STATUS---\nPHASE: GREEN\nITERATION: 2\n---END_PRP_PHASE_STATUS---\n";
        let incomplete = "---PRP_PHASE_STATUS---\nPHASE: GREEN\nITERATION: 3\nEXIT_SIGNAL: true\n";
        let cases: [(&str, String, Option<i64>); 5] = [
            ("two blocks", format!("{first}text\n{second}"), Some(2)),
            (
                "incomplete trailing block",
                format!("{first}{incomplete}"),
                Some(1),
            ),
            (
                "unclosed start before a complete block",
                format!("{incomplete}{second}"),
                Some(2),
            ),
            ("only an incomplete block", incomplete.to_owned(), None),
            (
                "end delimiter without a start",
                "---END_PRP_PHASE_STATUS---\nITERATION: 9\n".to_owned(),
                None,
            ),
        ];
        for (name, text, iteration) in cases {
            let found = match find_last(&text) {
                Found::Block(block) => block.int("ITERATION"),
                Found::None => None,
                Found::Malformed(error) => panic!("{name}: malformed: {error}"),
            };
            assert_eq!(found, iteration, "{name}");
        }
    }

    #[test]
    fn completion_words_outside_a_block_never_count() {
        let cases = [
            "EXIT_SIGNAL: true\nSTATUS: COMPLETE\nVERDICT: APPROVE\n",
            "see ---PRP_PHASE_STATUS--- EXIT_SIGNAL: true ---END_PRP_PHASE_STATUS---\n",
            "x ---PRP_PHASE_STATUS---\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS--- done\n",
            "",
        ];
        for text in cases {
            assert_eq!(find_last(text), Found::None, "{text:?}");
        }
    }

    #[test]
    fn malformed_bodies_name_the_line() {
        let cases = [
            (
                "PHASE: GREEN\nall tests pass\n",
                "line 2: expected `KEY: value`, found `all tests pass`",
            ),
            (
                "PHASE: GREEN\n\nhttp://example.com\n",
                "line 3: expected `KEY: value`, found `http://example.com`",
            ),
            (
                "- stray item\n",
                "line 1: expected `KEY: value`, found `- stray item`",
            ),
            (
                "PHASE: GREEN\n  ITERATION: 2\n",
                "line 2: unexpected indentation (only lines under a `KEY:` with an empty value are indented), found `  ITERATION: 2`",
            ),
            (
                "BLOCKERS:\n  - a\n    - b\n",
                "line 3: unexpected indentation (only lines under a `KEY:` with an empty value are indented), found `    - b`",
            ),
            (
                "BLOCKERS:\n  - a\n  NOTE: b\n",
                "line 3: unexpected indentation (only lines under a `KEY:` with an empty value are indented), found `  NOTE: b`",
            ),
            (
                "TESTS:\n  TOTAL: 1\n  - b\n",
                "line 3: expected `KEY: value`, found `  - b`",
            ),
            (
                "PHASE: GREEN\r\nPHASE: RED\r\n",
                "line 2: duplicate key `PHASE`",
            ),
        ];
        for (body, message) in cases {
            let error = parse_body(body).expect_err(body);
            assert_eq!(error.to_string(), message, "{body:?}");
            let wrapped = format!("{START_DELIMITER}\n{body}{END_DELIMITER}\n");
            assert_eq!(find_last(&wrapped), Found::Malformed(error), "{body:?}");
        }
    }

    #[test]
    fn malformed_last_block_is_not_replaced_by_an_earlier_one() {
        let text = format!("{FULL_PHASE_BLOCK}{START_DELIMITER}\nall good\n{END_DELIMITER}\n");
        assert!(matches!(find_last(&text), Found::Malformed(_)));
    }

    #[test]
    fn empty_block_is_an_empty_block() {
        let text = format!("{START_DELIMITER}\n\n{END_DELIMITER}\n");
        assert_eq!(find_last(&text), Found::Block(StatusBlock::new()));
    }

    #[test]
    fn yaml_style_list_at_key_indentation_parses() {
        let parsed = parse_body("BLOCKERS:\n- a\n- b\nEXIT_SIGNAL: false\n").expect("body parses");
        assert_eq!(parsed.blockers(), ["a", "b"]);
        assert_eq!(parsed.exit_signal(), Some(false));
    }

    #[test]
    fn trailing_comments_are_stripped_only_after_plain_words() {
        let cases = [
            ("true  # blocking_failed == 0", "true"),
            ("false\t# note", "false"),
            ("42 # count", "42"),
            ("-3 # delta", "-3"),
            ("HALF_OPEN # second miss", "HALF_OPEN"),
            ("COMPLETE #", "COMPLETE"),
            ("Ready for SHIP # later", "Ready for SHIP # later"),
            ("fix issue #42", "fix issue #42"),
            ("COMPLETE#1", "COMPLETE#1"),
            ("{true|false}  # placeholder", "{true|false}  # placeholder"),
            ("# only a comment", "# only a comment"),
        ];
        for (raw, expected) in cases {
            let parsed = parse_body(&format!("KEY: {raw}\n")).expect("body parses");
            assert_eq!(parsed.str("KEY"), Some(expected), "{raw:?}");
        }
        let items = parse_body("BLOCKERS:\n  - FLAKY # maybe\n").expect("body parses");
        assert_eq!(items.blockers(), ["FLAKY # maybe"]);
    }
}
