//! The proof that the tests test the feature (SWE-bench's `FAIL_TO_PASS` / `PASS_TO_PASS`): the
//! test command is run on the run's base commit with the frozen test harness laid over it —
//! the tree without the feature — and its per-test results are compared, by name, with a run
//! on the tree being judged.
//!
//! The rules, each closing a shortcut: the tests must fail without the feature (else they do
//! not test it); every test that failed there must have *passed* at the end — a skipped test,
//! an expected failure or a padding test cannot stand in for it; and no test that passed
//! without the feature may fail or be skipped at the end. Where a runner names no tests, the
//! same rules are judged by counts, and the verdict says so. This module only judges; the
//! driver builds the tree and runs the command (`run/driver/proof.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::qa::metrics::{MetricValue, Metrics, Outcome};
use crate::run::cache::CacheKey;

/// One run of the test command as the proof sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasesRun {
    /// The exit code; `None` when the command was killed or timed out.
    pub exit_code: Option<i32>,
    /// Tests passed, failed and skipped, when the output had a count prpd recognises.
    pub counts: Option<[u32; 3]>,
    /// The tests the output named, with how each ended.
    pub cases: BTreeMap<String, Outcome>,
}

impl CasesRun {
    /// The run of a command that exited with `exit_code` and printed what `metrics` holds.
    pub fn from_metrics(exit_code: Option<i32>, metrics: &Metrics) -> CasesRun {
        let figure = |name| match metrics.get(name) {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "test counts are sums of u32 counts"
            )]
            Some(MetricValue::Number(value)) => Some(value.max(0.0) as u32),
            Some(MetricValue::Bool(_)) | None => None,
        };
        let counts = figure("tests_total").map(|_| {
            [
                figure("tests_passed").unwrap_or(0),
                figure("tests_failed").unwrap_or(0),
                figure("tests_skipped").unwrap_or(0),
            ]
        });
        CasesRun {
            exit_code,
            counts,
            cases: metrics
                .test_cases()
                .iter()
                .map(|(name, outcome)| (name.to_owned(), outcome))
                .collect(),
        }
    }

    /// The same run with `root/` taken out of the test names: runners name a file that failed
    /// to load by its absolute path, and the two runs compared live in different directories.
    #[must_use]
    pub fn relative_to(self, root: &std::path::Path) -> CasesRun {
        let prefix = format!("{}/", root.display());
        CasesRun {
            cases: self
                .cases
                .into_iter()
                .map(|(name, outcome)| (name.replace(&prefix, ""), outcome))
                .collect(),
            ..self
        }
    }

    fn passed(&self) -> u32 {
        self.counts.map_or(0, |[passed, _, _]| passed)
    }

    fn failed(&self) -> u32 {
        self.counts.map_or(0, |[_, failed, _]| failed)
    }

    fn skipped(&self) -> u32 {
        self.counts.map_or(0, |[_, _, skipped]| skipped)
    }

    /// The run failed: a non-zero exit, or a failing test counted.
    fn failed_overall(&self) -> bool {
        self.exit_code != Some(0) || self.failed() > 0
    }

    fn named(&self, outcome: Outcome) -> impl Iterator<Item = &str> {
        self.cases
            .iter()
            .filter(move |(_, ended)| **ended == outcome)
            .map(|(name, _)| name.as_str())
    }
}

/// The test command's run on the tree without the feature, kept in the run record and reused
/// while it measured the same thing: the same tree (it changes only when the harness is frozen
/// again), the same command and the same measurement settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WithoutFeature {
    /// What it measured; the tree is the base with the frozen harness laid over it.
    pub key: CacheKey,
    /// What the run showed.
    pub run: CasesRun,
    /// Its log.
    pub log: std::path::PathBuf,
}

/// The proof's verdict: what it found, and what is wrong (empty when the proof holds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// Tests that fail without the feature and pass with it.
    pub fail_to_pass: Vec<String>,
    /// Tests that passed without the feature and still pass (a count when the runner names
    /// none).
    pub pass_to_pass: usize,
    /// Why the proof does not hold, one sentence each.
    pub problems: Vec<String>,
    /// True when the runner named no test and the proof was judged by counts.
    pub by_counts: bool,
}

impl Proof {
    /// The proof holds.
    pub fn holds(&self) -> bool {
        self.problems.is_empty()
    }

    /// One line for a report or a gate's feedback.
    pub fn summary(&self) -> String {
        let how = if self.by_counts {
            " (judged by counts: the test output names no tests)"
        } else {
            ""
        };
        if self.holds() {
            format!(
                "{} test(s) fail without the feature and pass with it{}; {} test(s) that passed before still pass{how}",
                self.fail_to_pass.len(),
                list(&self.fail_to_pass),
                self.pass_to_pass
            )
        } else {
            format!("{}{how}", self.problems.join("; "))
        }
    }
}

fn list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    if names.is_empty() {
        return String::new();
    }
    let mut shown: Vec<&str> = names.iter().take(SHOWN).map(String::as_str).collect();
    if names.len() > SHOWN {
        shown.push("…");
    }
    format!(" ({})", shown.join(", "))
}

/// Judges the run `without` the feature (base commit plus the frozen harness) against the run
/// `with` it (the tree being judged).
pub fn judge(without: &CasesRun, with: &CasesRun) -> Proof {
    let mut proof = Proof::default();
    if !without.failed_overall() {
        proof.problems.push(
            "the tests pass without the feature (on the run's base commit with the frozen tests), so they do not test it"
                .to_owned(),
        );
        return proof;
    }
    if with.failed_overall() {
        proof
            .problems
            .push("the tests do not pass with the feature".to_owned());
        return proof;
    }
    let failed_without: Vec<&str> = without.named(Outcome::Failed).collect();
    let skipped_before = |name: &str| without.cases.get(name) == Some(&Outcome::Skipped);
    let newly_skipped: Vec<&str> = with
        .named(Outcome::Skipped)
        .filter(|name| !skipped_before(name))
        .collect();
    proof.by_counts = failed_without.is_empty() || with.cases.is_empty();
    if proof.by_counts {
        judge_by_counts(without, with, &mut proof);
        return proof;
    }
    let mut absent = Vec::new();
    for name in failed_without {
        match with.cases.get(name) {
            Some(Outcome::Passed) => proof.fail_to_pass.push(name.to_owned()),
            Some(outcome) => proof.problems.push(format!(
                "`{name}` fails without the feature but is {} with it; it must pass",
                outcome.as_str()
            )),
            None => absent.push(name),
        }
    }
    // A test that failed without the feature may be named differently with it only when it
    // failed before it could run (a module that did not import yet); then every test at the
    // end must have passed, with nothing newly skipped.
    if !absent.is_empty() {
        if with.skipped() > without.skipped() || !newly_skipped.is_empty() {
            proof.problems.push(format!(
                "{} test(s) that fail without the feature are not in the final run ({}) while tests are skipped there: every test must run and pass",
                absent.len(),
                absent.join(", ")
            ));
        } else {
            proof.fail_to_pass.extend(
                absent
                    .iter()
                    .map(|name| format!("{name} (failed before its tests could run)")),
            );
        }
    }
    for name in without.named(Outcome::Passed) {
        match with.cases.get(name) {
            Some(Outcome::Passed) => proof.pass_to_pass += 1,
            Some(outcome) => proof.problems.push(format!(
                "`{name}` passed without the feature but is {} with it",
                outcome.as_str()
            )),
            None => {}
        }
    }
    for name in newly_skipped {
        if !without.cases.contains_key(name) {
            proof.problems.push(format!(
                "`{name}` is skipped in the final run: a skipped test proves nothing"
            ));
        }
    }
    if proof.fail_to_pass.is_empty() && proof.problems.is_empty() {
        proof
            .problems
            .push("no test fails without the feature and passes with it".to_owned());
    }
    proof
}

/// The same rules by counts, for runners that print no test names: every test that ran
/// without the feature passes with it, and no more tests are skipped.
fn judge_by_counts(without: &CasesRun, with: &CasesRun, proof: &mut Proof) {
    if with.counts.is_none() {
        proof
            .problems
            .push("the final test output has no count prpd recognises".to_owned());
        return;
    }
    if with.skipped() > without.skipped() {
        proof.problems.push(format!(
            "{} test(s) skipped with the feature, {} without: a skipped test proves nothing",
            with.skipped(),
            without.skipped()
        ));
    }
    let needed = without.passed() + without.failed();
    if with.passed() < needed {
        proof.problems.push(format!(
            "{} test(s) pass with the feature, but {needed} ran without it: each must pass",
            with.passed()
        ));
    }
    proof.pass_to_pass = usize::try_from(without.passed()).unwrap_or(usize::MAX);
    if proof.problems.is_empty() {
        proof.fail_to_pass = vec![format!("{} test(s)", without.failed().max(1))];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit_code: i32, cases: &[(&str, Outcome)]) -> CasesRun {
        let count = |outcome| {
            u32::try_from(cases.iter().filter(|(_, ended)| *ended == outcome).count())
                .unwrap_or(u32::MAX)
        };
        CasesRun {
            exit_code: Some(exit_code),
            counts: Some([
                count(Outcome::Passed),
                count(Outcome::Failed),
                count(Outcome::Skipped),
            ]),
            cases: cases
                .iter()
                .map(|(name, outcome)| ((*name).to_owned(), *outcome))
                .collect(),
        }
    }

    use Outcome::{Failed, Passed, Skipped};

    #[test]
    fn honest_tests_fail_without_the_feature_and_pass_with_it() {
        let without = run(1, &[("add", Passed), ("mul", Failed)]);
        let with = run(0, &[("add", Passed), ("mul", Passed)]);
        let proof = judge(&without, &with);
        assert!(proof.holds(), "{proof:?}");
        assert_eq!(proof.fail_to_pass, ["mul"]);
        assert_eq!(proof.pass_to_pass, 1);
        assert!(
            proof
                .summary()
                .contains("1 test(s) fail without the feature")
        );
    }

    #[test]
    fn tests_that_pass_without_the_feature_prove_nothing() {
        let without = run(0, &[("add", Passed), ("mul", Passed)]);
        let proof = judge(&without, &without);
        assert!(!proof.holds());
        assert!(proof.summary().contains("do not test it"));
    }

    #[test]
    fn a_skipped_or_expected_failure_test_is_not_a_pass_even_with_padding() {
        let without = run(1, &[("add", Passed), ("mul", Failed)]);
        let with = run(0, &[("add", Passed), ("mul", Skipped), ("padding", Passed)]);
        let proof = judge(&without, &with);
        assert!(!proof.holds());
        assert!(
            proof
                .summary()
                .contains("`mul` fails without the feature but is skipped")
        );
    }

    #[test]
    fn a_test_that_passed_before_must_not_break() {
        let without = run(1, &[("add", Passed), ("mul", Failed)]);
        let with = run(0, &[("add", Skipped), ("mul", Passed)]);
        let proof = judge(&without, &with);
        assert!(!proof.holds());
        assert!(
            proof
                .summary()
                .contains("`add` passed without the feature but is skipped")
        );
    }

    #[test]
    fn an_import_failure_renamed_at_the_end_is_accepted_only_when_everything_passes() {
        let without = run(1, &[("add", Passed), ("loader.test_calc", Failed)]);
        let clean = run(0, &[("add", Passed), ("test_calc.mul", Passed)]);
        assert!(judge(&without, &clean).holds());
        let skipping = run(0, &[("add", Passed), ("test_calc.mul", Skipped)]);
        assert!(!judge(&without, &skipping).holds());
    }

    #[test]
    fn without_names_the_counts_decide() {
        let counts = |exit_code, passed, failed, skipped| CasesRun {
            exit_code: Some(exit_code),
            counts: Some([passed, failed, skipped]),
            cases: BTreeMap::new(),
        };
        let proof = judge(&counts(1, 2, 1, 0), &counts(0, 3, 0, 0));
        assert!(proof.holds() && proof.by_counts, "{proof:?}");
        assert!(proof.summary().contains("judged by counts"));
        let padded = judge(&counts(1, 2, 1, 0), &counts(0, 3, 0, 1));
        assert!(!padded.holds());
        let fewer = judge(&counts(1, 2, 1, 0), &counts(0, 2, 0, 0));
        assert!(!fewer.holds());
    }

    #[test]
    fn names_are_compared_without_the_directory_they_ran_in() {
        let without = run(1, &[("/tmp/x/test/a.test.js", Failed)])
            .relative_to(std::path::Path::new("/tmp/x"));
        let with = run(0, &[("/home/u/repo/test/a.test.js", Passed)])
            .relative_to(std::path::Path::new("/home/u/repo"));
        let proof = judge(&without, &with);
        assert_eq!(proof.fail_to_pass, ["test/a.test.js"]);
    }

    #[test]
    fn a_failing_final_run_is_no_proof() {
        let without = run(1, &[("mul", Failed)]);
        let with = run(1, &[("mul", Failed)]);
        assert!(!judge(&without, &with).holds());
    }
}
