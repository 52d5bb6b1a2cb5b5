//! The driver's side of flaky tests (`flaky.rs` decides): a failed test run is run once more on
//! the same tree — only when the tree id did not change, so a changed tree never gets a second
//! chance — the tests that flipped are noted in the record, the feedback and memory; QA's test
//! check is judged on the second run, and a failure of only known flaky tests is a warning; and
//! when the run ends the quarantine list reaches the user's checkout.
//!
//! Where the list is written. A run reads `.prpd/flaky.toml` when it starts (prpd's inputs
//! freeze at the base, so an agent's edit quarantines nothing), and writes the updated list
//! into the user's repository (`Context::home`), never into the tree that ships: only the
//! agents' work ships. A run in place is the user's checkout, where a changed prpd input would
//! stop `prpd resume`, so there the list is written only when the run ships.

use std::collections::BTreeSet;
use std::path::Path;

use crate::flaky::{self, Day, Quarantine};
use crate::measure::TestMeasurement;
use crate::proof::CasesRun;
use prpd_base::phase::Phase;
use prpd_qa::checklist::Category;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::metrics;
use prpd_qa::runner::{CheckResult, CheckStatus, QaOutcome};

use super::{DriveError, Driver, unix_now};

/// The id of the QA report's line that lists the run's flaky tests.
const CHECK_ID: &str = "FLAKY";

/// Where and how a test run is made: by `phase`, with
/// the run's commands, logging into `log_dir` as `label`, on `tree`.
#[derive(Clone, Copy)]
pub(super) struct TestRunAt<'a> {
    pub(super) phase: Phase,
    pub(super) detection: &'a Detection,
    pub(super) log_dir: &'a Path,
    pub(super) label: &'a str,
    pub(super) tree: &'a str,
}

/// How a run ended, as far as the quarantine list cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunEnd {
    Shipped,
    Escalated,
}

impl Driver {
    /// The tests known to flip today: seen in this run, or quarantined.
    pub(super) fn known_flaky(&self) -> BTreeSet<String> {
        self.record.flaky.known(Day::of(unix_now()))
    }

    /// The test command's run `at` (read from `earlier` when that ran it), judged: a run that
    /// failed is run once more, see [`Driver::second_run`].
    pub(super) async fn judged_tests(
        &mut self,
        at: &TestRunAt<'_>,
        earlier: Option<&prpd_qa::runner::EarlierRun>,
        evidence: &mut Vec<String>,
    ) -> Result<Option<TestMeasurement>, DriveError> {
        let Some(first) = self
            .probe(at.detection, at.log_dir)
            .tests(at.label, earlier)
            .await?
        else {
            return Ok(None);
        };
        if !failed(&first.cases) {
            return Ok(Some(first));
        }
        let second = self.second_run(at, &first.cases, evidence).await?;
        Ok(Some(second.unwrap_or(first)))
    }

    /// A second, fresh run of the test command after a run on `tree` that failed with `first`:
    /// `None` when the tree changed since (the first run wrote into it), which is said in
    /// `evidence`. The tests that flipped are noted and named in `evidence`; the second run is
    /// the one to judge.
    async fn second_run(
        &mut self,
        at: &TestRunAt<'_>,
        first: &CasesRun,
        evidence: &mut Vec<String>,
    ) -> Result<Option<TestMeasurement>, DriveError> {
        let TestRunAt {
            phase,
            detection,
            log_dir,
            label,
            tree,
        } = *at;
        let now = self.record_tree(&format!("after the failed test run {label}"))?;
        if now != tree {
            evidence.push(format!(
                "the test run `{label}` changed tracked files, so prpd did not run it again to tell a flaky test from a failing one (tree {tree} became {now})"
            ));
            return Ok(None);
        }
        let Some(second) = self
            .probe(detection, log_dir)
            .tests(&format!("{label}-again"), None)
            .await?
        else {
            return Ok(None);
        };
        let flipped = flaky::flipped(first, &second.cases);
        if !flipped.is_empty() {
            let new = self.record.flaky.note(&flipped, tree, Some(phase));
            tracing::warn!(tests = ?flipped, %tree, new = new.len(), "flaky tests: failed and passed on the same tree");
            evidence.push(format!(
                "flaky: {} failed and passed on the same tree ({tree}); prpd judged the second run, never counts a flaky test as a repeated error nor as proof, and lists it in .prpd/flaky.toml when the run ends",
                names(flipped.iter())
            ));
        }
        Ok(Some(second))
    }

    /// QA's test check, judged again: when it failed on `tree`, the test command runs once more
    /// (unless the tree changed); the check takes the second run's result, and a run whose only
    /// failures are known flaky tests is a warning that names them. Then a line that lists the
    /// run's flaky tests joins the report, and the quarantined tests' outcomes are kept.
    pub(super) async fn judge_test_check(
        &mut self,
        detection: &Detection,
        tree: &str,
        iteration_dir: &Path,
        outcome: &mut QaOutcome,
    ) -> Result<(), DriveError> {
        let test_command = detection.command(CommandKind::Test).map(str::to_owned);
        let check = outcome
            .checks
            .iter()
            .find(|check| check.command.is_some() && check.command == test_command)
            .cloned();
        if let Some(mut check) = check {
            let mut run = CasesRun::from_metrics(check.exit_code, &check.metrics)
                .relative_to(&self.context.repo);
            if check.status == CheckStatus::Fail && failed(&run) {
                let mut notes = Vec::new();
                let at = TestRunAt {
                    phase: Phase::Qa,
                    detection,
                    log_dir: iteration_dir,
                    label: "tests",
                    tree,
                };
                let second = self.second_run(&at, &run, &mut notes).await?;
                if let Some(second) = second {
                    run = second.cases.clone();
                    take_run(&mut check, &second);
                }
                let known = self.known_flaky();
                if !failed(&run) {
                    check.status = CheckStatus::Pass;
                    check.detail = format!(
                        "passed when run again on the same tree; {}",
                        notes.join("; ")
                    );
                } else if let Some(flaky) = flaky::only_known_failures(&run, &known) {
                    check.status = CheckStatus::Warn;
                    check.detail = format!(
                        "only flaky or quarantined tests failed ({}): a warning, not a blocker; every other test passed",
                        names(flaky.iter())
                    );
                }
                outcome.replace_check(check);
            }
            self.record.flaky.note_qa_run(&run);
        }
        if !self.record.flaky.seen.is_empty() {
            outcome.add_check(self.flaky_check());
        }
        Ok(())
    }

    /// The warning that lists the tests this run saw flip.
    fn flaky_check(&self) -> CheckResult {
        let seen: Vec<String> = self
            .record
            .flaky
            .seen
            .iter()
            .map(|(name, sighting)| {
                format!(
                    "`{name}` ({}, tree {})",
                    sighting.measured(),
                    short(&sighting.tree)
                )
            })
            .collect();
        CheckResult {
            id: CHECK_ID.to_owned(),
            category: Category::Functionality.to_string(),
            criterion: "No test flips between runs on the same tree (flaky tests)".to_owned(),
            blocking: false,
            status: CheckStatus::Warn,
            command: None,
            source: Some("prpd: a failed test run run again on the same tree".to_owned()),
            exit_code: None,
            duration_ms: 0,
            metrics: metrics::Metrics::default(),
            detail: format!(
                "flaky tests, not counted as failures nor as proof: {}; quarantined in {} when the run ends",
                seen.join(", "),
                flaky::quarantine::PATH
            ),
            failing_tests: Vec::new(),
            output_tail: String::new(),
            log: None,
            reused_from: None,
        }
    }

    /// Writes the quarantine list, updated with what this run saw, into the user's repository
    /// when the run ends `how` (see the module docs for where and when), and remembers the
    /// run's flaky tests. Failing to write it is logged, never the run's failure.
    pub(super) async fn end_quarantine(&mut self, how: RunEnd) {
        self.remember_flaky().await;
        let in_place = self.record.worktree.is_none();
        if in_place && how == RunEnd::Escalated {
            return;
        }
        let home = self.context.home.clone();
        let on_disk = match Quarantine::load(&home) {
            Ok(list) => list,
            Err(error) => {
                tracing::warn!(error = %error, "the quarantine list is not updated: prpd does not overwrite a file it cannot read");
                return;
            }
        };
        let settings = self.context.config.flaky;
        let updated = self.record.flaky.updated(
            &on_disk,
            Day::of(unix_now()),
            settings.passes_to_leave,
            settings.days,
        );
        if updated != on_disk {
            match updated.write(&home) {
                Ok(path) => {
                    tracing::info!(path = %path.display(), tests = updated.tests.len(), "quarantine list updated");
                }
                Err(error) => {
                    tracing::warn!(%error, "the quarantine list could not be written");
                    return;
                }
            }
        }
        // QA's outcomes count once: a run escalated, resumed and escalated again in GREEN must
        // not count the same QA run's passes twice.
        self.record.flaky.at_qa.clear();
    }
}

/// The run failed by itself (not killed): a non-zero exit, or a failing test counted.
fn failed(run: &CasesRun) -> bool {
    match run.exit_code {
        None => false,
        Some(code) => code != 0 || run.counts.is_some_and(|[_, failed, _]| failed > 0),
    }
}

/// `check` with the figures, output and log of the `second` run.
fn take_run(check: &mut CheckResult, second: &TestMeasurement) {
    check.exit_code = second.run.exit_code;
    check.metrics = metrics::parse_log(&second.log).unwrap_or_default();
    check.failing_tests.clone_from(&second.failing.names);
    check.output_tail.clone_from(&second.tail);
    check.log = Some(second.log.clone());
    check.reused_from = None;
}

/// Names for a sentence: `` `a`, `b` ``.
fn names<'a>(names: impl Iterator<Item = &'a String>) -> String {
    names
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first 12 characters of a tree id.
fn short(tree: &str) -> &str {
    tree.get(..12).unwrap_or(tree)
}
