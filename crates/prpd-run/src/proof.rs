//! The proof that the tests test the feature (SWE-bench's `FAIL_TO_PASS` / `PASS_TO_PASS`): the
//! test command is run on the run's base commit with the frozen test harness laid over it —
//! the tree without the feature — and its per-test results are compared, by name, with a run
//! on the tree being judged.
//!
//! The rules, each closing a shortcut. A run without the feature that could not run (killed,
//! a command not found, no test in its output) proves nothing, and the proof fails with why.
//! The tests must fail without the feature (else they do not test it). RED's tests — those in
//! the test files RED added or changed (`proof/files.rs` ties a name to its file) — must each
//! be in the final run and have *passed* there, and one of them must fail without the
//! feature: a skipped test, an expected failure, a padding test or a test elsewhere that
//! happens to flip cannot stand in for them. No test that passed without the feature may
//! fail, be skipped or be gone at the end; skips are compared only for tests that ran in both
//! runs. Where the names do not say their files, every test that fails without the feature is
//! held to the rule; where the run without the feature names no failing test or the final run
//! names no test at all, the rules are judged by counts. The verdict says which. A flaky test
//! (it failed and passed on one tree, `flaky.rs`) is left out of both runs: it proves nothing
//! either way, and when that leaves no test to prove the feature the proof says it could not
//! decide. This module only judges; the driver builds the tree and runs the command twice
//! (`driver/proof.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

mod files;
mod unbuilt;

pub use files::{Owner, Owners, TestFiles};
pub use unbuilt::build_failure;

use serde::{Deserialize, Serialize};

use crate::cache::CacheKey;
use prpd_qa::metrics::{Metrics, Outcome};

/// One run of the test command as the proof sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasesRun {
    /// The exit code; `None` when the command was killed or timed out.
    pub exit_code: Option<i32>,
    /// Tests passed, failed and skipped, when the output had a count prpd recognises.
    pub counts: Option<[u32; 3]>,
    /// The tests the output named, with how each ended.
    pub cases: BTreeMap<String, Outcome>,
    /// The line that says the tests did not build (compiled languages), when they did not:
    /// then the run printed no test, but its tests failed all the same.
    #[serde(default)]
    pub did_not_build: Option<String>,
}

impl CasesRun {
    /// The run of a command that exited with `exit_code` and printed what `metrics` holds.
    pub fn from_metrics(exit_code: Option<i32>, metrics: &Metrics) -> CasesRun {
        let figure = |name| metrics.count(name);
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
            did_not_build: None,
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

    /// Why this run shows nothing about the tests, when it does not: it was killed or timed
    /// out, its command could not be executed or found (126, 127), or it printed no test
    /// count and no test name prpd recognises. Such a run proves nothing either way.
    pub fn could_not_run(&self) -> Option<String> {
        match self.exit_code {
            None => Some("was killed or timed out".to_owned()),
            Some(126) => Some("could not execute its command (exit code 126)".to_owned()),
            Some(127) => Some("did not find its command (exit code 127)".to_owned()),
            Some(code)
                if self.counts.is_none()
                    && self.cases.is_empty()
                    && self.did_not_build.is_none() =>
            {
                Some(format!(
                    "printed no test count and no test name prpd recognises (exit code {code})"
                ))
            }
            Some(_) => None,
        }
    }

    /// The same run with the tests `left_out` taken out, names and counts; when every failure
    /// it counted was one of them, it counts as a run that exited 0.
    #[must_use]
    pub fn apart_from(&self, left_out: &BTreeSet<&str>) -> CasesRun {
        let mut run = self.clone();
        run.cases
            .retain(|name, _| !left_out.contains(name.as_str()));
        if run.cases.len() == self.cases.len() {
            return run;
        }
        let removed = |outcome| {
            u32::try_from(
                self.cases
                    .iter()
                    .filter(|(name, ended)| **ended == outcome && left_out.contains(name.as_str()))
                    .count(),
            )
            .unwrap_or(u32::MAX)
        };
        if let Some([passed, failed, skipped]) = self.counts {
            let failed = failed.saturating_sub(removed(Outcome::Failed));
            run.counts = Some([
                passed.saturating_sub(removed(Outcome::Passed)),
                failed,
                skipped.saturating_sub(removed(Outcome::Skipped)),
            ]);
            let fails_still = failed > 0 || run.named(Outcome::Failed).next().is_some();
            if self.exit_code.is_some_and(|code| code != 0)
                && removed(Outcome::Failed) > 0
                && !fails_still
            {
                run.exit_code = Some(0);
            }
        }
        run
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
/// again), the same command and the same measurement settings. A run that
/// [could not run](CasesRun::could_not_run) is never kept: it runs again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WithoutFeature {
    /// What it measured; the tree is the base with the frozen harness laid over it.
    pub key: CacheKey,
    /// What the run showed.
    pub run: CasesRun,
    /// Its log.
    pub log: std::path::PathBuf,
    /// The tests that failed in one of the two runs on this tree and passed in the other
    /// (absent in records written before flaky tests were looked for).
    #[serde(default)]
    pub flaky: BTreeSet<String>,
}

impl WithoutFeature {
    /// The tree without the feature measured twice, each run with its log: the run that shows
    /// what must be proven is kept — one that could not run, else one that failed, else the
    /// first — and the tests that flipped between the two are its flaky tests.
    pub fn from_two_runs(
        key: CacheKey,
        first: (CasesRun, PathBuf),
        second: (CasesRun, PathBuf),
    ) -> WithoutFeature {
        let flaky = crate::flaky::flipped(&first.0, &second.0);
        let second_shows_more = first.0.could_not_run().is_none()
            && (second.0.could_not_run().is_some()
                || (!first.0.failed_overall() && second.0.failed_overall()));
        let (run, log) = if second_shows_more { second } else { first };
        WithoutFeature {
            key,
            run,
            log,
            flaky,
        }
    }
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
    /// True when the proof was judged by counts: the run without the feature named no failing
    /// test, or the final run named no test.
    pub by_counts: bool,
    /// True when the runner's test names do not say their files, so RED's tests could not be
    /// told from the others and every test that failed without the feature was held to the
    /// rule.
    #[serde(default)]
    pub untied: bool,
    /// The line that says the tests did not build without the feature, when they did not.
    #[serde(default)]
    pub did_not_build: Option<String>,
    /// Flaky tests left out of the comparison: they failed and passed on one tree.
    #[serde(default)]
    pub flaky: Vec<String>,
}

impl Proof {
    /// The proof holds.
    pub fn holds(&self) -> bool {
        self.problems.is_empty()
    }

    /// One line for a report or a gate's feedback.
    pub fn summary(&self) -> String {
        let how = if let Some(line) = &self.did_not_build {
            format!(" (without the feature the tests do not build: {line})")
        } else if self.by_counts {
            " (judged by counts: the test output does not name the tests it counts)".to_owned()
        } else if self.untied {
            " (judged on every test: the test names do not say their files, so RED's tests could not be told apart)".to_owned()
        } else {
            String::new()
        };
        let how = if self.flaky.is_empty() {
            how
        } else {
            format!(
                "{how} (flaky, left out: {})",
                self.flaky
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
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
/// `with` it (the tree being judged); `files` are the harness's test files, RED's apart.
/// `flaky` names the tests known to flip on one tree (with the feature, or quarantined); they
/// and the tests that flipped without the feature are left out of both runs — but never a
/// test of RED's that flipped with the feature (`flipped_with_feature`): the feature's own
/// tests must pass every time with it, or code right every other call would ship as proven.
pub fn judge(
    without: &WithoutFeature,
    with: &CasesRun,
    files: &TestFiles,
    flaky: &BTreeSet<String>,
    flipped_with_feature: &BTreeSet<String>,
) -> Proof {
    let mut proof = Proof::default();
    if let Some(why) = without.run.could_not_run() {
        proof.problems.push(format!(
            "could not prove the tests test the feature: the test run without the feature {why} (log: {})",
            without.log.display()
        ));
        return proof;
    }
    // The feature's own tests: RED's, or — where a name does not say its file — those that
    // failed without the feature every time.
    let owners = Owners::new(files);
    let reds = |name: &&String| match owners.of(name) {
        Owner::Red(_) => true,
        Owner::Other(_) => false,
        Owner::Unknown => {
            without.run.cases.get(*name) == Some(&Outcome::Failed) && !without.flaky.contains(*name)
        }
    };
    let red_flipped: Vec<String> = flipped_with_feature
        .iter()
        .filter(reds)
        .map(|name| format!("`{name}`"))
        .collect();
    if !red_flipped.is_empty() {
        proof.problems.push(format!(
            "{} of RED's tests failed and passed on one tree with the feature ({}): each of RED's tests must pass every time with it",
            red_flipped.len(),
            red_flipped.join(", ")
        ));
        return proof;
    }
    let known: BTreeSet<&str> = flaky
        .iter()
        .filter(|name| !reds(name))
        .chain(&without.flaky)
        .map(String::as_str)
        .collect();
    let left_out: Vec<String> = known
        .iter()
        .filter(|name| without.run.cases.contains_key(**name) || with.cases.contains_key(**name))
        .map(|name| (*name).to_owned())
        .collect();
    let failed_without_flaky = without
        .run
        .named(Outcome::Failed)
        .any(|name| !known.contains(name));
    let failed_without_at_all = without.run.named(Outcome::Failed).next().is_some();
    let without = &without.run.apart_from(&known);
    let with = &with.apart_from(&known);
    proof.flaky = left_out;
    if failed_without_at_all && !failed_without_flaky {
        proof.problems.push(could_not_decide(&proof.flaky));
        return proof;
    }
    judge_apart(&mut proof, without, with, files);
    if proof.fail_to_pass.is_empty() && !proof.flaky.is_empty() {
        proof.problems.insert(0, could_not_decide(&proof.flaky));
    }
    proof
}

/// Why flaky tests leave the proof undecided.
fn could_not_decide(flaky: &[String]) -> String {
    format!(
        "could not decide whether the tests test the feature: {} failed and passed on the same tree (flaky), and a flaky test proves nothing; a test of RED's must fail every time without the feature and pass every time with it",
        flaky
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The rules of [`judge`] on two runs with the flaky tests left out.
fn judge_apart(proof: &mut Proof, without: &CasesRun, with: &CasesRun, files: &TestFiles) {
    if !without.failed_overall() {
        proof.problems.push(
            "the tests pass without the feature (on the run's base commit with the frozen tests), so they do not test it"
                .to_owned(),
        );
        return;
    }
    if with.failed_overall() {
        proof
            .problems
            .push("the tests do not pass with the feature".to_owned());
        return;
    }
    if let Some(line) = &without.did_not_build {
        judge_unbuilt(line, with, files, proof);
        return;
    }
    proof.by_counts = without.named(Outcome::Failed).next().is_none() || with.cases.is_empty();
    if proof.by_counts {
        judge_by_counts(without, with, proof);
        return;
    }
    let owners = Owners::new(files);
    let names: BTreeSet<&str> = without
        .cases
        .keys()
        .chain(with.cases.keys())
        .map(String::as_str)
        .collect();
    let owned: Vec<(&str, Owner)> = names.iter().map(|name| (*name, owners.of(name))).collect();
    let red: Vec<&str> = owned
        .iter()
        .filter(|(_, owner)| matches!(owner, Owner::Red(_)))
        .map(|(name, _)| *name)
        .collect();
    if red.is_empty() {
        if owned.iter().any(|(_, owner)| *owner != Owner::Unknown) {
            proof.problems.push(format!(
                "none of the tests in the files RED added or changed ({}) ran: each of RED's tests must be present by name",
                paths(&files.red)
            ));
        } else {
            proof.untied = true;
            judge_every_test(without, with, proof);
        }
        return;
    }
    // Names that say no file and did not run without the feature may be the tests of one of
    // RED's files that could not load there (node names a file that failed to load by its
    // path, and its tests by their titles).
    let unplaced: Vec<&str> = owned
        .iter()
        .filter(|(name, owner)| *owner == Owner::Unknown && !without.cases.contains_key(*name))
        .map(|(name, _)| *name)
        .collect();
    judge_red(without, with, &red, &unplaced, proof);
    let mut elsewhere = Vec::new();
    for (name, owner) in &owned {
        if matches!(owner, Owner::Red(_)) {
            continue;
        }
        match (without.cases.get(*name), with.cases.get(*name)) {
            (Some(Outcome::Failed), Some(Outcome::Passed)) => elsewhere.push(*name),
            (Some(Outcome::Passed), Some(Outcome::Passed)) => proof.pass_to_pass += 1,
            (Some(before @ (Outcome::Failed | Outcome::Passed)), Some(after))
                if *after != Outcome::Passed =>
            {
                proof.problems.push(changed_outcome(name, *before, *after));
            }
            (Some(Outcome::Passed), None) => proof.problems.push(vanished(name)),
            _ => {}
        }
    }
    if proof.fail_to_pass.is_empty() {
        let stand_ins = if elsewhere.is_empty() {
            String::new()
        } else {
            format!(
                "; {} do(es), but a test elsewhere cannot stand in for RED's",
                elsewhere
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        proof.problems.push(format!(
            "none of the tests in the files RED added or changed ({}) fails without the feature and passes with it{stand_ins}",
            paths(&files.red)
        ));
    }
}

/// Tests that do not even build without the feature (RED's tests call what the feature adds)
/// fail there, every one of them: each test of the final run must have passed, RED's and
/// the others alike, since none can be compared by name.
fn judge_unbuilt(line: &str, with: &CasesRun, files: &TestFiles, proof: &mut Proof) {
    proof.did_not_build = Some(line.to_owned());
    if let Some(problem) = unbuilt::not_reds(line, files) {
        proof.problems.push(problem);
        return;
    }
    let owners = Owners::new(files);
    for (name, outcome) in &with.cases {
        if *outcome != Outcome::Passed {
            proof.problems.push(format!(
                "`{name}` is {} in the final run: every test must pass",
                outcome.as_str()
            ));
        }
    }
    if with.skipped() > 0 && with.cases.is_empty() {
        proof.problems.push(format!(
            "{} test(s) are skipped in the final run: every test must pass",
            with.skipped()
        ));
    }
    let red_ran = with
        .cases
        .keys()
        .any(|name| matches!(owners.of(name), Owner::Red(_)));
    let names_say_files = with
        .cases
        .keys()
        .any(|name| owners.of(name) != Owner::Unknown);
    if names_say_files && !red_ran {
        proof.problems.push(format!(
            "none of the tests in the files RED added or changed ({}) ran: each of RED's tests must be present by name",
            paths(&files.red)
        ));
    }
    if proof.problems.is_empty() {
        proof.fail_to_pass = if with.cases.is_empty() {
            vec![format!("{} test(s)", with.passed())]
        } else {
            with.named(Outcome::Passed).map(str::to_owned).collect()
        };
    }
}

/// RED's tests (those in the files RED added or changed): each must be in the final run and
/// pass there. One that failed without the feature may be missing from the final run only
/// when its file failed to load without the feature (its name there is the file's), and the
/// tests that replace it — RED's, or `unplaced` names that say no file — all pass.
fn judge_red(
    without: &CasesRun,
    with: &CasesRun,
    red: &[&str],
    unplaced: &[&str],
    proof: &mut Proof,
) {
    let mut absent = Vec::new();
    let mut stand_ins = 0;
    for name in red {
        match (without.cases.get(*name), with.cases.get(*name)) {
            (Some(Outcome::Failed), Some(Outcome::Passed)) => {
                proof.fail_to_pass.push((*name).to_owned());
            }
            (Some(Outcome::Passed), Some(Outcome::Passed)) => proof.pass_to_pass += 1,
            (Some(Outcome::Skipped), Some(Outcome::Passed | Outcome::Skipped)) | (None, None) => {}
            (Some(Outcome::Failed), None) => absent.push(*name),
            (None, Some(Outcome::Passed)) => stand_ins += 1,
            (Some(before), Some(after)) => {
                proof.problems.push(changed_outcome(name, *before, *after));
            }
            (None, Some(after)) => proof.problems.push(format!(
                "`{name}` is {} in the final run: each of RED's tests must pass",
                after.as_str()
            )),
            (Some(_), None) => proof.problems.push(format!(
                "`{name}` ran without the feature but is not in the final run: each of RED's tests must be present by name"
            )),
        }
    }
    if !absent.is_empty() {
        for name in unplaced {
            match with.cases.get(*name) {
                Some(Outcome::Passed) => stand_ins += 1,
                Some(outcome) => proof.problems.push(format!(
                    "`{name}` did not run without the feature and is {} in the final run: it may be one of RED's tests, which must pass",
                    outcome.as_str()
                )),
                None => {}
            }
        }
    }
    if stand_ins > 0 {
        proof.fail_to_pass.extend(
            absent
                .iter()
                .map(|name| format!("{name} (failed before its tests could run)")),
        );
    } else {
        for name in absent {
            proof.problems.push(format!(
                "`{name}` fails without the feature and is not in the final run: each of RED's tests must be present by name"
            ));
        }
    }
}

/// A test that passed without the feature and is missing from the final run: deleted, or
/// renamed, outside the test files frozen since RED (a unit test in a source file).
fn vanished(name: &str) -> String {
    format!(
        "`{name}` passed without the feature and is not in the final run: a test that passed before must still run (deleted or renamed?)"
    )
}

/// A test whose outcome changed for the worse between the two runs.
fn changed_outcome(name: &str, before: Outcome, after: Outcome) -> String {
    match before {
        Outcome::Failed => format!(
            "`{name}` fails without the feature but is {} with it; it must pass",
            after.as_str()
        ),
        Outcome::Passed | Outcome::Skipped => format!(
            "`{name}` {} without the feature but is {} with it",
            before.as_str(),
            after.as_str()
        ),
    }
}

/// Paths for a sentence: `a.py, b.py`, or `none` for an empty set.
fn paths(files: &BTreeSet<PathBuf>) -> String {
    if files.is_empty() {
        return "none".to_owned();
    }
    files
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rules on every named test, for runners whose names do not say their files (so RED's
/// tests cannot be told from the others): every test that fails without the feature must pass
/// with it, and at least one must.
fn judge_every_test(without: &CasesRun, with: &CasesRun, proof: &mut Proof) {
    let failed_without: Vec<&str> = without.named(Outcome::Failed).collect();
    // Skips are compared only for tests that ran in both runs: a run without the feature that
    // crashed early (a package that did not build) never shows the tests skipped before.
    let newly_skipped: Vec<&str> = with
        .named(Outcome::Skipped)
        .filter(|name| {
            without
                .cases
                .get(*name)
                .is_some_and(|before| *before != Outcome::Skipped)
        })
        .collect();
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
    // failed before it could run (a module that did not import yet); then nothing that ran in
    // both runs may be newly skipped.
    if !absent.is_empty() {
        if newly_skipped.is_empty() {
            proof.fail_to_pass.extend(
                absent
                    .iter()
                    .map(|name| format!("{name} (failed before its tests could run)")),
            );
        } else {
            proof.problems.push(format!(
                "{} test(s) that fail without the feature are not in the final run ({}) while tests are skipped there: every test must run and pass",
                absent.len(),
                absent.join(", ")
            ));
        }
    }
    for name in without.named(Outcome::Passed) {
        match with.cases.get(name) {
            Some(Outcome::Passed) => proof.pass_to_pass += 1,
            Some(outcome) => proof.problems.push(format!(
                "`{name}` passed without the feature but is {} with it",
                outcome.as_str()
            )),
            None => proof.problems.push(vanished(name)),
        }
    }
    if proof.fail_to_pass.is_empty() && proof.problems.is_empty() {
        proof
            .problems
            .push("no test fails without the feature and passes with it".to_owned());
    }
}

/// The same rules by counts, when names cannot decide (the run without the feature named no
/// failing test, or the final run named none): every test that ran without the feature passes
/// with it, and no more tests are skipped.
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
pub(crate) mod tests;
