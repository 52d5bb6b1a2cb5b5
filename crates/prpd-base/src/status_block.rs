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
//!
//! This file holds the value model and the normalisation every value goes through. Reading
//! blocks out of text lives in `parse`, writing them in `render`: the two never call each other,
//! and it is the normalisation here that lets one read back what the other wrote.

mod parse;
mod render;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use parse::{Found, StatusBlockError, find_last, parse_body};

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

    /// A phase block in canonical form (as `Display` renders it).
    pub(super) const FULL_PHASE_BLOCK: &str = "\
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

    pub(super) fn block(text: &str) -> StatusBlock {
        match find_last(text) {
            Found::Block(block) => block,
            other => panic!("expected a block, got {other:?}"),
        }
    }

    pub(super) fn scalar(text: &str) -> Value {
        Value::Scalar(text.to_owned())
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
