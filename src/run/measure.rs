//! What prpd measures itself after each iteration, so that gates and breakers never depend on
//! the agent's word (DESIGN §3): the working tree's fingerprint and its test files' blob ids
//! (from the iteration's snapshot), `HEAD`, and runs of the project's own test, lint and
//! complexity commands.
//!
//! Commands go through [`crate::base::process`] like every other child; their logs land in the
//! iteration's directory. With `[qa] junit`, a test run's figures and names come from the JUnit
//! report that run wrote (`qa/junit.rs`), and a run that wrote none has no counts, with the
//! reason in [`TestRun::report_problem`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::process::{self, ProcessError, Spec};
use crate::qa::command::CommandKind;
use crate::qa::discover::Detection;
use crate::qa::failures::FailingTests;
use crate::qa::junit;
use crate::qa::metrics::{self, Metrics};
use crate::qa::runner::EarlierRun;
use crate::run::frozen;
use crate::run::gate::TestCounts;
use crate::run::gate::{Lint, TestRun};
use crate::run::proof::CasesRun;

/// The content of the working tree as a snapshot recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The snapshot's tree id: equal ids are equal trees.
    pub hash: String,
    /// The blob id of every test file, by path relative to the repository.
    pub test_files: BTreeMap<PathBuf, String>,
}

impl Tree {
    /// The tree of a snapshot: its tree id as the fingerprint, and the blob ids of its test
    /// files.
    pub fn from_snapshot(tree_id: &str, files: &BTreeMap<PathBuf, String>) -> Tree {
        Tree {
            hash: tree_id.to_owned(),
            test_files: files
                .iter()
                .filter(|(path, _)| frozen::is_test_file(path))
                .map(|(path, blob)| (path.clone(), blob.clone()))
                .collect(),
        }
    }

    /// Test files that are new or changed compared with `before`.
    pub fn changed_tests(&self, before: &BTreeMap<PathBuf, String>) -> Vec<PathBuf> {
        self.test_files
            .iter()
            .filter(|(path, hash)| before.get(*path) != Some(*hash))
            .map(|(path, _)| path.clone())
            .collect()
    }
}

/// Where and how long measurement commands run.
#[derive(Debug, Clone)]
pub struct Probe<'a> {
    pub repo: &'a Path,
    pub detection: &'a Detection,
    /// Where command logs go.
    pub log_dir: &'a Path,
    pub timeout: Duration,
    pub grace: Duration,
    /// `[qa] junit`: the JUnit report the test command writes, read instead of its console.
    pub junit: Option<&'a str>,
    /// Variables set for every command on top of the measurement environment (the run without
    /// the feature's `PYTHONPATH`).
    pub env: Vec<(String, String)>,
}

/// One run of the test command, as the gates see it.
#[derive(Debug, Clone)]
pub struct TestMeasurement {
    /// The command that ran (or whose earlier run was read).
    pub command: String,
    /// Set when the result is an earlier run's on the same tree: where it came from.
    pub reused: Option<String>,
    pub run: TestRun,
    /// The run as the fail-to-pass proof compares it: counts with skipped tests, and names.
    pub cases: CasesRun,
    pub failing: FailingTests,
    pub tail: String,
    pub log: PathBuf,
}

impl TestMeasurement {
    /// A signature of how the tests fail, equal for the same failure in two iterations.
    pub fn error_signature(&self) -> Option<String> {
        let failed = self.run.exit_code != Some(0)
            || self.run.counts.is_some_and(|counts| counts.failing > 0);
        failed.then(|| {
            let last_lines: Vec<&str> = self.tail.lines().rev().take(5).collect();
            crate::run::breaker::normalise_error(&format!(
                "{} | {}",
                self.failing.summary(),
                last_lines.join(" ")
            ))
        })
    }
}

impl Probe<'_> {
    /// Runs the test command; `label` names the log (`tests-1`, `tests-2`). `earlier` is a run
    /// of the same tree, whose log is read instead when it ran the same command.
    pub async fn tests(
        &self,
        label: &str,
        earlier: Option<&EarlierRun>,
    ) -> Result<Option<TestMeasurement>, ProcessError> {
        let Some(command) = self.detection.command(CommandKind::Test) else {
            return Ok(None);
        };
        let reused = earlier
            .filter(|run| run.command == command)
            .and_then(|run| Some((run.outcome()?, run.note())));
        let (outcome, mut metrics, reused, report) = if let Some((outcome, note)) = reused {
            let metrics = metrics::parse_log(&outcome.log_path).unwrap_or_default();
            tracing::info!(%note, "test result reused");
            let report = (self.junit).map(|pattern| junit::read_kept(pattern, &outcome.log_path));
            (outcome, metrics, Some(note), report)
        } else {
            let watch = (self.junit).map(|pattern| junit::Watch::start(self.repo, pattern));
            let (outcome, metrics) = self.run(command, label).await?;
            let report = watch.map(|watch| watch.finish(&outcome.log_path));
            (outcome, metrics, None, report)
        };
        let from_console = FailingTests::named(metrics.test_cases());
        let report_problem = match report {
            Some(Ok(report)) => {
                tracing::info!(note = %report.note, "test figures read from the JUnit report");
                metrics.replace_tests(report.metrics);
                None
            }
            Some(Err(problem)) => {
                metrics.drop_tests();
                Some(problem.to_string())
            }
            None => None,
        };
        let counts = match (metrics.count("tests_passed"), metrics.count("tests_failed")) {
            (None, None) => None,
            (passing, failing) => Some(TestCounts {
                passing: passing.unwrap_or(0),
                failing: failing.unwrap_or(0),
            }),
        };
        Ok(Some(TestMeasurement {
            command: command.to_owned(),
            reused,
            cases: CasesRun::from_metrics(outcome.exit_code(), &metrics).relative_to(self.repo),
            failing: match report_problem {
                None => FailingTests::named(metrics.test_cases()),
                Some(_) => from_console,
            },
            run: TestRun {
                exit_code: outcome.exit_code(),
                counts,
                report_problem,
            },
            tail: outcome.tail,
            log: outcome.log_path,
        }))
    }

    /// Runs the lint command and counts its errors.
    pub async fn lint(&self) -> Result<Lint, ProcessError> {
        let Some(command) = self.detection.command(CommandKind::Lint) else {
            return Ok(Lint::NotConfigured);
        };
        let (outcome, metrics) = self.run(command, "lint").await?;
        Ok(Lint::Ran {
            exit_code: outcome.exit_code(),
            errors: metrics.count("lint_errors"),
        })
    }

    /// The maximum complexity the complexity command reports, when it reports one.
    pub async fn complexity(&self) -> Result<Option<u32>, ProcessError> {
        let Some(command) = self.detection.command(CommandKind::Complexity) else {
            return Ok(None);
        };
        let (_, metrics) = self.run(command, "complexity").await?;
        Ok(metrics.count("max_complexity"))
    }

    async fn run(
        &self,
        command: &str,
        label: &str,
    ) -> Result<(process::Outcome, Metrics), ProcessError> {
        let mut spec = Spec::measurement(
            command,
            self.repo,
            &self.log_dir.join(format!("{label}.log")),
        );
        spec.timeout = self.timeout;
        spec.grace = self.grace;
        spec.env.extend(self.env.iter().cloned());
        let outcome = process::run(spec).await?;
        let metrics = metrics::parse_log(&outcome.log_path).unwrap_or_default();
        Ok((outcome, metrics))
    }
}

/// `HEAD` of the repository, or `none` before the first commit.
pub async fn head(repo: &Path, log_dir: &Path) -> Result<String, ProcessError> {
    let spec = Spec::argv(
        vec!["git".to_owned(), "rev-parse".to_owned(), "HEAD".to_owned()],
        repo,
        &log_dir.join("git-head.log"),
    );
    let outcome = process::run(spec).await?;
    Ok(if outcome.success() {
        outcome.tail.trim().to_owned()
    } else {
        "none".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_tree_keeps_the_test_files_and_finds_new_ones() {
        let files = |entries: &[(&str, &str)]| -> BTreeMap<PathBuf, String> {
            entries
                .iter()
                .map(|(path, blob)| (PathBuf::from(path), (*blob).to_owned()))
                .collect()
        };
        let before = Tree::from_snapshot("t1", &files(&[("src.js", "a"), ("test/a.test.js", "t")]));
        assert_eq!(
            before.test_files.keys().collect::<Vec<_>>(),
            vec![&PathBuf::from("test/a.test.js")]
        );
        let after = Tree::from_snapshot(
            "t2",
            &files(&[
                ("src.js", "b"),
                ("test/a.test.js", "t"),
                ("test/b.test.js", "u"),
            ]),
        );
        assert_eq!(
            after.changed_tests(&before.test_files),
            vec![PathBuf::from("test/b.test.js")]
        );
    }
}
