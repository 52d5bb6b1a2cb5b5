//! QA's `HOLDOUT` check: each held-out test ran and passed. What a failing one said goes to
//! GREEN as behaviour — its name, its requirement id and the runner's message, with every line
//! of its source withheld first — so that GREEN can fix the feature without learning the
//! test's inputs from its code.

use std::collections::BTreeMap;

use crate::holdout::{self, HeldTest};
use prpd_qa::checklist::Category;
use prpd_qa::metrics::Outcome;
use prpd_qa::runner::{CheckResult, CheckStatus};

use super::super::Driver;

/// The id of QA's hold-out check.
const CHECK_ID: &str = "HOLDOUT";

impl Driver {
    /// QA's `HOLDOUT` check: every held-out test ran in the checklist's test run and passed.
    /// `None` when nothing is held out.
    pub(in crate::driver) fn holdout_check(
        &mut self,
        checks: &[CheckResult],
    ) -> Option<CheckResult> {
        if self.record.holdout.tests.is_empty() {
            return None;
        }
        // The held lines, or no message at all: a store prpd cannot read sends GREEN nothing
        // it could not check.
        let lines = self.held_lines().ok();
        let mut results = BTreeMap::new();
        let mut failed = Vec::new();
        for test in &self.record.holdout.tests {
            // The check that ran the test, whichever command it is (`[checks.*]` may run the
            // tests another way than the discovered command).
            let ran = checks
                .iter()
                .find_map(|check| Some((check, check.metrics.test_cases().get(&test.name)?)));
            let outcome = ran.map(|(_, outcome)| outcome);
            if let Some(outcome) = outcome {
                results.insert(test.name.clone(), outcome);
            }
            if outcome != Some(Outcome::Passed) {
                let how = outcome.map_or("did not run", Outcome::as_str);
                let log = ran
                    .and_then(|(check, _)| check.log.as_ref())
                    .and_then(|log| std::fs::read_to_string(log).ok())
                    .unwrap_or_default();
                let said = lines
                    .as_ref()
                    .and_then(|lines| {
                        let log = lines.redact(&log).unwrap_or(log);
                        holdout::message::of(&log, &test.name)
                    })
                    .map_or_else(String::new, |message| format!(": {message}"));
                let examiner = self
                    .record
                    .holdout
                    .files
                    .iter()
                    .any(|file| file.whole && file.path == test.file);
                failed.push(format!("{} {how}{said}", describe(test, examiner)));
            }
        }
        self.record.holdout.results = results;
        let total = self.record.holdout.tests.len();
        let (status, detail) = if failed.is_empty() {
            (
                CheckStatus::Pass,
                format!("{total} held-out test(s) that GREEN never saw pass"),
            )
        } else {
            (
                CheckStatus::Fail,
                format!(
                    "{} of {total} held-out test(s) do not pass: {}. GREEN never saw them (their \
                     source stays hidden); they check the same requirements on other inputs, so \
                     the feature must work in general, not only for the visible tests' inputs",
                    failed.len(),
                    failed.join("; ")
                ),
            )
        };
        Some(CheckResult {
            id: CHECK_ID.to_owned(),
            category: Category::Functionality.to_string(),
            criterion: "The tests held out of GREEN's view pass".to_owned(),
            blocking: true,
            status,
            command: None,
            source: Some("prpd: RED's tests set aside at RED's end".to_owned()),
            exit_code: None,
            duration_ms: 0,
            metrics: prpd_qa::metrics::Metrics::default(),
            detail,
            failing_tests: Vec::new(),
            output_tail: String::new(),
            log: None,
            reused_from: None,
        })
    }
}

/// A held-out test as GREEN's feedback names it: `name` (`AC-2`), and whose it is when the
/// examiner wrote it (a test of the examiner's that is wrong is a human's call, not GREEN's).
fn describe(test: &HeldTest, examiner: bool) -> String {
    let id = test
        .requirement
        .as_ref()
        .map_or_else(String::new, |id| format!(" ({id})"));
    let whose = if examiner { ", the examiner's" } else { "" };
    format!("`{}`{id}{whose}", test.name)
}
