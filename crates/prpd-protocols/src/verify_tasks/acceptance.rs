//! The `[VERIFY] AC checklist` task: each acceptance criterion (`AC-*`) judged from what the
//! project's own tests say, never from a reading of the code.
//!
//! A criterion PASSES when a test file names its id and the tests named after it (`test("AC-1:
//! …")`, `fn ac_1_…`) all passed in a run of the test command. It FAILS when such a test
//! failed, when the tests named after it were all skipped, when no test is named after it (the
//! evidence says whether a test file mentions it), or when the test run could not be read (no
//! test command, a runner that names no test, a run that did not finish). It is SKIPPED only
//! when the criterion itself says `(manual)`: a human checks it, and the table says so.
//! The judging is pure ([`judge`]); [`gather`] finds the test files that name each id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::result::{AcceptanceRow, RowStatus};
use prpd_prp::Acceptance;
use prpd_qa::method::{AcceptanceId, test_files_naming};
use prpd_qa::metrics::{Outcome, TestCases};

/// What the test command's run can say about the criteria.
#[derive(Debug, Clone, Copy)]
pub enum TestEvidence<'a> {
    /// There is no usable run; the text says why.
    Unavailable(&'a str),
    /// The command ran to its end and named these tests.
    Ran {
        command: &'a str,
        cases: &'a TestCases,
    },
}

/// Whether a criterion is left to a human: its text says `(manual)` or `[manual]`.
pub fn is_manual(criterion: &Acceptance) -> bool {
    let text = criterion.text.to_lowercase();
    text.contains("(manual)") || text.contains("[manual]")
}

/// For each criterion that is not manual, the test files that name its id.
pub fn gather(repo: &Path, criteria: &[Acceptance]) -> BTreeMap<String, Vec<PathBuf>> {
    let ids: Vec<AcceptanceId> = criteria
        .iter()
        .filter(|criterion| !is_manual(criterion))
        .map(|criterion| AcceptanceId::new(&criterion.id))
        .collect();
    test_files_naming(repo, &ids)
}

/// Each criterion's row, from the test run and the files that name each id (pure).
pub fn judge(
    criteria: &[Acceptance],
    evidence: TestEvidence<'_>,
    files: &BTreeMap<String, Vec<PathBuf>>,
) -> Vec<AcceptanceRow> {
    criteria
        .iter()
        .map(|criterion| {
            let (status, evidence) = if is_manual(criterion) {
                (
                    RowStatus::Skip,
                    "marked manual: a human checks it; prpd does not".to_owned(),
                )
            } else {
                let files = files.get(&criterion.id).map_or(&[][..], Vec::as_slice);
                judge_one(&criterion.id, evidence, files)
            };
            AcceptanceRow {
                id: criterion.id.clone(),
                description: criterion.text.clone(),
                status,
                evidence,
            }
        })
        .collect()
}

fn judge_one(id: &str, evidence: TestEvidence<'_>, files: &[PathBuf]) -> (RowStatus, String) {
    let (command, cases) = match evidence {
        TestEvidence::Unavailable(why) => return (RowStatus::Fail, why.to_owned()),
        TestEvidence::Ran { command, cases } => (command, cases),
    };
    let file_list = files
        .iter()
        .map(|file| file.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let in_files = if files.is_empty() {
        String::new()
    } else {
        format!(" ({file_list})")
    };
    let pattern = AcceptanceId::new(id);
    let named: Vec<(&str, Outcome)> = cases
        .iter()
        .filter(|(name, _)| pattern.is_named_in(name))
        .collect();
    let of = |outcome| -> Vec<&str> {
        named
            .iter()
            .filter(|(_, ended)| *ended == outcome)
            .map(|(name, _)| *name)
            .collect()
    };
    let (failed, passed, skipped) = (
        of(Outcome::Failed),
        of(Outcome::Passed),
        of(Outcome::Skipped),
    );
    if !failed.is_empty() {
        return (
            RowStatus::Fail,
            format!("`{command}`: {} failed{in_files}", listed(&failed)),
        );
    }
    if named.is_empty() {
        let why = match (files.is_empty(), cases.is_empty()) {
            (true, _) => format!("no test names {id}: no test file mentions it"),
            (false, true) => format!(
                "`{command}` named no test (its output has no per-test lines prpd reads), so \
                 no test can be traced to {id}{in_files}"
            ),
            (false, false) => format!(
                "no test of the `{command}` run is named after {id}, though {file_list} \
                 mention it: name the test after the criterion"
            ),
        };
        return (RowStatus::Fail, why);
    }
    if files.is_empty() {
        return (
            RowStatus::Fail,
            format!("tests named after {id} ran, but no test file names {id}"),
        );
    }
    if passed.is_empty() {
        return (
            RowStatus::Fail,
            format!(
                "`{command}`: {} skipped, none passed{in_files}",
                listed(&skipped)
            ),
        );
    }
    let also_skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!("; {} skipped", listed(&skipped))
    };
    (
        RowStatus::Pass,
        format!(
            "`{command}`: {} passed{also_skipped}{in_files}",
            listed(&passed)
        ),
    )
}

/// `test "a"` or `2 tests ("a", "b")`, at most three names shown.
fn listed(names: &[&str]) -> String {
    const SHOWN: usize = 3;
    let quoted: Vec<String> = names
        .iter()
        .take(SHOWN)
        .map(|name| format!("\"{name}\""))
        .collect();
    let more = names.len().saturating_sub(SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    if names.len() == 1 {
        format!("test {}", quoted.join(", "))
    } else {
        format!("{} tests ({}{more})", names.len(), quoted.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn criterion(id: &str, text: &str) -> Acceptance {
        Acceptance {
            id: id.to_owned(),
            text: text.to_owned(),
            line: 1,
        }
    }

    fn row_of(rows: &[AcceptanceRow], id: &str) -> (RowStatus, String) {
        let row = rows.iter().find(|row| row.id == id).expect("a row");
        (row.status, row.evidence.clone())
    }

    #[test]
    fn each_criterion_is_judged_by_the_tests_named_after_it() {
        let criteria = [
            criterion("AC-1", "counts words"),
            criterion("AC-2", "averages word length"),
            criterion("AC-3", "handles unicode"),
            criterion("AC-4", "mentioned in a file, no test named"),
            criterion("AC-5", "only skipped tests"),
            criterion("AC-6", "looked at by a human (manual)"),
            criterion("AC-7", "named in output only"),
        ];
        let mut cases = TestCases::default();
        cases.record("AC-1: counts the words", Outcome::Passed);
        cases.record("AC-1: counts nothing in an empty text", Outcome::Passed);
        cases.record("AC-10: another criterion", Outcome::Failed);
        cases.record("AC-2: rounds to two decimals", Outcome::Passed);
        cases.record("AC-2: zero for no words", Outcome::Failed);
        cases.record("AC-5 pending", Outcome::Skipped);
        cases.record("ac_7_generated", Outcome::Passed);
        let files: BTreeMap<String, Vec<PathBuf>> = [
            ("AC-1", vec!["test/a.test.js"]),
            ("AC-2", vec!["test/b.test.js"]),
            ("AC-3", vec![]),
            ("AC-4", vec!["test/c.test.js", "test/d.test.js"]),
            ("AC-5", vec!["test/e.test.js"]),
            ("AC-7", vec![]),
        ]
        .into_iter()
        .map(|(id, files)| {
            (
                id.to_owned(),
                files.into_iter().map(PathBuf::from).collect(),
            )
        })
        .collect();
        let rows = judge(
            &criteria,
            TestEvidence::Ran {
                command: "npm test",
                cases: &cases,
            },
            &files,
        );
        let expected = [
            (
                "AC-1",
                RowStatus::Pass,
                "`npm test`: 2 tests (\"AC-1: counts nothing in an empty text\", \"AC-1: counts \
                 the words\") passed (test/a.test.js)",
            ),
            (
                "AC-2",
                RowStatus::Fail,
                "`npm test`: test \"AC-2: zero for no words\" failed (test/b.test.js)",
            ),
            (
                "AC-3",
                RowStatus::Fail,
                "no test names AC-3: no test file mentions it",
            ),
            (
                "AC-4",
                RowStatus::Fail,
                "no test of the `npm test` run is named after AC-4, though test/c.test.js, \
                 test/d.test.js mention it: name the test after the criterion",
            ),
            (
                "AC-5",
                RowStatus::Fail,
                "`npm test`: test \"AC-5 pending\" skipped, none passed (test/e.test.js)",
            ),
            (
                "AC-6",
                RowStatus::Skip,
                "marked manual: a human checks it; prpd does not",
            ),
            (
                "AC-7",
                RowStatus::Fail,
                "tests named after AC-7 ran, but no test file names AC-7",
            ),
        ];
        for (id, status, evidence) in expected {
            assert_eq!(row_of(&rows, id), (status, evidence.to_owned()), "{id}");
        }
    }

    #[test]
    fn without_a_usable_test_run_no_criterion_passes() {
        let criteria = [
            criterion("AC-1", "counts words"),
            criterion("AC-2", "checked by hand [manual]"),
        ];
        let files = BTreeMap::from([("AC-1".to_owned(), vec![PathBuf::from("test/a.test.js")])]);
        let rows = judge(
            &criteria,
            TestEvidence::Unavailable("no test command found"),
            &files,
        );
        assert_eq!(
            row_of(&rows, "AC-1"),
            (RowStatus::Fail, "no test command found".to_owned())
        );
        assert_eq!(row_of(&rows, "AC-2").0, RowStatus::Skip);
        let none = TestCases::default();
        let rows = judge(
            &criteria[..1],
            TestEvidence::Ran {
                command: "make test",
                cases: &none,
            },
            &files,
        );
        assert_eq!(
            row_of(&rows, "AC-1"),
            (
                RowStatus::Fail,
                "`make test` named no test (its output has no per-test lines prpd reads), so \
                 no test can be traced to AC-1 (test/a.test.js)"
                    .to_owned()
            )
        );
    }
}
