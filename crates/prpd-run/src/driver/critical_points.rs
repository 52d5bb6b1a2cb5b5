//! The run's critical points (DESIGN §10): the PRP's success criteria, CP1..CPn, written to
//! `critical-points.json` in the run's folder when the run starts, and judged at each QA
//! against what prpd measured — its checks, the tests they named, the files and lines the run
//! changed (`prpd-protocols/src/critical_points/in_run.rs`). A failed point is a blocking check, so it
//! keeps the work from APPROVE; the report shows the table point by point.

use std::path::PathBuf;

use crate::snapshot::Change;
use prpd_protocols::critical_points::from_prp::{self, RunPoint};
use prpd_protocols::critical_points::in_run::{self, FileChange};
use prpd_protocols::critical_points::plan::Plan;
use prpd_protocols::critical_points::{table, verdict};
use prpd_qa::runner::{QaOutcome, ReportSection};

use super::{DriveError, Driver, write_json};

/// At most this many lines of the run's diff are read as evidence.
const MAX_PATCH_LINES: usize = 50_000;

impl Driver {
    /// The PRP's success criteria as the run's points, and the plan that lists them.
    fn critical_points(&self) -> (Plan, Vec<RunPoint>) {
        let points = from_prp::points(&self.context.prp);
        let plan = Plan {
            plan_id: self.record.run_id.clone(),
            task: self.context.prp.title.clone(),
            kind: None,
            critical_points: points.iter().map(|point| point.point.clone()).collect(),
            created_at: String::new(),
            expires_at: String::new(),
            persisted_to: None,
        };
        (plan, points)
    }

    /// Writes `critical-points.json` in the run's folder: the points with the hints they are
    /// judged by, as they stand when the run starts.
    pub(super) fn write_critical_points(&self) -> Result<(), DriveError> {
        let (plan, points) = self.critical_points();
        let hints: Vec<&Vec<String>> = points.iter().map(|point| &point.hints).collect();
        let document = serde_json::json!({
            "task": plan.task,
            "prp": self.record.prp,
            "critical_points": plan.critical_points,
            "hints": hints,
        });
        write_json(&self.run_dir().join("critical-points.json"), &document)
    }

    /// Judges the points against `outcome` and the run's changes; adds the `critical_points`
    /// check and the report's table. A PRP without success criteria adds nothing.
    pub(super) fn judge_critical_points(&self, outcome: &mut QaOutcome) -> Result<(), DriveError> {
        let (plan, points) = self.critical_points();
        if points.is_empty() {
            return Ok(());
        }
        let mut rows = in_run::evidence_from_checks(&outcome.checks);
        rows.extend(self.change_evidence()?);
        let hints: Vec<Vec<String>> = points.into_iter().map(|point| point.hints).collect();
        let verdict = verdict::judge_with_hints(&plan, &hints, &rows);
        outcome.sections.push(ReportSection {
            title: "Critical Points".to_owned(),
            markdown: format!(
                "The PRP's success criteria, each judged against prpd's own measurements.\n\n{}",
                table::markdown(&verdict)
            ),
        });
        outcome.add_check(in_run::check_result(&verdict));
        Ok(())
    }

    /// The files the run changed since its base and the lines it added, as evidence rows.
    fn change_evidence(
        &self,
    ) -> Result<Vec<prpd_protocols::critical_points::Evidence>, DriveError> {
        let (Some(base), Some(last)) = (&self.record.snapshots.base, &self.record.snapshots.last)
        else {
            return Ok(Vec::new());
        };
        let snapshots = self.snapshots()?;
        let changes: Vec<(PathBuf, FileChange)> = snapshots
            .changes(base, last)?
            .into_iter()
            .map(|(path, change)| {
                let change = match change {
                    Change::Added => FileChange::Added,
                    Change::Modified => FileChange::Modified,
                    Change::Deleted => FileChange::Deleted,
                };
                (path, change)
            })
            .collect();
        let patch = snapshots.patch(base, last)?;
        let patch: String = patch
            .lines()
            .take(MAX_PATCH_LINES)
            .flat_map(|line| [line, "\n"])
            .collect();
        Ok(in_run::evidence_from_changes(
            &changes,
            &patch,
            &self.record.prp,
        ))
    }
}
