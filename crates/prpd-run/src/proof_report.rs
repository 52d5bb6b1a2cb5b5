//! The proof a shipped run carries to its pull request (`proof.json`, `proof.md`, and the
//! check run `prpd / verdict`): everything a reviewer needs to see that the tests test the
//! feature, in one place, built only from what prpd measured and decided itself.
//!
//! It holds the verdict; the fail-to-pass table by test name (how each test ended without the
//! feature and with it); the hold-out tests' results; the frozen harness's snapshot; an audit
//! of the tests since the base (`test_audit.rs`: test files added, deleted and renamed, tests
//! named in one run only, skips and expected failures, the assertion count before and after);
//! the checks of the approving QA and their results (`checklist.rs`); the attempts and their
//! REJECT reasons; and where the verdict was published. Pure: the driver collects the parts
//! (`driver/proof_report.rs`), this module puts them together and renders them
//! (`markdown.rs`). Field names are stable: `proof.json` is for programs.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::machine::QaVerdict;
use crate::proof::{CasesRun, Proof};
use prpd_prp::Requirement;
use prpd_qa::metrics::Outcome;
use prpd_ship::github::Published;

mod checklist;
mod markdown;
mod test_audit;
mod test_text;

pub use checklist::{CheckLine, CheckOutcome, checks_of_qa_report};
pub use markdown::{Rendering, pull_request_section, render, summary, verdict_title};
pub use test_audit::{BeforeAfter, FileChange, TestAudit, TestFileChange};
pub use test_text::TextCounts;

/// The version of `proof.json`'s layout.
pub const PROOF_VERSION: u32 = 1;

/// The whole proof of one shipped run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProofReport {
    pub version: u32,
    pub run_id: String,
    /// The PRP, relative to the repository root.
    pub prp: PathBuf,
    /// The PRP's title.
    pub feature: String,
    /// The shipped commit.
    pub commit: String,
    /// The last QA verdict.
    pub verdict: Option<QaVerdict>,
    pub fail_to_pass: FailToPass,
    /// The tests held out of GREEN's sight and put back at QA, with their results.
    pub held_out: Vec<HeldOutResult>,
    /// Where the test harness froze; `None` when it never did (no RED end).
    pub harness: Option<Harness>,
    pub test_audit: TestAudit,
    /// The checks of the last QA and their results.
    pub checks: Vec<CheckLine>,
    /// Every QA verdict of the run, in order, with its REJECT reasons.
    pub attempts: Vec<Attempt>,
    /// Where the verdict was published on GitHub, or why it was not.
    pub published: Publication,
}

impl ProofReport {
    /// The verdict on GitHub is a pass: QA approved, the fail-to-pass proof holds, and every
    /// hold-out test fails without the feature and passes with it.
    pub fn passes(&self) -> bool {
        self.verdict == Some(QaVerdict::Approve)
            && self.fail_to_pass.holds
            && self.held_out.iter().all(HeldOutResult::holds)
    }
}

/// The fail-to-pass proof as it stands for the shipped tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailToPass {
    /// The proof holds.
    pub holds: bool,
    /// How the two runs were compared.
    pub judged: Judged,
    /// The proof's one line ([`Proof::summary`]).
    pub summary: String,
    /// The tests that fail without the feature and pass with it.
    pub tests: Vec<TestOutcomes>,
    /// Tests that passed without the feature and still pass.
    pub pass_to_pass: usize,
    /// Why the proof does not hold.
    pub problems: Vec<String>,
}

/// How the fail-to-pass proof compared the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// By name, RED's tests told apart by their files.
    ByName,
    /// By name, every test held to the rule (the names do not say their files).
    EveryTest,
    /// By counts: the output does not name its tests.
    ByCounts,
    /// Without the feature the tests did not build, so each test of the final run must pass.
    DidNotBuild,
    /// There was nothing to compare (no test command, no harness frozen).
    NotJudged,
}

/// One test: how it ended without the feature and with it (`None`: not named in that run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestOutcomes {
    pub name: String,
    pub without_feature: Option<Outcome>,
    pub with_feature: Option<Outcome>,
}

/// One hold-out test and its results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldOutResult {
    pub name: String,
    /// The PRP requirement whose id the test's name carries.
    pub requirement: Option<String>,
    pub without_feature: Option<Outcome>,
    pub with_feature: Option<Outcome>,
}

impl HeldOutResult {
    /// It proves what a hold-out test must: it fails without the feature and passes with it.
    pub fn holds(&self) -> bool {
        self.without_feature == Some(Outcome::Failed) && self.with_feature == Some(Outcome::Passed)
    }
}

/// Where the test harness froze, and the tree the run without the feature measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Harness {
    /// The snapshot commit the harness froze in.
    pub frozen_in_commit: String,
    /// Its tree id.
    pub frozen_in_tree: String,
    /// How many files the harness holds.
    pub files: usize,
    /// The tree without the feature: the run's base with the frozen harness laid over it.
    pub without_feature_tree: Option<String>,
}

/// One QA verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    pub attempt: u32,
    pub verdict: QaVerdict,
    /// The blocking failures of a REJECT.
    pub reasons: Vec<String>,
}

/// Where the verdict went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum Publication {
    /// The check run `prpd / verdict` on the shipped commit.
    CheckRun { html_url: String },
    /// A commit status `prpd / verdict`, and why not a check run.
    CommitStatus { why: String },
    /// Nothing was published, and why (a dry run, no token, a remote off GitHub).
    NotPublished { why: String },
}

impl From<Published> for Publication {
    fn from(published: Published) -> Self {
        match published {
            Published::CheckRun { html_url } => Publication::CheckRun { html_url },
            Published::CommitStatus { why } => Publication::CommitStatus { why },
        }
    }
}

/// The two measured runs the proof compared.
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// The run on the base with the frozen harness.
    pub without_feature: &'a CasesRun,
    /// The run on the approved tree.
    pub with_feature: &'a CasesRun,
}

impl FailToPass {
    /// The proof `proof` judged on `runs`; `None` when there was nothing to judge, for `why`.
    pub fn new(proof: Option<&Proof>, runs: Option<Runs<'_>>, why: &str) -> FailToPass {
        let Some(proof) = proof else {
            return FailToPass {
                holds: false,
                judged: Judged::NotJudged,
                summary: why.to_owned(),
                tests: Vec::new(),
                pass_to_pass: 0,
                problems: vec![why.to_owned()],
            };
        };
        let judged = if proof.did_not_build.is_some() {
            Judged::DidNotBuild
        } else if proof.by_counts {
            Judged::ByCounts
        } else if proof.untied {
            Judged::EveryTest
        } else {
            Judged::ByName
        };
        FailToPass {
            holds: proof.holds(),
            judged,
            summary: proof.summary(),
            tests: proof
                .fail_to_pass
                .iter()
                .map(|name| outcomes(name, runs))
                .collect(),
            pass_to_pass: proof.pass_to_pass,
            problems: proof.problems.clone(),
        }
    }
}

fn outcomes(name: &str, runs: Option<Runs<'_>>) -> TestOutcomes {
    TestOutcomes {
        name: name.to_owned(),
        without_feature: runs.and_then(|runs| named(runs.without_feature, name)),
        with_feature: runs.and_then(|runs| named(runs.with_feature, name)),
    }
}

/// How the test `name` ended in `run`. The proof names a file whose tests could not load
/// without the feature with a note (`test/x.test.js (failed before its tests could run)`): the
/// run knows it by the file alone.
fn named(run: &CasesRun, name: &str) -> Option<Outcome> {
    run.cases.get(name).copied().or_else(|| {
        let (file, _note) = name.strip_suffix(')')?.rsplit_once(" (")?;
        run.cases.get(file).copied()
    })
}

/// The results of the `held_out` tests in `runs`, each with the requirement of `requirements`
/// whose id its name carries.
pub fn held_out_results(
    held_out: &BTreeSet<String>,
    runs: Option<Runs<'_>>,
    requirements: &[Requirement],
) -> Vec<HeldOutResult> {
    held_out
        .iter()
        .map(|name| {
            let found = outcomes(name, runs);
            HeldOutResult {
                requirement: requirements
                    .iter()
                    .find(|requirement| requirement.is_named_by(name))
                    .map(|requirement| requirement.id.clone()),
                name: found.name,
                without_feature: found.without_feature,
                with_feature: found.with_feature,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
