//! The driver's side of the fail-to-pass proof (`run/proof.rs` judges): the tree without the
//! feature — the run's base snapshot with the frozen test harness laid over it — checked out
//! into a temporary directory of its own, the test command run there once per such tree, and
//! the proof as GREEN's gate and QA's `F2P` check see it.

use std::path::{Path, PathBuf};

use crate::qa::checklist::Category;
use crate::qa::command::CommandKind;
use crate::qa::discover::Detection;
use crate::qa::runner::{CheckResult, CheckStatus};
use crate::run::frozen::Family;
use crate::run::measure::Probe;
use crate::run::proof::{self, CasesRun, Proof, WithoutFeature};

use super::{DriveError, Driver};

/// Folders of installed dependencies that git ignores; the checkout without the feature links
/// to the working tree's, so the tests can import what the project installed.
const DEPENDENCY_FOLDERS: &[&str] = &["node_modules", ".venv", "venv"];

/// The id of QA's built-in check.
pub(super) const CHECK_ID: &str = "F2P";

impl Driver {
    /// The test command's run on the tree without the feature, from the record when that tree
    /// was measured already. `None` before the harness is frozen (before the end of RED) or
    /// when the project has no test command.
    pub(super) async fn without_feature(
        &mut self,
        detection: &Detection,
        log_dir: &Path,
    ) -> Result<Option<WithoutFeature>, DriveError> {
        let (Some(base), Some(harness)) = (
            self.record.snapshots.base.clone(),
            self.record.freeze.frozen_at.get(&Family::Harness).cloned(),
        ) else {
            return Ok(None);
        };
        let paths: Vec<PathBuf> = self
            .record
            .freeze
            .entries
            .iter()
            .filter(|(_, (family, _))| *family == Family::Harness)
            .map(|(path, _)| path.clone())
            .collect();
        let Some(command) = detection.command(CommandKind::Test) else {
            return Ok(None);
        };
        let snapshots = self.snapshots()?;
        let tree = snapshots.overlay(&base, &harness, &paths, "without-feature")?;
        let key = self.cache_key(&tree.tree, command);
        if let Some(cached) = &self.record.without_feature
            && cached.key == key
        {
            return Ok(Some(cached.clone()));
        }
        let checkout = tempfile::Builder::new()
            .prefix("prpd-without-feature-")
            .tempdir()
            .map_err(|source| DriveError::Write {
                path: std::env::temp_dir(),
                source,
            })?;
        snapshots.export(&tree, checkout.path())?;
        link_dependencies(&self.context.repo, checkout.path());
        let probe = Probe {
            repo: checkout.path(),
            detection,
            log_dir,
            timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            junit: self.context.config.qa.junit.as_deref(),
        };
        let Some(tests) = probe.tests("tests-without-feature", None).await? else {
            return Ok(None);
        };
        let without = WithoutFeature {
            key,
            run: tests.cases,
            log: tests.log,
        };
        self.record.without_feature = Some(without.clone());
        Ok(Some(without))
    }

    /// The proof for the tree whose test run was `with`; `None` when there is nothing to
    /// compare with (no harness frozen, no test command).
    pub(super) async fn prove(
        &mut self,
        detection: &Detection,
        log_dir: &Path,
        with: &CasesRun,
    ) -> Result<Option<(Proof, PathBuf)>, DriveError> {
        let Some(without) = self.without_feature(detection, log_dir).await? else {
            return Ok(None);
        };
        Ok(Some((proof::judge(&without.run, with), without.log)))
    }

    /// QA's `F2P` check: the proof for the tree the checklist just measured, judged on the
    /// checklist's own test run when it has one.
    pub(super) async fn proof_check(
        &mut self,
        detection: &Detection,
        log_dir: &Path,
        checks: &[CheckResult],
    ) -> Result<CheckResult, DriveError> {
        let test_command = detection.command(CommandKind::Test);
        let from_checklist = checks
            .iter()
            .find(|check| check.command.is_some() && check.command.as_deref() == test_command);
        let with = match from_checklist {
            Some(check) => CasesRun::from_metrics(check.exit_code, &check.metrics)
                .relative_to(&self.context.repo),
            None => match self
                .probe(detection, log_dir)
                .tests("tests-with-feature", None)
                .await?
            {
                Some(tests) => tests.cases,
                None => CasesRun::default(),
            },
        };
        let proof = self.prove(detection, log_dir, &with).await?;
        Ok(proof_result(proof))
    }
}

/// The `F2P` check's result. Without a proof (no test command, nothing frozen) it fails:
/// QA does not approve what it could not prove.
fn proof_result(proof: Option<(Proof, PathBuf)>) -> CheckResult {
    let (status, detail, log) = match proof {
        Some((proof, log)) => {
            let status = if proof.holds() {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
            (status, proof.summary(), Some(log))
        }
        None => (
            CheckStatus::Fail,
            "could not prove the tests test the feature: no test command, or no test harness frozen at the end of RED"
                .to_owned(),
            None,
        ),
    };
    CheckResult {
        id: CHECK_ID.to_owned(),
        category: Category::Functionality.to_string(),
        criterion: "The tests fail without the feature and pass with it (fail-to-pass)".to_owned(),
        blocking: true,
        status,
        command: None,
        source: Some("prpd: the run's base with the frozen tests, then the final tree".to_owned()),
        exit_code: None,
        duration_ms: 0,
        metrics: crate::qa::metrics::Metrics::default(),
        detail,
        failing_tests: Vec::new(),
        output_tail: String::new(),
        log,
        reused_from: None,
    }
}

/// Links each dependency folder of `repo` into `checkout`, where the checkout has none.
/// Best effort: a project without them needs none, and a failed link shows up as the test
/// run's own import error.
fn link_dependencies(repo: &Path, checkout: &Path) {
    for folder in DEPENDENCY_FOLDERS {
        let source = repo.join(folder);
        let target = checkout.join(folder);
        if source.is_dir() && !target.exists() {
            let _ = std::os::unix::fs::symlink(&source, &target);
        }
    }
}
