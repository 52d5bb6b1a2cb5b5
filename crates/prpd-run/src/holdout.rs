//! Hold-out tests: a share of RED's tests that GREEN, REFACTOR and DOCUMENT never see, put
//! back in QA, where they must pass like every other test. Frozen tests stop an agent from
//! weakening the tests; they do not stop it from writing code that fits exactly the tests it
//! sees (a table of their inputs, an `if` on their arguments). A test the implementing agent
//! never saw checks the feature on inputs it could not special-case.
//!
//! The choice: per requirement id, RED's tests that failed at RED's end and whose block prpd
//! can find in their file; of `n` such tests for one id, `max(1, ⌊n·share⌋)` are held out,
//! never all — every id keeps at least one visible test, and one test alone stays visible.
//! Tests whose names carry no id all stay visible.
//! Which ones is decided by a hash of the test's name, so a resumed run, or a run again on the
//! same tests, decides the same. This module is pure: the driver (`driver/holdout.rs`) reads the files, cuts them,
//! proves the cut by running the tests, hides the originals and puts them back.

pub mod blocks;
pub mod message;
pub mod withhold;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use prpd_qa::metrics::Outcome;

/// The hold-out tests of a run, as the record keeps them. It holds names and line numbers,
/// never a test's source: the record is in a folder an agent can read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holdout {
    /// The choice was made (at RED's end).
    pub decided: bool,
    /// The examiner was called (`[agents.examiner]`; once per run).
    #[serde(default)]
    pub examined: bool,
    /// The tests held out.
    pub tests: Vec<HeldTest>,
    /// The files they were cut from.
    pub files: Vec<HeldFile>,
    /// Why fewer tests than the share were held out, or none, one sentence each.
    pub notes: Vec<String>,
    /// The held-out tests are in the working tree now (from QA's start until GREEN's).
    pub exposed: bool,
    /// The snapshots that put them back (QA's start), which SHIP replays as RED's work.
    pub restores: Vec<u32>,
    /// Files of the run directory whose originals quote held-out tests: prpd keeps those in
    /// its store and leaves them redacted in place until the run ships or is aborted.
    pub withheld: BTreeMap<PathBuf, Redacted>,
    /// Git objects that held the originals, recorded before a snapshot ref moves and removed
    /// once the record names the new snapshots (ids only).
    #[serde(default)]
    pub to_remove: std::collections::BTreeSet<String>,
    /// Loose git objects removed because they held the originals.
    pub objects_removed: usize,
    /// Why some stayed (git had packed them, an agent committed or staged them).
    pub objects_note: Option<String>,
    /// How each held-out test ended in QA's last test run, by name (absent: it did not run).
    pub results: BTreeMap<String, Outcome>,
}

/// The redacted text prpd left in place of a withheld file, so that what was appended to the
/// file since (a log, the agents' calls) is kept when the original goes back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redacted {
    /// Its length in bytes.
    pub len: usize,
    /// Its content hash (`prpd_base::files::content_hash`).
    pub hash: String,
}

impl Redacted {
    pub fn of(text: &str) -> Redacted {
        Redacted {
            len: text.len(),
            hash: prpd_base::files::content_hash(text.as_bytes()),
        }
    }

    /// The original of `current` (the file as it is now), given the `stored` original of the
    /// part prpd redacted: that original followed by what was added since. `None` when the
    /// file no longer starts with what prpd left (someone rewrote it).
    pub fn original(&self, stored: &str, current: &str) -> Option<String> {
        let left = current.get(..self.len)?;
        (prpd_base::files::content_hash(left.as_bytes()) == self.hash)
            .then(|| format!("{stored}{}", &current[self.len..]))
    }
}

/// One held-out test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldTest {
    /// The name its runner prints.
    pub name: String,
    /// The requirement id its name carries, if any.
    pub requirement: Option<String>,
    /// Its file, relative to the repository.
    pub file: PathBuf,
}

/// One file held-out tests were cut from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldFile {
    pub path: PathBuf,
    /// The lines (0-based, end exclusive) cut from the original.
    pub blocks: Vec<Range<usize>>,
    /// The original's content hash (a git blob id, though no such object is kept): what the
    /// store's copy must hash to when prpd reads it back (an agent can write the store).
    pub full_blob: String,
    /// Where the original is in prpd's store, relative to the run directory.
    pub stored: PathBuf,
    /// The whole file is held out (the examiner's): it is absent while hidden.
    #[serde(default)]
    pub whole: bool,
}

impl HeldFile {
    /// The file as GREEN sees it, given its original: `None` when it is absent.
    pub fn visible(&self, original: &str) -> Option<String> {
        (!self.whole).then(|| blocks::cut(original, &self.blocks))
    }
}

/// A test that may be held out: one of RED's, failing at RED's end, found in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Every name the runner printed for it (a parametrized test has several).
    pub names: Vec<String>,
    pub requirement: Option<String>,
    pub file: PathBuf,
    pub block: Range<usize>,
}

/// A file's text as prpd's store keeps it: hex, so that no search of the folder for a line of
/// a test finds it. Obscured, not encrypted (see the README).
pub fn encode(text: &str) -> String {
    let mut hex = String::with_capacity(text.len() * 2 + 1);
    for byte in text.bytes() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex.push('\n');
    hex
}

/// The text [`encode`] kept; `None` when the store's file is damaged.
pub fn decode(hex: &str) -> Option<String> {
    let hex = hex.trim_end();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// How many of `count` tests for one id are held out at `share`.
pub fn held_count(count: usize, share: f64) -> usize {
    if count < 2 || share <= 0.0 {
        return 0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share of a handful of tests, floored: small, non-negative"
    )]
    let share_of = (count as f64 * share).floor() as usize;
    share_of.max(1).min(count - 1)
}

/// The candidates to hold out (indexes into `candidates`), by the rule in the module's docs.
pub fn choose(candidates: &[Candidate], share: f64) -> Vec<usize> {
    let mut by_id: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for (index, candidate) in candidates.iter().enumerate() {
        by_id
            .entry(candidate.requirement.as_deref())
            .or_default()
            .push(index);
    }
    let mut chosen = Vec::new();
    // A test whose name carries no requirement id may be its requirement's only one (the id
    // can be in a `describe` title the runner leaves out): those all stay visible.
    for indexes in by_id
        .iter()
        .filter(|(id, _)| id.is_some())
        .map(|(_, indexes)| indexes)
    {
        let mut ordered = indexes.clone();
        ordered.sort_by_key(|index| {
            let name = candidates[*index].names.first().map_or("", String::as_str);
            prpd_base::files::content_hash(name.as_bytes())
        });
        chosen.extend(ordered.into_iter().take(held_count(indexes.len(), share)));
    }
    chosen.sort_unstable();
    chosen
}

/// RED's tests that may be held out: `red_end` are the names of RED's last run with whether
/// each failed; those found by name in `files` (RED's test files' texts by path) make one candidate per
/// block (a parametrized test has several names), with the requirement `requirement_of` its
/// names carry. A block where one name did not fail is no candidate (cutting it would take a
/// test that does not test the feature). Also returns how many failing names were not found
/// once.
pub fn candidates<'a>(
    red_end: impl IntoIterator<Item = (&'a str, bool)>,
    files: &BTreeMap<PathBuf, String>,
    requirement_of: impl Fn(&[String]) -> Option<String>,
) -> (Vec<Candidate>, usize) {
    type Block = (PathBuf, usize, usize);
    let mut by_block: BTreeMap<Block, Vec<String>> = BTreeMap::new();
    let mut mixed: std::collections::BTreeSet<Block> = std::collections::BTreeSet::new();
    let mut not_found = 0;
    for (name, failed) in red_end {
        let leaf = blocks::leaf_name(name);
        let found: Vec<_> = files
            .iter()
            .filter_map(|(path, text)| blocks::find(text, leaf).map(|block| (path, block)))
            .collect();
        match (found.as_slice(), failed) {
            ([(path, block)], true) => by_block
                .entry(((*path).clone(), block.start, block.end))
                .or_default()
                .push(name.to_owned()),
            ([(path, block)], false) => {
                mixed.insert(((*path).clone(), block.start, block.end));
            }
            (_, true) => not_found += 1,
            (_, false) => {}
        }
    }
    let candidates = by_block
        .into_iter()
        .filter(|(block, _)| !mixed.contains(block))
        .map(|((file, start, end), names)| Candidate {
            requirement: requirement_of(&names),
            names,
            file,
            block: start..end,
        })
        .collect::<Vec<_>>();
    (without_overlaps(&candidates), not_found)
}

/// Candidates whose blocks overlap another's in the same file cannot be cut apart: both go.
pub fn without_overlaps(candidates: &[Candidate]) -> Vec<Candidate> {
    let overlaps = |a: &Candidate, b: &Candidate| {
        a.file == b.file && a.block.start < b.block.end && b.block.start < a.block.end
    };
    candidates
        .iter()
        .enumerate()
        .filter(|(index, candidate)| {
            !candidates
                .iter()
                .enumerate()
                .any(|(other, them)| other != *index && overlaps(candidate, them))
        })
        .map(|(_, candidate)| candidate.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_HOLDOUT;

    fn candidate(name: &str, id: Option<&str>, block: Range<usize>) -> Candidate {
        Candidate {
            names: vec![name.to_owned()],
            requirement: id.map(str::to_owned),
            file: PathBuf::from("test/calc.test.js"),
            block,
        }
    }

    #[test]
    fn about_a_third_and_never_the_last_visible_test_of_an_id() {
        assert_eq!(held_count(1, DEFAULT_HOLDOUT), 0);
        assert_eq!(held_count(2, DEFAULT_HOLDOUT), 1);
        assert_eq!(held_count(3, DEFAULT_HOLDOUT), 1);
        assert_eq!(held_count(6, DEFAULT_HOLDOUT), 2);
        assert_eq!(held_count(4, 0.9), 3);
        assert_eq!(held_count(5, 0.0), 0);
    }

    #[test]
    fn each_id_with_two_tests_or_more_gives_one_and_keeps_one() {
        let candidates = vec![
            candidate("AC-1: a", Some("AC-1"), 0..3),
            candidate("AC-1: b", Some("AC-1"), 4..7),
            candidate("AC-1: c", Some("AC-1"), 8..11),
            candidate("AC-2: only", Some("AC-2"), 12..15),
            candidate("AC-3: x", Some("AC-3"), 16..19),
            candidate("AC-3: y", Some("AC-3"), 20..23),
        ];
        let chosen = choose(&candidates, DEFAULT_HOLDOUT);
        let ids: Vec<_> = chosen
            .iter()
            .map(|index| candidates[*index].requirement.clone().unwrap_or_default())
            .collect();
        assert_eq!(ids, ["AC-1", "AC-3"], "{chosen:?}");
        assert_eq!(chosen, choose(&candidates, DEFAULT_HOLDOUT), "stable");
    }

    #[test]
    fn the_store_keeps_text_unreadable_to_a_search_and_gives_it_back() {
        let text = "assert.equal(multiply(6, -2), -12); // ünïcode\n";
        let kept = encode(text);
        assert!(!kept.contains("multiply"));
        assert_eq!(decode(&kept).as_deref(), Some(text));
        assert_eq!(decode("zz"), None);
    }

    #[test]
    fn a_withheld_file_goes_back_with_what_was_appended_since() {
        let redacted = Redacted::of("line 1\n[withheld]\n");
        let now = "line 1\n[withheld]\nappended\n";
        assert_eq!(
            redacted.original("line 1\nsecret\n", now).as_deref(),
            Some("line 1\nsecret\nappended\n")
        );
        assert_eq!(redacted.original("line 1\nsecret\n", "rewritten\n"), None);
    }

    #[test]
    fn a_block_with_a_name_that_passed_and_a_test_without_an_id_stay_visible() {
        let text = "def test_ac_1_sign(a):\n    assert 1\n\n\ndef test_ac_1_more():\n    assert 2\n\n\ndef test_other():\n    assert 3\n\n\ndef test_other_two():\n    assert 4\n";
        let files = BTreeMap::from([(PathBuf::from("tests/test_m.py"), text.to_owned())]);
        let red_end = [
            ("tests/test_m.py::test_ac_1_sign[1]", true),
            ("tests/test_m.py::test_ac_1_sign[2]", false),
            ("tests/test_m.py::test_ac_1_more", true),
            ("tests/test_m.py::test_other", true),
            ("tests/test_m.py::test_other_two", true),
        ];
        let (found, not_found) = candidates(red_end, &files, |names| {
            names[0].contains("ac_1").then(|| "AC-1".to_owned())
        });
        assert_eq!(not_found, 0);
        let names: Vec<&str> = found.iter().map(|c| c.names[0].as_str()).collect();
        assert_eq!(
            names,
            [
                "tests/test_m.py::test_ac_1_more",
                "tests/test_m.py::test_other",
                "tests/test_m.py::test_other_two"
            ]
        );
        // AC-1 has one candidate left (kept visible); the two without an id stay visible too.
        assert!(choose(&found, 0.9).is_empty());
    }

    #[test]
    fn overlapping_blocks_are_both_dropped() {
        let kept = without_overlaps(&[
            candidate("outer", None, 0..10),
            candidate("inner", None, 2..4),
            candidate("apart", None, 11..12),
        ]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].names, ["apart"]);
    }
}
