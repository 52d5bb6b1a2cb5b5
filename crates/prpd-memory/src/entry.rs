//! What prpd writes into memory: one [`Entry`] per thing a run (or a human) learned — a QA
//! REJECT with its blocking items, a breaker trip with its error signature, an escalation, an
//! APPROVE, an ADR or a CHANGELOG entry the DOCUMENT phase wrote, a lesson a human added.
//!
//! Entries are plain data. [`RunEntries`] holds what every entry of one run shares (its id, the
//! PRP's title, the detected stacks, the clock reading the caller passes in), so that the loop
//! records an event in one call: `memory.record(&run.reject(1, &blocking, &files))`.

use std::fmt;

use serde::{Deserialize, Serialize};

use prpd_base::phase::Phase;

/// What kind of event an entry remembers. The names are what the store and `--json` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// QA rejected the work: its blocking items and the files involved.
    Reject,
    /// A phase's circuit breaker opened: the phase and the error signature it kept seeing.
    BreakerTrip,
    /// The run stopped for a human: why, and what was tried.
    Escalation,
    /// QA approved the work: a summary of what passed.
    Approve,
    /// An architecture decision record the DOCUMENT phase (or a human) wrote.
    Decision,
    /// A CHANGELOG entry the DOCUMENT phase wrote.
    Changelog,
    /// A lesson a human recorded with `prpd memory add`.
    Lesson,
    /// Tests a run saw fail and pass on the same tree (flaky), named by id.
    FlakyTest,
}

impl EntryKind {
    /// Every kind, in the order `prpd memory stats` lists them.
    pub const ALL: [EntryKind; 8] = [
        EntryKind::Reject,
        EntryKind::BreakerTrip,
        EntryKind::Escalation,
        EntryKind::Approve,
        EntryKind::Decision,
        EntryKind::Changelog,
        EntryKind::Lesson,
        EntryKind::FlakyTest,
    ];

    /// The kind's name in the store, in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Reject => "reject",
            EntryKind::BreakerTrip => "breaker_trip",
            EntryKind::Escalation => "escalation",
            EntryKind::Approve => "approve",
            EntryKind::Decision => "decision",
            EntryKind::Changelog => "changelog",
            EntryKind::Lesson => "lesson",
            EntryKind::FlakyTest => "flaky_test",
        }
    }

    /// The kind named `name` ([`EntryKind::as_str`]).
    pub fn from_name(name: &str) -> Option<EntryKind> {
        EntryKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// One thing learned, as it is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub kind: EntryKind,
    /// The run it came from (`run-…`), or the id of a human's lesson (`lesson-…`).
    pub run_id: String,
    /// One line that says what happened.
    pub title: String,
    /// The details: blocking items, the error signature, the ADR's text.
    pub body: String,
    /// Paths relative to the repository root (`src/app.rs`), as git names them.
    pub files: Vec<String>,
    /// The stacks the run detected (`node`, `python`).
    pub stacks: Vec<String>,
    /// Unix seconds.
    pub created_at: u64,
}

/// What every entry of one run shares; its methods build the entries the loop records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEntries {
    pub run_id: String,
    /// The PRP's title.
    pub prp_title: String,
    /// The stacks the run detected.
    pub stacks: Vec<String>,
    /// Unix seconds, passed in by the caller (the pure parts of prpd read no clock).
    pub now: u64,
}

impl RunEntries {
    fn entry(&self, kind: EntryKind, title: String, body: String, files: &[String]) -> Entry {
        Entry {
            kind,
            run_id: self.run_id.clone(),
            title,
            body,
            files: normalize_files(files),
            stacks: self.stacks.clone(),
            created_at: self.now,
        }
    }

    /// QA's REJECT number `attempt`: each blocking item on a line (`F2: criteria_coverage is
    /// 50%, expected == 100%`), and the files the run changed.
    pub fn reject(&self, attempt: u32, blocking: &[String], files: &[String]) -> Entry {
        self.entry(
            EntryKind::Reject,
            format!("QA REJECT (attempt {attempt}) of {}", self.prp_title),
            lines(blocking),
            files,
        )
    }

    /// `phase`'s breaker opened on `reason` (the normalised error signature when there is one).
    pub fn breaker_trip(&self, phase: Phase, reason: &str, files: &[String]) -> Entry {
        self.entry(
            EntryKind::BreakerTrip,
            format!("{phase} breaker opened in {}", self.prp_title),
            reason.trim().to_owned(),
            files,
        )
    }

    /// The run escalated to a human because of `reason`.
    pub fn escalation(&self, reason: &str, files: &[String]) -> Entry {
        self.entry(
            EntryKind::Escalation,
            format!("Escalated: {}", self.prp_title),
            reason.trim().to_owned(),
            files,
        )
    }

    /// The run saw `tests` (one line each: the name and where) fail and pass on one tree.
    pub fn flaky_tests(&self, tests: &[String]) -> Entry {
        self.entry(
            EntryKind::FlakyTest,
            format!("Flaky tests in {}", self.prp_title),
            lines(tests),
            &[],
        )
    }

    /// QA approved the work; `summary` says what passed.
    pub fn approve(&self, summary: &str, files: &[String]) -> Entry {
        self.entry(
            EntryKind::Approve,
            format!("QA APPROVE of {}", self.prp_title),
            summary.trim().to_owned(),
            files,
        )
    }

    /// An ADR the DOCUMENT phase wrote: its title, its text and its file.
    pub fn decision(&self, title: &str, text: &str, file: &str) -> Entry {
        self.entry(
            EntryKind::Decision,
            title.trim().to_owned(),
            text.trim().to_owned(),
            &[file.to_owned()],
        )
    }

    /// A CHANGELOG entry the DOCUMENT phase wrote.
    pub fn changelog(&self, text: &str, file: &str) -> Entry {
        self.entry(
            EntryKind::Changelog,
            format!("CHANGELOG: {}", self.prp_title),
            text.trim().to_owned(),
            &[file.to_owned()],
        )
    }
}

/// A lesson (or decision) a human records with `prpd memory add`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanNote {
    pub kind: EntryKind,
    pub title: String,
    pub body: String,
    pub files: Vec<String>,
    pub stacks: Vec<String>,
}

impl HumanNote {
    /// The entry, with `id` as its source (`lesson-…`) and `now` in Unix seconds.
    pub fn into_entry(self, id: String, now: u64) -> Entry {
        Entry {
            kind: self.kind,
            run_id: id,
            title: self.title.trim().to_owned(),
            body: self.body.trim().to_owned(),
            files: normalize_files(&self.files),
            stacks: self.stacks,
            created_at: now,
        }
    }
}

/// `items` one to a line, each trimmed, empty ones left out.
fn lines(items: &[String]) -> String {
    items
        .iter()
        .map(|item| item.trim())
        .filter(|item| !item.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Paths as git names them: no leading `./`, `/` separators, no duplicates, no empty ones.
pub fn normalize_files(files: &[String]) -> Vec<String> {
    let mut normalized: Vec<String> = Vec::with_capacity(files.len());
    for file in files {
        let path = normalize_file(file);
        if !path.is_empty() && !normalized.contains(&path) {
            normalized.push(path);
        }
    }
    normalized
}

/// One path as git names it (`./src\\a.rs` → `src/a.rs`).
pub fn normalize_file(file: &str) -> String {
    let path = file.trim().replace('\\', "/");
    let mut rest = path.as_str();
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped;
    }
    rest.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunEntries {
        RunEntries {
            run_id: "run-1".to_owned(),
            prp_title: "Word statistics".to_owned(),
            stacks: vec!["node".to_owned()],
            now: 1_700_000_000,
        }
    }

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in EntryKind::ALL {
            assert_eq!(EntryKind::from_name(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).expect("json"),
                serde_json::Value::String(kind.as_str().to_owned())
            );
        }
        assert_eq!(EntryKind::from_name("bugs"), None);
    }

    #[test]
    fn a_reject_keeps_its_blocking_items_one_to_a_line_and_its_files() {
        let entry = run().reject(
            2,
            &[
                " F2: criteria_coverage is 50% ".to_owned(),
                String::new(),
                "C1: lint failed".to_owned(),
            ],
            &["./src/stats.js".to_owned(), "src/stats.js".to_owned()],
        );
        assert_eq!(
            entry,
            Entry {
                kind: EntryKind::Reject,
                run_id: "run-1".to_owned(),
                title: "QA REJECT (attempt 2) of Word statistics".to_owned(),
                body: "F2: criteria_coverage is 50%\nC1: lint failed".to_owned(),
                files: vec!["src/stats.js".to_owned()],
                stacks: vec!["node".to_owned()],
                created_at: 1_700_000_000,
            }
        );
    }

    #[test]
    fn each_event_gets_its_kind() {
        let run = run();
        assert_eq!(
            run.breaker_trip(Phase::Green, "TypeError x", &[]).kind,
            EntryKind::BreakerTrip
        );
        assert!(
            run.breaker_trip(Phase::Green, "TypeError x", &[])
                .title
                .starts_with("GREEN breaker")
        );
        assert_eq!(run.escalation("3 REJECTs", &[]).kind, EntryKind::Escalation);
        assert_eq!(run.approve("all checks pass", &[]).kind, EntryKind::Approve);
        let adr = run.decision("Use SQLite", "Because.", "docs/adr/0001.md");
        assert_eq!(
            (adr.kind, adr.files),
            (EntryKind::Decision, vec!["docs/adr/0001.md".to_owned()])
        );
        assert_eq!(
            run.changelog("- Added stats", "CHANGELOG.md").kind,
            EntryKind::Changelog
        );
    }

    #[test]
    fn paths_are_named_as_git_names_them() {
        assert_eq!(normalize_file(" ././src\\a.rs "), "src/a.rs");
        assert_eq!(
            normalize_files(&[" ".to_owned(), "a".to_owned(), "./a".to_owned()]),
            vec!["a".to_owned()]
        );
    }
}
