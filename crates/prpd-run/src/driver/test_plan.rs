//! RED's `TestPlan` in the loop: after each RED agent, prpd reads the plan its answer may end
//! with (`prpd-protocols/src/test_plan`), writes the plan's specs and `test-plan.json` under
//! `runs/<id>/plan/`, and keeps its cases in the run record, where RED's measurement holds the
//! tests to them (`Measured::Red`'s `test_plan`). It stands apart from the iteration because
//! it is the one place where an agent's plan becomes prpd's record.
//!
//! An answer without a plan changes nothing: an earlier plan stays the one RED is held to. A
//! plan that cannot be read is refused with the seed's message, which RED's gate turns into
//! feedback; the plan kept before it stays too.

use std::time::{Duration, UNIX_EPOCH};

use prpd_protocols::test_plan::{self, HeldPlan, PLAN_DIR, PlannedCase, SPECS_DIR, WriteError};

use super::{DriveError, Driver, unix_now};

impl Driver {
    /// Reads the `TestPlan` of RED's `answer` into the record and the run directory; returns
    /// what the next RED iteration should be told about it (where its specs are, what prpd
    /// changed in it).
    pub(super) fn read_test_plan(&mut self, answer: &str) -> Result<Vec<String>, DriveError> {
        let normalised = match test_plan::read_answer(answer) {
            Ok(Some(normalised)) => normalised,
            Ok(None) => {
                self.record.test_plan.refused = None;
                return Ok(Vec::new());
            }
            Err(error) => {
                tracing::warn!(%error, "the RED agent's TestPlan is refused");
                self.record.test_plan.refused = Some(error.to_string());
                return Ok(Vec::new());
            }
        };
        let warnings = normalised.warnings.clone();
        let generated_at =
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(unix_now()));
        let plan = normalised.into_plan(&self.record.run_id, &generated_at.to_string());
        let plan_dir = self.run_dir().join(PLAN_DIR);
        match test_plan::write_plan(&plan_dir, &plan) {
            Ok(_) => {}
            Err(WriteError::Io { path, source }) => return Err(DriveError::Write { path, source }),
            Err(error @ WriteError::UnsafePath { .. }) => {
                tracing::warn!(%error, "the RED agent's TestPlan is refused");
                self.record.test_plan.refused = Some(error.to_string());
                return Ok(Vec::new());
            }
        }
        self.record.test_plan = HeldPlan {
            cases: plan.cases.iter().map(PlannedCase::from).collect(),
            refused: None,
        };
        tracing::info!(
            cases = plan.cases.len(),
            warnings = warnings.len(),
            dir = %plan_dir.display(),
            "the RED agent's TestPlan is read"
        );
        let mut evidence = vec![format!(
            "prpd read your TestPlan: {} case(s), each of which needs a failing test; their \
             specs are in {}",
            plan.cases.len(),
            plan_dir.join(SPECS_DIR).display()
        )];
        evidence.extend(
            warnings
                .iter()
                .map(|warning| format!("TestPlan: {warning}")),
        );
        Ok(evidence)
    }
}
