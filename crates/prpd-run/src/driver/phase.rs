//! What the driver does at the boundaries of a phase: the breaker restarts and the baselines
//! are taken (the run's base snapshot, the frozen test harness, the test count at the end of
//! RED, the complexity at the end of GREEN). It stands apart from the iterations because these
//! facts are fixed once per phase and every later gate is measured against them.

use crate::breaker::{AgentEnd, Observation};
use crate::measure;
use prpd_base::phase::Phase;

use super::{DriveError, Driver, unix_now};

impl Driver {
    pub(super) async fn start_phase(&mut self, phase: Phase) -> Result<(), DriveError> {
        let now = unix_now();
        if let Some(breaker) = self.record.breakers.get_mut(&phase) {
            breaker.restart(now);
        }
        self.record.iteration = 0;
        let repo = self.context.repo.clone();
        self.ensure_base_snapshot()?;
        if phase == Phase::Red {
            // Boxed: exploring a web app is a large future, and rarely awaited.
            Box::pin(self.ensure_web_plan()).await?;
        }
        // The hold-out tests are in view in QA only.
        if matches!(phase, Phase::Qa | Phase::Green) && !self.record.holdout.tests.is_empty() {
            let detection = self.detection()?;
            if phase == Phase::Qa {
                self.put_back_for_qa(&detection)?;
            } else {
                self.hide_again(&detection)?;
            }
        }
        let tree_hash = self.record_tree(&format!("start of {phase}"))?;
        self.record.last_observation = Some(Observation {
            head: measure::head(&repo),
            tree_hash,
            tests: None,
            checks_passing: None,
            blocking_failed: None,
            lint_errors: None,
            max_complexity: None,
            error_signature: None,
            agent: AgentEnd::Ok,
        });
        self.write_breakers()
    }

    pub(super) async fn phase_completed(&mut self, phase: Phase) -> Result<(), DriveError> {
        self.record.feedback.remove(&phase);
        match phase {
            Phase::Red => {
                let detection = self.detection()?;
                self.hold_out_at_red_end(&detection).await?;
                self.freeze_harness(&detection)?;
                self.record.baseline.tests_at_red_end = self
                    .record
                    .last_observation
                    .as_ref()
                    .and_then(|observation| observation.tests)
                    .map(|tests| tests.passing + tests.failing);
            }
            Phase::Green => {
                // Tests GREEN added (after a REJECT, for an uncovered criterion) are held to
                // the same rule as RED's from now on.
                self.record.qa_blockers.clear();
                let detection = self.detection()?;
                self.freeze_harness(&detection)?;
                let log_dir = self.run_dir().join("measure");
                self.record.baseline.complexity_at_green_end =
                    self.probe(&detection, &log_dir).complexity().await?;
            }
            Phase::Document => self.remember_documentation().await,
            Phase::Refactor | Phase::Qa | Phase::Ship => {}
        }
        Ok(())
    }
}
