//! Flaky tests: tests that fail and pass on the same tree. Without this module a flaky test
//! looks exactly like a real failure — it costs an iteration, counts as the same error again,
//! and its lucky pass can look like fail-to-pass proof.
//!
//! Theory of operation. When a test run fails in GREEN, REFACTOR or QA, or whenever the tree
//! without the feature is measured, the driver runs the test command once more on the same
//! tree — only when the tree id is unchanged, so an agent's changed tree is never given a
//! second chance — and [`flipped`] names the tests whose outcome differs between the two runs.
//! Those are flaky; the [`FlakyLog`] in the run record keeps where each was first seen, and the
//! repository's [`quarantine`] list (`.prpd/flaky.toml`) keeps them across runs.
//!
//! What a flaky test may not do, each rule closing a way it would mislead:
//! - send honest work round the loop: a failed run whose second run on the same tree passes
//!   is judged by the second run, and the flipped tests are named as warnings;
//! - count as the same error: [`FlakyLog::known`] tests are left out of the error signature;
//! - stand in as fail-to-pass proof: the proof leaves known flaky tests out, and says it could
//!   not decide when that leaves none of RED's tests (`proof.rs`);
//! - block QA when quarantined: a test run whose only failures are quarantined or seen flipping
//!   ([`only_known_failures`]) is a warning, naming them, never a pass by absence.
//!
//! Everything here is pure: the driver passes the day in.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::proof::CasesRun;
use prpd_base::phase::Phase;
use prpd_qa::metrics::Outcome;

pub mod quarantine;

pub use quarantine::{Day, Quarantine};

/// What a run knows about flaky tests, kept in its record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlakyLog {
    /// The quarantine list as the run read it when it started.
    pub quarantine: Quarantine,
    /// The tests seen flipping in this run, by name.
    pub seen: BTreeMap<String, Sighting>,
    /// How each quarantined test ended in QA's last test run (the run that was approved or
    /// rejected), for the list's pass counts.
    pub at_qa: BTreeMap<String, Outcome>,
}

/// Where a test was first seen flipping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sighting {
    /// The tree id both runs ran on.
    pub tree: String,
    /// The phase that measured it (`None`: the tree without the feature).
    pub phase: Option<Phase>,
}

impl Sighting {
    /// Where it was measured: `in GREEN`, or `without the feature`.
    pub fn measured(&self) -> String {
        self.phase.map_or_else(
            || "without the feature".to_owned(),
            |phase| format!("in {phase}"),
        )
    }
}

impl FlakyLog {
    /// A run's log, starting from the repository's quarantine list.
    pub fn new(quarantine: Quarantine) -> FlakyLog {
        FlakyLog {
            quarantine,
            ..FlakyLog::default()
        }
    }

    /// Notes `names` as seen flipping on `tree`; returns those not seen before in this run.
    pub fn note(
        &mut self,
        names: &BTreeSet<String>,
        tree: &str,
        phase: Option<Phase>,
    ) -> Vec<String> {
        let mut new = Vec::new();
        for name in names {
            if !self.seen.contains_key(name) {
                self.seen.insert(
                    name.clone(),
                    Sighting {
                        tree: tree.to_owned(),
                        phase,
                    },
                );
                new.push(name.clone());
            }
        }
        new
    }

    /// Every test known to be flaky on `today`: seen flipping in this run, or quarantined.
    pub fn known(&self, today: Day) -> BTreeSet<String> {
        self.seen
            .keys()
            .map(String::as_str)
            .chain(self.quarantine.active(today))
            .map(str::to_owned)
            .collect()
    }

    /// The tests seen flipping on a tree with the feature (in GREEN, REFACTOR or QA).
    pub fn flipped_with_feature(&self) -> BTreeSet<String> {
        self.seen
            .iter()
            .filter(|(_, sighting)| sighting.phase.is_some())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Keeps how each quarantined test ended in QA's test run `run`.
    pub fn note_qa_run(&mut self, run: &CasesRun) {
        self.at_qa = self
            .quarantine
            .tests
            .iter()
            .filter_map(|entry| Some((entry.name.clone(), *run.cases.get(&entry.name)?)))
            .collect();
    }

    /// The quarantine list `on_disk` (the file as it is when the run ends: a human's edits
    /// since the run started win) updated with what this run saw on `today`: a test seen
    /// flipping is added (or its pass count reset), a quarantined test that failed in QA has its
    /// count reset, one that passed there counts one more run; an entry whose count reached
    /// `passes_to_leave`, or whose day of expiry is past, leaves. New entries expire `days`
    /// after today.
    pub fn updated(
        &self,
        on_disk: &Quarantine,
        today: Day,
        passes_to_leave: u32,
        days: u32,
    ) -> Quarantine {
        let mut tests = Vec::new();
        for entry in &on_disk.tests {
            let mut entry = entry.clone();
            if self.seen.contains_key(&entry.name) {
                entry.passes = 0;
                entry.expires = entry.expires.max(today.plus(days));
            } else {
                match self.at_qa.get(&entry.name) {
                    Some(Outcome::Passed) => entry.passes += 1,
                    Some(Outcome::Failed) => entry.passes = 0,
                    Some(Outcome::Skipped) | None => {}
                }
            }
            if entry.passes < passes_to_leave && entry.expires >= today {
                tests.push(entry);
            }
        }
        for name in self.seen.keys() {
            if !tests.iter().any(|entry| entry.name == *name) {
                tests.push(quarantine::Entry {
                    name: name.clone(),
                    first_seen: today,
                    expires: today.plus(days),
                    passes: 0,
                });
            }
        }
        Quarantine { tests }
    }
}

/// The tests that failed in one of two runs on the same tree and passed in the other.
pub fn flipped(first: &CasesRun, second: &CasesRun) -> BTreeSet<String> {
    first
        .cases
        .iter()
        .filter(|(name, before)| {
            matches!(
                (**before, second.cases.get(*name)),
                (Outcome::Failed, Some(Outcome::Passed)) | (Outcome::Passed, Some(Outcome::Failed))
            )
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The failing tests of `run` when every failure is a `known` flaky test, or `None` when the
/// run shows anything else: it was killed, it failed without naming every failing test (its
/// count of failures is higher than the names), it named no failing test, or it passed no test.
/// A run this returns names for failed only on tests known to flip: QA reports it as a warning.
pub fn only_known_failures(run: &CasesRun, known: &BTreeSet<String>) -> Option<Vec<String>> {
    run.exit_code?;
    let failing: Vec<String> = run
        .cases
        .iter()
        .filter(|(_, outcome)| **outcome == Outcome::Failed)
        .map(|(name, _)| name.clone())
        .collect();
    let passed = run
        .cases
        .values()
        .filter(|outcome| **outcome == Outcome::Passed)
        .count();
    let counted_failures = run.counts.map(|[_, failed, _]| failed);
    let all_named =
        counted_failures.is_none_or(|failed| usize::try_from(failed).ok() == Some(failing.len()));
    (!failing.is_empty()
        && passed > 0
        && all_named
        && failing.iter().all(|name| known.contains(name)))
    .then_some(failing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::tests::run;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn a_test_that_failed_once_and_passed_once_on_one_tree_flipped() {
        let first = run(
            1,
            &[
                ("clock", Outcome::Failed),
                ("add", Outcome::Passed),
                ("broken", Outcome::Failed),
                ("later", Outcome::Passed),
                ("skipped", Outcome::Skipped),
            ],
        );
        let second = run(
            1,
            &[
                ("clock", Outcome::Passed),
                ("add", Outcome::Passed),
                ("broken", Outcome::Failed),
                ("later", Outcome::Failed),
                ("skipped", Outcome::Passed),
            ],
        );
        assert_eq!(flipped(&first, &second), names(&["clock", "later"]));
        assert!(
            flipped(&first, &first).is_empty(),
            "the same run flips nothing"
        );
    }

    #[test]
    fn only_named_failures_of_known_flaky_tests_are_forgiven() {
        let known = names(&["clock"]);
        let cases: [(&str, CasesRun, Option<Vec<String>>); 6] = [
            (
                "only the flaky test failed",
                run(1, &[("clock", Outcome::Failed), ("add", Outcome::Passed)]),
                Some(vec!["clock".to_owned()]),
            ),
            (
                "another test failed too",
                run(
                    1,
                    &[
                        ("clock", Outcome::Failed),
                        ("add", Outcome::Failed),
                        ("sub", Outcome::Passed),
                    ],
                ),
                None,
            ),
            (
                "more failures counted than named",
                CasesRun {
                    counts: Some([1, 2, 0]),
                    ..run(1, &[("clock", Outcome::Failed), ("add", Outcome::Passed)])
                },
                None,
            ),
            (
                "killed",
                CasesRun {
                    exit_code: None,
                    ..run(1, &[("clock", Outcome::Failed), ("add", Outcome::Passed)])
                },
                None,
            ),
            (
                "nothing passed: a run of only a flaky test proves nothing",
                run(1, &[("clock", Outcome::Failed)]),
                None,
            ),
            (
                "a failed run that names no failing test",
                run(1, &[("add", Outcome::Passed)]),
                None,
            ),
        ];
        for (name, run, expected) in cases {
            assert_eq!(only_known_failures(&run, &known), expected, "{name}");
        }
    }

    #[test]
    fn the_log_knows_what_it_saw_and_what_is_quarantined_today() {
        let quarantine = Quarantine::parse(
            std::path::Path::new(quarantine::PATH),
            "[[test]]\nname = \"old\"\nfirst_seen = \"2025-01-01\"\nexpires = \"2025-01-31\"\n\n\
             [[test]]\nname = \"listed\"\nfirst_seen = \"2025-03-01\"\nexpires = \"2025-03-31\"\n",
        )
        .expect("parses");
        let mut log = FlakyLog::new(quarantine);
        assert_eq!(
            log.note(&names(&["clock"]), "t1", Some(Phase::Green)),
            ["clock"]
        );
        assert!(
            log.note(&names(&["clock"]), "t2", Some(Phase::Qa))
                .is_empty(),
            "seen once is enough"
        );
        assert_eq!(log.seen["clock"].tree, "t1");
        let today = Day::parse("2025-03-10").expect("date");
        assert_eq!(log.known(today), names(&["clock", "listed"]));
    }

    #[test]
    fn the_list_gains_new_flaky_tests_and_loses_consistent_and_expired_ones() {
        let day = |text| Day::parse(text).expect("date");
        let entry = |name: &str, passes| quarantine::Entry {
            name: name.to_owned(),
            first_seen: day("2025-03-01"),
            expires: day("2025-03-31"),
            passes,
        };
        let on_disk = Quarantine {
            tests: vec![
                entry("steady", 4),
                entry("still-flaky", 3),
                entry("failed-in-qa", 2),
                entry("not-run", 1),
                quarantine::Entry {
                    expires: day("2025-03-05"),
                    ..entry("expired", 0)
                },
            ],
        };
        let mut log = FlakyLog::new(on_disk.clone());
        log.note(&names(&["still-flaky", "clock"]), "t", Some(Phase::Green));
        log.at_qa = [
            ("steady".to_owned(), Outcome::Passed),
            ("still-flaky".to_owned(), Outcome::Passed),
            ("failed-in-qa".to_owned(), Outcome::Failed),
        ]
        .into_iter()
        .collect();
        let today = day("2025-03-10");
        let updated = log.updated(&on_disk, today, 5, 30);
        let summary: Vec<(String, u32, String)> = updated
            .tests
            .iter()
            .map(|entry| (entry.name.clone(), entry.passes, entry.expires.to_string()))
            .collect();
        assert_eq!(
            summary,
            [
                ("still-flaky".to_owned(), 0, "2025-04-09".to_owned()),
                ("failed-in-qa".to_owned(), 0, "2025-03-31".to_owned()),
                ("not-run".to_owned(), 1, "2025-03-31".to_owned()),
                ("clock".to_owned(), 0, "2025-04-09".to_owned()),
            ]
        );
        assert_eq!(updated.tests[3].first_seen, today);
    }
}
