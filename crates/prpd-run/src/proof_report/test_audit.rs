//! The tests since the base, audited from evidence rather than an agent's account: which test
//! files the shipped commit added, deleted, renamed or changed against the base it ships on
//! (git's own rename detection),
//! which tests only one of the two measured runs named, how many each run skipped (expected
//! failures included: the runners report them as skips), and the assertions and skip or xfail
//! markers in the test files at the base and in the shipped tree. A weakened suite shows here
//! as a deleted file, a vanished name, more skips or fewer assertions.

use std::path::PathBuf;

use serde::Serialize;

use super::Runs;
use super::test_text::TextCounts;
use crate::proof::CasesRun;
use prpd_qa::metrics::Outcome;

/// How one test file differs between the base and the shipped tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    Added,
    Deleted,
    Renamed,
    Modified,
}

impl FileChange {
    /// The word the Markdown uses.
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Added => "added",
            FileChange::Deleted => "deleted",
            FileChange::Renamed => "renamed",
            FileChange::Modified => "modified",
        }
    }
}

/// One test file that differs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TestFileChange {
    pub change: FileChange,
    /// The path in the shipped tree (in the base for a deleted file).
    pub path: PathBuf,
    /// The path in the base, for a renamed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<PathBuf>,
}

/// A figure at the base (or without the feature) and in the shipped tree (or with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BeforeAfter {
    pub before: u32,
    pub after: u32,
}

/// The audit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TestAudit {
    /// Test files that differ between the base and the shipped tree, by change and path.
    pub files: Vec<TestFileChange>,
    /// Tests the run with the feature named and the run without it did not.
    pub tests_added: Vec<String>,
    /// Tests the run without the feature named and the run with it did not.
    pub tests_gone: Vec<String>,
    /// Tests skipped or expected to fail, without the feature (before) and with it (after).
    pub skipped: Option<BeforeAfter>,
    /// Assertion calls in the test files, at the base and in the shipped tree.
    pub assertions: BeforeAfter,
    /// Skip markers in the test files, at the base and in the shipped tree.
    pub skip_markers: BeforeAfter,
    /// Expected-failure markers in the test files, at the base and in the shipped tree.
    pub xfail_markers: BeforeAfter,
}

impl TestAudit {
    /// The audit of `files` (test files only), the test files' counts at the base and in the
    /// shipped tree, and the two measured runs when there are.
    pub fn new(
        mut files: Vec<TestFileChange>,
        at_base: TextCounts,
        at_ship: TextCounts,
        measured: Option<Runs<'_>>,
    ) -> TestAudit {
        files.sort();
        let between = |before: u32, after: u32| BeforeAfter { before, after };
        let (tests_added, tests_gone, skipped) = match measured {
            Some(runs) => (
                only_in(runs.with_feature, runs.without_feature),
                only_in(runs.without_feature, runs.with_feature),
                Some(between(
                    skips(runs.without_feature),
                    skips(runs.with_feature),
                )),
            ),
            None => (Vec::new(), Vec::new(), None),
        };
        TestAudit {
            files,
            tests_added,
            tests_gone,
            skipped,
            assertions: between(at_base.assertions, at_ship.assertions),
            skip_markers: between(at_base.skip_markers, at_ship.skip_markers),
            xfail_markers: between(at_base.xfail_markers, at_ship.xfail_markers),
        }
    }

    /// How many test files changed that way.
    pub fn count(&self, change: FileChange) -> usize {
        self.files
            .iter()
            .filter(|file| file.change == change)
            .count()
    }
}

/// The tests `run` named that `other` did not.
fn only_in(run: &CasesRun, other: &CasesRun) -> Vec<String> {
    run.cases
        .keys()
        .filter(|name| !other.cases.contains_key(*name))
        .cloned()
        .collect()
}

/// The run's skipped tests: its count when the runner printed one, else the named ones.
fn skips(run: &CasesRun) -> u32 {
    run.counts.map_or_else(
        || {
            let named = run
                .cases
                .values()
                .filter(|outcome| **outcome == Outcome::Skipped)
                .count();
            u32::try_from(named).unwrap_or(u32::MAX)
        },
        |[_, _, skipped]| skipped,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cases: &[(&str, Outcome)], counts: Option<[u32; 3]>) -> CasesRun {
        CasesRun {
            exit_code: Some(0),
            counts,
            cases: cases
                .iter()
                .map(|(name, outcome)| ((*name).to_owned(), *outcome))
                .collect(),
            did_not_build: None,
        }
    }

    #[test]
    fn tests_named_in_one_run_only_and_skips_are_told_from_the_runs() {
        let without = run(
            &[
                ("adds", Outcome::Passed),
                ("old name", Outcome::Passed),
                ("multiplies", Outcome::Failed),
            ],
            None,
        );
        let with = run(
            &[
                ("adds", Outcome::Skipped),
                ("new name", Outcome::Passed),
                ("multiplies", Outcome::Passed),
            ],
            Some([2, 0, 1]),
        );
        let audit = TestAudit::new(
            Vec::new(),
            TextCounts::default(),
            TextCounts::default(),
            Some(Runs {
                without_feature: &without,
                with_feature: &with,
            }),
        );
        assert_eq!(audit.tests_added, ["new name"]);
        assert_eq!(audit.tests_gone, ["old name"]);
        assert_eq!(
            audit.skipped,
            Some(BeforeAfter {
                before: 0,
                after: 1
            })
        );
    }

    #[test]
    fn files_are_listed_by_change_and_counted() {
        let change = |change, path: &str, from: Option<&str>| TestFileChange {
            change,
            path: PathBuf::from(path),
            from: from.map(PathBuf::from),
        };
        let audit = TestAudit::new(
            vec![
                change(FileChange::Modified, "test/calc.test.js", None),
                change(FileChange::Added, "test/multiply.test.js", None),
                change(
                    FileChange::Renamed,
                    "test/sum.test.js",
                    Some("test/add.test.js"),
                ),
            ],
            TextCounts {
                assertions: 3,
                skip_markers: 0,
                xfail_markers: 0,
            },
            TextCounts {
                assertions: 5,
                skip_markers: 1,
                xfail_markers: 0,
            },
            None,
        );
        assert_eq!(audit.files[0].path, PathBuf::from("test/multiply.test.js"));
        assert_eq!(audit.count(FileChange::Renamed), 1);
        assert_eq!(audit.count(FileChange::Deleted), 0);
        assert_eq!(
            audit.assertions,
            BeforeAfter {
                before: 3,
                after: 5
            }
        );
        assert_eq!(
            audit.skip_markers,
            BeforeAfter {
                before: 0,
                after: 1
            }
        );
        assert_eq!(audit.skipped, None, "no runs, no measured skips");
    }
}
