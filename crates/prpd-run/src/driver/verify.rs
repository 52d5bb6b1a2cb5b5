//! The PRP's `[VERIFY]` tasks at QA (`protocols::verify_tasks`): after the checklist, each task
//! is verified on the same tree and added to QA's outcome as a blocking check (`verify:V4`),
//! so a failed task is a REJECT and its output goes back to GREEN in the feedback.
//!
//! The PRP is prpd's frozen input, read from the run's base: it is never edited (no checkbox
//! is ticked), and the criteria of an AC checklist are its own (a `requirements.md` an agent
//! could write is not read). Each QA's results are appended to `<run_dir>/progress.md` and
//! shown in the QA report. A command the checklist just ran on this tree (the test command,
//! the lint) is read back from that check instead of running again. A `CI pipeline passes`
//! task is left to SHIP's wait for the remote checks, which sends a failing CI back to GREEN.

use std::path::Path;
use std::time::{Duration, SystemTime};

use prpd_base::process::Termination;
use prpd_protocols::verify_tasks::{
    self, Context, Criteria, PipelineMode, Ran, Runner, Settings, append_learning, progress_entry,
};
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::runner::{CheckResult, QaOutcome};

use super::{DriveError, Driver};

impl Driver {
    /// The PRP's `[VERIFY]` tasks verified on the working tree, as QA checks; `outcome` is the
    /// checklist's, whose commands are not run again.
    pub(super) async fn verify_tasks(
        &self,
        detection: &Detection,
        iteration_dir: &Path,
        outcome: &QaOutcome,
    ) -> Result<Vec<CheckResult>, DriveError> {
        let tasks = verify_tasks::parse(&self.context.prp_text);
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let config = &self.context.config;
        let context = Context {
            settings: Settings {
                repo: self.context.repo.clone(),
                timeout: config.qa.check_timeout,
                grace: config.qa.grace,
                test_command: detection.command(CommandKind::Test).map(str::to_owned),
            },
            detection: detection.clone(),
            logs: iteration_dir.join("verify"),
            criteria: Criteria {
                items: self.context.prp.acceptance.clone(),
                source: self.record.prp.display().to_string(),
            },
            pipeline: PipelineMode::DeferredToShip {
                waits: config.ship.wait_for_checks,
            },
        };
        let ran = outcome.checks.iter().filter_map(checklist_run).collect();
        let mut runner = Runner::new(context, ran);
        let progress = self.run_dir().join("progress.md");
        let note = format!(
            "QA attempt {} ({})",
            self.record.machine.qa_attempt(),
            iteration_dir.display()
        );
        let mut checks = Vec::new();
        for task in &tasks {
            let result = runner.verify(task).await?;
            tracing::info!(
                task = %task.heading(),
                verdict = result.verdict().signal(),
                "QA: [VERIFY] task verified"
            );
            append_learning(
                &progress,
                &progress_entry(&result, SystemTime::now(), Some(&note)),
            )
            .map_err(|source| DriveError::Write {
                path: progress.clone(),
                source,
            })?;
            checks.push(verify_tasks::as_check(&result, &self.record.prp));
        }
        Ok(checks)
    }
}

/// A checklist command that ran to its end, as a run the tasks may read back.
fn checklist_run(check: &CheckResult) -> Option<Ran> {
    Some(Ran {
        command: check.command.clone()?,
        termination: Termination::Exited(check.exit_code?),
        tail: check.output_tail.clone(),
        log: check.log.clone()?,
        metrics: check.metrics.clone(),
        duration: Duration::from_millis(check.duration_ms),
        ran_by: format!("QA check {}", check.id),
    })
}
