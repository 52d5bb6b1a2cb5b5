//! `PRP_PHASE_STATUS` blocks: the small structured report an agent ends its output with, and the
//! one prpd itself writes to stdout and `phase-status.log` at every iteration and state change.
//!
//! The format comes from seed `004_…` (section `PRP_PHASE_STATUS`): a start and an end delimiter,
//! each alone on its line, around `KEY: value` lines. A `KEY:` with an empty value opens either a
//! nested map (two-space indented `KEY: value` lines) or a list (`- item` lines, indented, or at
//! the key's own indentation as YAML allows). Booleans are lowercase, integers bare.
//!
//! Reading agent output ([`find_last`]) trusts only what sits between delimiters that start their
//! line: completion words elsewhere in the output never count, and of several blocks the last
//! complete one wins, because agents often quote the template before they fill it in.
//!
//! Everything here is pure: no I/O. Values are normalised when they enter a [`StatusBlock`]
//! (see [`StatusBlock::set`]) so that rendering always yields text that parses back to the same
//! block, and never a line that could be taken for a delimiter.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The line that opens a block.
pub const START_DELIMITER: &str = "---PRP_PHASE_STATUS---";
/// The line that closes a block.
pub const END_DELIMITER: &str = "---END_PRP_PHASE_STATUS---";

/// One value of a status block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A single-line value, kept as text (`true`, `42`, `COMPLETE`, free text).
    Scalar(String),
    /// Nested `KEY: value` lines, in their original order.
    Map(Vec<(String, Value)>),
    /// `- item` lines.
    List(Vec<String>),
}

impl Value {
    /// The text of a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Scalar(text) => Some(text),
            Value::Map(_) | Value::List(_) => None,
        }
    }

    /// A scalar that is exactly `true` or `false` (the format's booleans are lowercase).
    pub fn as_bool(&self) -> Option<bool> {
        match self.as_str()? {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// A scalar that is a bare integer.
    pub fn as_int(&self) -> Option<i64> {
        self.as_str()?.parse().ok()
    }

    /// Brings a value into the form parsing would give it back: see [`StatusBlock::set`].
    fn normalised(self) -> Value {
        match self {
            Value::Scalar(text) => scalar_from_text(&text),
            Value::List(items) => Value::List(items.iter().map(|item| one_line(item)).collect()),
            Value::Map(entries) => {
                let mut normalised = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    upsert(&mut normalised, sanitise_key(&key), value.normalised());
                }
                Value::Map(normalised)
            }
        }
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Scalar(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Scalar(text)
    }
}

impl From<bool> for Value {
    fn from(flag: bool) -> Self {
        Value::Scalar(flag.to_string())
    }
}

impl From<i64> for Value {
    fn from(number: i64) -> Self {
        Value::Scalar(number.to_string())
    }
}

impl From<u64> for Value {
    fn from(number: u64) -> Self {
        Value::Scalar(number.to_string())
    }
}

impl From<u32> for Value {
    fn from(number: u32) -> Self {
        Value::Scalar(number.to_string())
    }
}

impl From<usize> for Value {
    fn from(number: usize) -> Self {
        Value::Scalar(number.to_string())
    }
}

impl From<Vec<String>> for Value {
    fn from(items: Vec<String>) -> Self {
        Value::List(items)
    }
}

impl From<Vec<&str>> for Value {
    fn from(items: Vec<&str>) -> Self {
        Value::List(items.into_iter().map(str::to_owned).collect())
    }
}

impl From<PhaseStatus> for Value {
    fn from(status: PhaseStatus) -> Self {
        Value::Scalar(status.to_string())
    }
}

impl From<Verdict> for Value {
    fn from(verdict: Verdict) -> Self {
        Value::Scalar(verdict.to_string())
    }
}

impl From<TestCounts> for Value {
    fn from(counts: TestCounts) -> Self {
        Value::Map(vec![
            ("TOTAL".to_owned(), counts.total.into()),
            ("PASSING".to_owned(), counts.passing.into()),
            ("FAILING".to_owned(), counts.failing.into()),
            ("SKIPPED".to_owned(), counts.skipped.into()),
        ])
    }
}

/// The `STATUS` of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PhaseStatus {
    InProgress,
    Blocked,
    Complete,
}

impl PhaseStatus {
    fn as_str(self) -> &'static str {
        match self {
            PhaseStatus::InProgress => "IN_PROGRESS",
            PhaseStatus::Blocked => "BLOCKED",
            PhaseStatus::Complete => "COMPLETE",
        }
    }
}

impl fmt::Display for PhaseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PhaseStatus {
    type Err = UnknownWordError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [
            PhaseStatus::InProgress,
            PhaseStatus::Blocked,
            PhaseStatus::Complete,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
        .ok_or_else(|| UnknownWordError {
            expected: "IN_PROGRESS, BLOCKED or COMPLETE",
            found: text.to_owned(),
        })
    }
}

/// The QA verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Approve,
    Reject,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "APPROVE",
            Verdict::Reject => "REJECT",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = UnknownWordError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Verdict::Approve, Verdict::Reject]
            .into_iter()
            .find(|verdict| verdict.as_str() == text)
            .ok_or_else(|| UnknownWordError {
                expected: "APPROVE or REJECT",
                found: text.to_owned(),
            })
    }
}

/// A word that is not one of an enum's spellings (matching is exact: the format is uppercase).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, found `{found}`")]
pub struct UnknownWordError {
    expected: &'static str,
    found: String,
}

/// The `TESTS` map of a phase block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TestCounts {
    pub total: u64,
    pub passing: u64,
    pub failing: u64,
    pub skipped: u64,
}

/// A parsed or built status block: its top-level fields in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusBlock {
    fields: Vec<(String, Value)>,
}

impl StatusBlock {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key`, replacing its value in place if present, else appending it.
    ///
    /// The key and value are normalised to what parsing the rendered block would give back, so
    /// `parse(render(block)) == block` always holds:
    /// - newlines (and carriage returns) in scalars and list items become spaces, and the text is
    ///   trimmed, so no value can spill onto a line of its own (or pose as a delimiter);
    /// - a safe trailing comment (see [`parse_body`]) is dropped from a scalar;
    /// - a scalar `[]` becomes an empty list and `{}` an empty map, which is how those render;
    /// - characters other than ASCII letters, digits, `_` and `-` in keys become `_`, as does a
    ///   leading `-` (it would read as a list item); an empty key becomes `_`.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        upsert(
            &mut self.fields,
            sanitise_key(key),
            value.into().normalised(),
        );
        self
    }

    /// The top-level fields, in order.
    pub fn fields(&self) -> &[(String, Value)] {
        &self.fields
    }

    /// The value of a top-level key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        lookup(&self.fields, key)
    }

    /// The value at a path of keys through nested maps, e.g. `["DUAL_GATE", "CAN_EXIT"]`.
    pub fn get_path(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        let mut value = self.get(first)?;
        for key in rest {
            value = match value {
                Value::Map(entries) => lookup(entries, key)?,
                Value::Scalar(_) | Value::List(_) => return None,
            };
        }
        Some(value)
    }

    /// A top-level scalar's text.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// A top-level scalar that is exactly `true` or `false`.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.get(key)?.as_bool()
    }

    /// A top-level scalar that is a bare integer.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key)?.as_int()
    }

    /// `PHASE`.
    pub fn phase(&self) -> Option<&str> {
        self.str("PHASE")
    }

    /// `STATUS`, if it is one of the known spellings.
    pub fn status(&self) -> Option<PhaseStatus> {
        self.str("STATUS")?.parse().ok()
    }

    /// `EXIT_SIGNAL`, if it is a boolean.
    pub fn exit_signal(&self) -> Option<bool> {
        self.bool("EXIT_SIGNAL")
    }

    /// `VERDICT`, if it is `APPROVE` or `REJECT`.
    pub fn verdict(&self) -> Option<Verdict> {
        self.str("VERDICT")?.parse().ok()
    }

    /// `TESTS`, if all four counts are present and non-negative integers.
    pub fn tests(&self) -> Option<TestCounts> {
        let count = |key: &str| {
            self.get_path(&["TESTS", key])?
                .as_str()?
                .parse::<u64>()
                .ok()
        };
        Some(TestCounts {
            total: count("TOTAL")?,
            passing: count("PASSING")?,
            failing: count("FAILING")?,
            skipped: count("SKIPPED")?,
        })
    }

    /// `BLOCKERS` as a list of texts.
    ///
    /// Agents do not always write a list: an empty scalar or `none` (any case) means no blockers,
    /// any other scalar is one blocker, and a map gives one blocker per entry, so that a blocker
    /// is never lost to an unexpected shape.
    pub fn blockers(&self) -> Vec<String> {
        match self.get("BLOCKERS") {
            None => Vec::new(),
            Some(Value::List(items)) => items.clone(),
            Some(Value::Scalar(text)) => {
                if text.is_empty() || text.eq_ignore_ascii_case("none") {
                    Vec::new()
                } else {
                    vec![text.clone()]
                }
            }
            Some(Value::Map(entries)) => entries
                .iter()
                .map(|(key, value)| match value {
                    Value::Scalar(text) => format!("{key}: {text}"),
                    Value::Map(_) | Value::List(_) => key.clone(),
                })
                .collect(),
        }
    }
}

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

fn is_key_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_' || character == '-'
}

fn sanitise_key(key: &str) -> String {
    let mut sanitised: String = key
        .chars()
        .map(|character| {
            if is_key_char(character) {
                character
            } else {
                '_'
            }
        })
        .collect();
    if sanitised.is_empty() || sanitised.starts_with('-') {
        sanitised.replace_range(..sanitised.chars().next().map_or(0, char::len_utf8), "_");
    }
    sanitised
}

/// A scalar as parsing reads it: one line, trimmed, safe trailing comment dropped, `[]` and `{}`
/// as empty containers.
fn scalar_from_text(text: &str) -> Value {
    let text = strip_safe_comment(&one_line(text)).to_owned();
    match text.as_str() {
        "[]" => Value::List(Vec::new()),
        "{}" => Value::Map(Vec::new()),
        _ => Value::Scalar(text),
    }
}

fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ").trim().to_owned()
}

fn strip_safe_comment(text: &str) -> &str {
    let comment_start = text
        .char_indices()
        .find(|&(index, character)| character == '#' && text[..index].ends_with([' ', '\t']))
        .map(|(index, _)| index);
    let Some(comment_start) = comment_start else {
        return text;
    };
    let head = text[..comment_start].trim_end();
    let is_word = !head.is_empty()
        && head.chars().all(|character| {
            character.is_ascii_uppercase() || character.is_ascii_digit() || character == '_'
        });
    if head == "true" || head == "false" || head.parse::<i64>().is_ok() || is_word {
        head
    } else {
        text
    }
}

fn lookup<'a>(entries: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value)
}

fn upsert(entries: &mut Vec<(String, Value)>, key: String, value: Value) {
    match entries.iter_mut().find(|(name, _)| *name == key) {
        Some(entry) => entry.1 = value,
        None => entries.push((key, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A phase block in canonical form (as `Display` renders it).
    const FULL_PHASE_BLOCK: &str = "\
---PRP_PHASE_STATUS---
TIMESTAMP: 2025-01-15T10:30:00Z
PHASE: GREEN
STATUS: IN_PROGRESS
ITERATION: 3
PROGRESS_PERCENT: 60
TESTS:
  TOTAL: 12
  PASSING: 9
  FAILING: 2
  SKIPPED: 1
FILES:
  CREATED:
    - src/parser.rs
    - tests/parser_test.rs
  MODIFIED:
    - src/lib.rs
  DELETED: []
CIRCUIT_BREAKER:
  STATE: HALF_OPEN
  NO_PROGRESS_COUNT: 2
DUAL_GATE:
  GATE_1: false
  GATE_2: false
  CAN_EXIT: false
BLOCKERS:
  - test_parse_empty fails: index out of range
  - missing fixture data/empty.txt
EXIT_SIGNAL: false
RECOMMENDATION: Fix the empty-input case in parse()
---END_PRP_PHASE_STATUS---
";

    fn block(text: &str) -> StatusBlock {
        match find_last(text) {
            Found::Block(block) => block,
            other => panic!("expected a block, got {other:?}"),
        }
    }

    fn scalar(text: &str) -> Value {
        Value::Scalar(text.to_owned())
    }

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

    #[test]
    fn set_replaces_in_place_and_appends_new_keys() {
        let mut built = StatusBlock::new();
        built.set("PHASE", "RED").set("STATUS", "BLOCKED");
        built.set("PHASE", "GREEN").set("ITERATION", 1_u32);
        assert_eq!(
            built.fields(),
            [
                ("PHASE".to_owned(), scalar("GREEN")),
                ("STATUS".to_owned(), scalar("BLOCKED")),
                ("ITERATION".to_owned(), scalar("1")),
            ]
        );
        assert_eq!(built.status(), Some(PhaseStatus::Blocked));
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

    #[test]
    fn values_that_could_break_the_format_are_normalised() {
        let mut hostile = StatusBlock::new();
        hostile
            .set(
                "RECOMMENDATION",
                "first\n---END_PRP_PHASE_STATUS---\r\nsecond",
            )
            .set("DELIMITER", END_DELIMITER)
            .set("COMMENTED", "true   # kept out")
            .set("EMPTY_LIST", "[]")
            .set("-KEY WITH: odd\nchars", "x")
            .set("", "y")
            .set(
                "BLOCKERS",
                vec!["  padded  ", "---PRP_PHASE_STATUS---", "a\nb"],
            )
            .set(
                "NESTED",
                Value::Map(vec![
                    ("A B".to_owned(), "one\ntwo".into()),
                    ("A B".to_owned(), "last".into()),
                ]),
            );
        assert_eq!(
            hostile.fields(),
            [
                (
                    "RECOMMENDATION".to_owned(),
                    scalar("first ---END_PRP_PHASE_STATUS---  second")
                ),
                ("DELIMITER".to_owned(), scalar(END_DELIMITER)),
                ("COMMENTED".to_owned(), scalar("true")),
                ("EMPTY_LIST".to_owned(), Value::List(Vec::new())),
                ("_KEY_WITH__odd_chars".to_owned(), scalar("x")),
                ("_".to_owned(), scalar("y")),
                (
                    "BLOCKERS".to_owned(),
                    Value::from(vec!["padded", "---PRP_PHASE_STATUS---", "a b"])
                ),
                (
                    "NESTED".to_owned(),
                    Value::Map(vec![("A_B".to_owned(), scalar("last"))])
                ),
            ]
        );
        let rendered = hostile.to_string();
        let lines: Vec<&str> = rendered.lines().collect();
        for line in &lines[1..lines.len() - 1] {
            let trimmed = line.trim();
            assert!(
                trimmed != START_DELIMITER && trimmed != END_DELIMITER,
                "delimiter-like line {line:?}"
            );
        }
        assert_eq!(block(&rendered), hostile);
    }

    #[test]
    fn blockers_accept_the_shapes_agents_write() {
        let cases: [(&str, &[&str]); 6] = [
            ("PHASE: RED\n", &[]),
            ("BLOCKERS:\n", &[]),
            ("BLOCKERS: []\n", &[]),
            ("BLOCKERS: None\n", &[]),
            (
                "BLOCKERS: waiting for the API key\n",
                &["waiting for the API key"],
            ),
            (
                "BLOCKERS:\n  DB: down\n  CI:\n    - red\n",
                &["DB: down", "CI"],
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(
                parse_body(body).expect("body parses").blockers(),
                expected,
                "{body:?}"
            );
        }
    }

    #[test]
    fn tests_need_all_four_counts() {
        let cases = [
            (
                "TESTS:\n  TOTAL: 3\n  PASSING: 1\n  FAILING: 1\n  SKIPPED: 1\n",
                Some(TestCounts {
                    total: 3,
                    passing: 1,
                    failing: 1,
                    skipped: 1,
                }),
            ),
            ("TESTS:\n  TOTAL: 3\n  PASSING: 3\n  FAILING: 0\n", None),
            (
                "TESTS:\n  TOTAL: -1\n  PASSING: 0\n  FAILING: 0\n  SKIPPED: 0\n",
                None,
            ),
            ("TESTS: 3\n", None),
        ];
        for (body, expected) in cases {
            assert_eq!(
                parse_body(body).expect("body parses").tests(),
                expected,
                "{body:?}"
            );
        }
    }

    #[test]
    fn scalars_are_typed_strictly() {
        let parsed =
            parse_body("A: true\nB: True\nC: 7\nD: 7%\nE:\n  F: 1\n").expect("body parses");
        assert_eq!(parsed.bool("A"), Some(true));
        assert_eq!(parsed.bool("B"), None);
        assert_eq!(parsed.int("C"), Some(7));
        assert_eq!(parsed.int("D"), None);
        assert_eq!(parsed.str("E"), None);
        assert_eq!(
            parsed.get_path(&["E", "F"]).and_then(Value::as_int),
            Some(1)
        );
        assert_eq!(parsed.get_path(&["E", "F", "G"]), None);
        assert_eq!(parsed.get_path(&["C", "F"]), None);
        assert_eq!(parsed.get_path(&[]), None);
    }

    #[test]
    fn enum_words_round_trip_through_display_fromstr_and_serde() {
        for status in [
            PhaseStatus::InProgress,
            PhaseStatus::Blocked,
            PhaseStatus::Complete,
        ] {
            let word = status.to_string();
            assert_eq!(word.parse::<PhaseStatus>(), Ok(status));
            assert_eq!(
                serde_json::to_string(&status).expect("serialises"),
                format!("\"{word}\"")
            );
        }
        for verdict in [Verdict::Approve, Verdict::Reject] {
            let word = verdict.to_string();
            assert_eq!(word.parse::<Verdict>(), Ok(verdict));
            assert_eq!(
                serde_json::to_string(&verdict).expect("serialises"),
                format!("\"{word}\"")
            );
        }
        assert_eq!(
            "approve"
                .parse::<Verdict>()
                .expect_err("a wrong word")
                .to_string(),
            "expected APPROVE or REJECT, found `approve`"
        );
        assert_eq!(
            "DONE"
                .parse::<PhaseStatus>()
                .expect_err("a wrong word")
                .to_string(),
            "expected IN_PROGRESS, BLOCKED or COMPLETE, found `DONE`"
        );
    }
}
