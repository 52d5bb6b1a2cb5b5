//! The QA checklist as the driver runs it: the full pass of a QA iteration with its report,
//! the checklist runs the other phases use, and the record of each verdict (with the run's
//! timeline beside the verdict's report). It stands apart so that the iteration reads as a
//! sequence of steps and QA's bookkeeping lives in one place.

use std::path::Path;

use crate::machine::QaVerdict;
use crate::record::VerdictRecord;
use prpd_base::phase::Phase;
use prpd_qa::checklist::Checklist;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::report::{self, Audience};
use prpd_qa::runner::{self, EarlierRun, QaOutcome, QaRequest};

use super::{DriveError, Driver, write_json, write_text};

impl Driver {
    /// Records QA's verdict in the run record and `qa-state.json`, and writes the run's
    /// timeline, the verdict on its receipt line included, beside the verdict's report.
    pub(super) fn record_verdict(
        &mut self,
        verdict: QaVerdict,
        attempt: u32,
        blocking: &[String],
    ) -> Result<(), DriveError> {
        self.record.verdicts.push(VerdictRecord {
            attempt,
            verdict,
            blocking: blocking.to_vec(),
            report: self.record.last_qa_report.clone(),
        });
        let state = serde_json::json!({
            "attempt": attempt,
            "last_verdict": verdict,
            "report_path": self.record.last_qa_report,
        });
        write_json(&self.paths().qa_state(), &state)?;
        match self.record.last_qa_report.as_deref().and_then(Path::parent) {
            Some(iteration_dir) => self.write_timeline(iteration_dir),
            None => Ok(()),
        }
    }

    /// Runs the whole checklist for a QA iteration, then the PRP's `[VERIFY]` tasks
    /// (`driver/verify.rs`), and writes the report.
    pub(super) async fn qa_pass(
        &mut self,
        detection: &Detection,
        iteration_dir: &Path,
    ) -> Result<QaOutcome, DriveError> {
        // The tree the checklist judges; a test run prpd already made on it is not repeated.
        let tree = self.record_tree("before the QA checklist")?;
        let earlier: Vec<EarlierRun> = self.earlier_run(&tree, detection).into_iter().collect();
        let mut outcome = self
            .checklist_run(detection, &self.context.checklist, iteration_dir, earlier)
            .await?;
        self.remember_checklist_test_run(detection, &tree, iteration_dir, &outcome);
        self.judge_test_check(detection, &tree, iteration_dir, &mut outcome)
            .await?;
        let proof = self
            .proof_check(detection, iteration_dir, &outcome.checks)
            .await?;
        outcome.add_check(proof);
        if let Some(holdout) = self.holdout_check(&outcome.checks) {
            outcome.add_check(holdout);
        }
        for check in self
            .verify_tasks(detection, iteration_dir, &outcome)
            .await?
        {
            outcome.add_check(check);
        }
        self.judge_critical_points(&mut outcome)?;
        // What a check says becomes the report, the gate's reasons and GREEN's feedback, all
        // kept in the record: none of it quotes a held-out test.
        self.withhold_from_checks(&mut outcome.checks)?;
        self.report_web_plan(&mut outcome);
        outcome.memory = self.memory_section(detection).await;
        let report_path = iteration_dir.join("qa-report.md");
        let markdown = report::markdown(&outcome, Audience::Run);
        // The report a person opens ends with the receipt so far; the pull request, which
        // quotes the report, has the whole run's receipt in its summary instead.
        let cost = format!(
            "\n## What the run cost so far\n\n{}",
            self.record.receipt.phase_markdown()
        );
        write_text(&report_path, &format!("{markdown}{cost}"))?;
        self.record.last_qa_report = Some(report_path);
        // The record is sealed as a git object at every save: it never quotes a held-out test.
        self.record.last_qa_markdown = Some(self.without_held_lines(markdown)?);
        Ok(outcome)
    }

    /// Keeps the test run of the checklist that just ran on `tree`, when it ran afresh (its log
    /// is in this iteration's folder) and exited by itself.
    fn remember_checklist_test_run(
        &mut self,
        detection: &Detection,
        tree: &str,
        iteration_dir: &Path,
        outcome: &QaOutcome,
    ) {
        let Some(test_command) = detection.command(CommandKind::Test) else {
            return;
        };
        let fresh = outcome.checks.iter().find_map(|check| {
            let log = check
                .log
                .as_ref()
                .filter(|log| log.starts_with(iteration_dir))?;
            (check.command.as_deref() == Some(test_command)).then_some((check.exit_code?, log))
        });
        if let Some((exit_code, log)) = fresh {
            let log = log.clone();
            self.remember_run(Phase::Qa, tree, test_command, exit_code, &log);
        }
    }

    /// Runs `checklist` on the working tree; `earlier_runs` are commands already run on it.
    pub(super) async fn checklist_run(
        &self,
        detection: &Detection,
        checklist: &Checklist,
        iteration_dir: &Path,
        earlier_runs: Vec<EarlierRun>,
    ) -> Result<QaOutcome, DriveError> {
        let request = QaRequest {
            repo: self.context.repo.clone(),
            prp: Some(self.context.prp.clone()),
            prp_path: Some(self.record.prp.clone()),
            jobs: self.context.config.qa.jobs,
            check_timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            run_dir: iteration_dir.to_path_buf(),
            attempt: self.record.machine.qa_attempt(),
            base_docs: Some(self.base_docs()?),
            earlier_runs,
            junit: self.context.config.qa.junit.clone(),
        };
        Ok(runner::run(&request, checklist, detection.clone()).await?)
    }
}
