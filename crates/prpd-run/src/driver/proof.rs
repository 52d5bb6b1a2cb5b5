//! The driver's side of the fail-to-pass proof (`proof.rs` judges): the tree without the
//! feature — the run's base snapshot with the frozen test harness laid over it — checked out
//! twice into fresh temporary directories, the test command run once in each (per such tree:
//! the result is kept), and the proof as GREEN's gate and QA's `F2P` check see it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::frozen::{self, Family, Freeze, Frozen};
use crate::measure::Probe;
use crate::proof::{self, CasesRun, Proof, TestFiles, WithoutFeature};
use prpd_qa::checklist::Category;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::runner::{CheckResult, CheckStatus};

use super::{DriveError, Driver, dependencies};

/// The id of QA's built-in check.
pub(super) const CHECK_ID: &str = "F2P";

impl Driver {
    /// The test command's run on the tree without the feature, from the record when that tree
    /// was measured already, with the harness's test files (RED's apart). `None` before the
    /// harness is frozen (before the end of RED) or when the project has no test command.
    pub(super) async fn without_feature(
        &mut self,
        detection: &Detection,
        log_dir: &Path,
    ) -> Result<Option<(WithoutFeature, TestFiles)>, DriveError> {
        let (Some(base), Some(harness)) = (
            self.record.snapshots.base.clone(),
            self.record.freeze.frozen_at.get(&Family::Harness).cloned(),
        ) else {
            return Ok(None);
        };
        let Some(command) = detection.command(CommandKind::Test) else {
            return Ok(None);
        };
        let snapshots = self.snapshots()?;
        let (paths, files) = harness_layout(&self.record.freeze, &snapshots.files(&base)?);
        let tree = snapshots.overlay(&base, &harness, &paths, "without-feature")?;
        let key = self.cache_key(&tree.tree, command);
        if let Some(cached) = &self.record.without_feature
            && cached.key == key
            && cached.run.could_not_run().is_none()
        {
            return Ok(Some((cached.clone(), files)));
        }
        let (checkout, env) = self.fresh_checkout(&snapshots, &tree, None)?;
        let probe = Probe {
            repo: checkout.path(),
            detection,
            log_dir,
            timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            junit: self.context.config.qa.junit.as_deref(),
            env,
        };
        let Some(first) = without_feature_run(&probe, "tests-without-feature").await? else {
            return Ok(None);
        };
        // The second run gets a fresh checkout of the same tree: whatever the first run wrote
        // into its checkout cannot decide the second. It builds into the first one's target.
        let (again, env) = self.fresh_checkout(&snapshots, &tree, Some(checkout.path()))?;
        let probe = Probe {
            repo: again.path(),
            env,
            ..probe
        };
        let Some(second) = without_feature_run(&probe, "tests-without-feature-again").await? else {
            return Ok(None);
        };
        let without = WithoutFeature::from_two_runs(key, first, second);
        if !without.flaky.is_empty() {
            let names: BTreeSet<String> = without.flaky.clone();
            self.record.flaky.note(&names, &tree.tree, None);
            tracing::warn!(tests = ?names, "flaky without the feature: failed and passed on the same tree");
        }
        // A run that could not run proves nothing, now or later: it is judged (and fails the
        // proof, naming its log) but never kept, so the next proof runs it again.
        if let Some(why) = without.run.could_not_run() {
            tracing::warn!(%why, log = %without.log.display(), "the test run without the feature could not run");
        } else {
            self.record.without_feature = Some(without.clone());
        }
        Ok(Some((without, files)))
    }

    /// A new temporary checkout of `tree` with the dependencies it borrows from the run's
    /// tree, and the environment of a test run there. A Rust checkout builds in a target folder
    /// of its own (sharing the run's would mix two trees of one crate in one build cache):
    /// `target_of`'s, else its own.
    fn fresh_checkout(
        &self,
        snapshots: &crate::snapshot::Snapshots,
        tree: &crate::snapshot::Snapshot,
        target_of: Option<&Path>,
    ) -> Result<(tempfile::TempDir, Vec<(String, String)>), DriveError> {
        let checkout = tempfile::Builder::new()
            .prefix("prpd-without-feature-")
            .tempdir()
            .map_err(|source| DriveError::Write {
                path: std::env::temp_dir(),
                source,
            })?;
        snapshots.export(tree, checkout.path())?;
        let borrowed = dependencies::borrow(&self.context.repo, checkout.path());
        for redirected in &borrowed.redirected {
            tracing::info!(%redirected, "the checkout without the feature");
        }
        let mut env = borrowed.env;
        env.push((
            "CARGO_TARGET_DIR".to_owned(),
            target_of
                .unwrap_or(checkout.path())
                .join("target")
                .display()
                .to_string(),
        ));
        Ok((checkout, env))
    }

    /// The proof for the tree whose test run was `with`; `None` when there is nothing to
    /// compare with (no harness frozen, no test command).
    pub(super) async fn prove(
        &mut self,
        detection: &Detection,
        log_dir: &Path,
        with: &CasesRun,
    ) -> Result<Option<(Proof, PathBuf)>, DriveError> {
        let Some((without, files)) = self.without_feature(detection, log_dir).await? else {
            return Ok(None);
        };
        let flaky = self.known_flaky();
        let flipped = self.record.flaky.flipped_with_feature();
        Ok(Some((
            proof::judge(&without, with, &files, &flaky, &flipped),
            without.log,
        )))
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

/// One run of the test command on the tree without the feature, as `probe` makes it: its
/// cases (with the line that says the tests did not build, when they did not) and its log.
async fn without_feature_run(
    probe: &Probe<'_>,
    label: &str,
) -> Result<Option<(CasesRun, PathBuf)>, DriveError> {
    let Some(tests) = probe.tests(label, None).await? else {
        return Ok(None);
    };
    let mut run = tests.cases;
    if run.counts.is_none() && run.cases.is_empty() && run.exit_code.is_some_and(|code| code != 0) {
        let text = std::fs::read(&tests.log).unwrap_or_default();
        run.did_not_build = proof::build_failure(&String::from_utf8_lossy(&text));
    }
    Ok(Some((run, tests.log)))
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
        metrics: prpd_qa::metrics::Metrics::default(),
        detail,
        failing_tests: Vec::new(),
        output_tail: String::new(),
        log,
        reused_from: None,
    }
}

/// What the tree without the feature takes from the frozen harness, given the files of the
/// run's base: every harness file (and every harness file of the base that the harness no
/// longer has, so that a test file RED deleted or renamed is gone there too), and the harness's
/// test files, split into those RED added or changed (they differ from the base) and the
/// others.
fn harness_layout(
    freeze: &Freeze,
    at_base: &BTreeMap<PathBuf, String>,
) -> (Vec<PathBuf>, TestFiles) {
    let mut paths = Vec::new();
    let mut files = TestFiles::default();
    for (path, (family, frozen)) in &freeze.entries {
        if *family != Family::Harness {
            continue;
        }
        paths.push(path.clone());
        if let Frozen::Whole { blob } = frozen
            && frozen::is_test_file(path)
        {
            if at_base.get(path) == Some(blob) {
                files.other.insert(path.clone());
            } else {
                files.red.insert(path.clone());
            }
        }
    }
    paths.extend(
        at_base
            .keys()
            .filter(|path| frozen::is_harness_file(path) && !freeze.entries.contains_key(*path))
            .cloned(),
    );
    (paths, files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Snapshot;

    #[test]
    fn the_tree_without_the_feature_loses_the_test_files_red_deleted() {
        let blobs = |entries: &[(&str, &str)]| -> BTreeMap<PathBuf, String> {
            entries
                .iter()
                .map(|(path, blob)| (PathBuf::from(path), (*blob).to_owned()))
                .collect()
        };
        let at_base = blobs(&[
            ("calc.py", "c0"),
            ("tests/test_calc.py", "t0"),
            ("tests/test_old.py", "o0"),
        ]);
        let at_red_end = blobs(&[
            ("calc.py", "c0"),
            ("tests/test_calc.py", "t0"),
            ("tests/test_multiply.py", "m1"),
            ("tests/test_renamed.py", "o0"),
        ]);
        let mut freeze = Freeze::default();
        let snapshot = Snapshot {
            commit: "c".to_owned(),
            tree: "t".to_owned(),
        };
        freeze.harness(&snapshot, &at_red_end, &[], |_| None);
        let (paths, files) = harness_layout(&freeze, &at_base);
        assert!(
            paths.contains(&PathBuf::from("tests/test_old.py")),
            "a test file RED renamed is taken out of the tree without the feature: {paths:?}"
        );
        assert!(!paths.contains(&PathBuf::from("calc.py")), "{paths:?}");
        let names = |set: &std::collections::BTreeSet<PathBuf>| {
            set.iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&files.red),
            ["tests/test_multiply.py", "tests/test_renamed.py"]
        );
        assert_eq!(names(&files.other), ["tests/test_calc.py"]);
    }
}
