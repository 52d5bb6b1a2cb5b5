//! What prpd measures itself after each iteration, so that gates and breakers never depend on
//! the agent's word (DESIGN §3): the working tree's fingerprint and its test files' blob ids
//! (from the iteration's snapshot), `HEAD`, and runs of the project's own test, lint and
//! complexity commands.
//!
//! Commands go through [`prpd_base::process`] like every other child; their logs land in the
//! iteration's directory. With `[qa] junit`, a test run's figures and names come from the JUnit
//! report that run wrote (`prpd-qa/src/junit.rs`), and a run that wrote none has no counts, with the
//! reason in [`TestRun::report_problem`].
//!
//! A discovered command is judged again right before it runs ([`discover::judge_now`]): the
//! files behind `make test` or `npm run lint` are the agent's to write, and a recipe that now
//! rewrites the tree, publishes or starts containers is not run; its run fails with the reason
//! as its output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::frozen;
use crate::gate::TestCounts;
use crate::gate::{Lint, TestRun};
use crate::proof::CasesRun;
use prpd_base::process::{self, ProcessError, Spec, Termination};
use prpd_qa::command::CommandKind;
use prpd_qa::discover::{self, Detection};
use prpd_qa::failures::FailingTests;
use prpd_qa::junit;
use prpd_qa::metrics::{self, Metrics};
use prpd_qa::missing_tool;
use prpd_qa::runner::EarlierRun;
use prpd_qa::test_names;

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
    /// A signature of how the tests fail, equal for the same failure in two iterations. Known
    /// `flaky` tests never make one: a run that failed only on them has none, and a run in
    /// which one ran is signed by the other failing tests' names alone (the output's last
    /// lines count the flaky test's failure, so they would differ with its luck).
    pub fn error_signature(&self, flaky: &BTreeSet<String>) -> Option<String> {
        let failed = self.run.exit_code != Some(0)
            || self.run.counts.is_some_and(|counts| counts.failing > 0);
        if !failed {
            return None;
        }
        if self.cases.cases.keys().any(|name| flaky.contains(name)) {
            if crate::flaky::only_known_failures(&self.cases, flaky).is_some() {
                return None;
            }
            let others: Vec<&str> = self
                .failing
                .names
                .iter()
                .filter(|name| !flaky.contains(*name))
                .map(String::as_str)
                .collect();
            return Some(crate::breaker::normalise_error(&format!(
                "{} and {} more",
                others.join(", "),
                self.failing.more
            )));
        }
        let last_lines: Vec<&str> = self.tail.lines().rev().take(5).collect();
        Some(crate::breaker::normalise_error(&format!(
            "{} | {}",
            self.failing.summary(),
            last_lines.join(" ")
        )))
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
            let (outcome, metrics, _) = self.run(CommandKind::Test, command, label).await?;
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

    /// Runs the lint command and counts its errors. Its tool missing is judged as QA judges it
    /// ([`missing_tool`]): prpd's guessed default does not apply, the project's own fails.
    pub async fn lint(&self) -> Result<Lint, ProcessError> {
        let Some(command) = self.detection.command(CommandKind::Lint) else {
            return Ok(Lint::NotConfigured);
        };
        Ok(
            match self
                .run_unless_missing(CommandKind::Lint, command, "lint")
                .await?
            {
                Ran::Done(outcome, metrics) => Lint::Ran {
                    exit_code: outcome.exit_code(),
                    errors: metrics.count("lint_errors"),
                },
                Ran::ToolMissing {
                    reason,
                    guessed: true,
                } => Lint::Skipped { reason },
                Ran::ToolMissing {
                    reason,
                    guessed: false,
                } => Lint::ToolMissing { reason },
            },
        )
    }

    /// The maximum complexity the complexity command reports, when it reports one (never
    /// when its tool is missing).
    pub async fn complexity(&self) -> Result<Option<u32>, ProcessError> {
        let Some(command) = self.detection.command(CommandKind::Complexity) else {
            return Ok(None);
        };
        Ok(
            match self
                .run_unless_missing(CommandKind::Complexity, command, "complexity")
                .await?
            {
                Ran::Done(_, metrics) => metrics.count("max_complexity"),
                Ran::ToolMissing { .. } => None,
            },
        )
    }

    /// Runs `command`, the discovered command of `kind`, unless its tool is missing: a tool
    /// run through a package manager's exec is looked for before (npx would ask the registry),
    /// any other is known missing by how it failed. The reason goes into the log.
    async fn run_unless_missing(
        &self,
        kind: CommandKind,
        command: &str,
        label: &str,
    ) -> Result<Ran, ProcessError> {
        let discovered = self.detection.commands.get(&kind).and_then(Option::as_ref);
        let guessed = discovered.is_some_and(|discovered| discovered.fallback);
        let source = discovered.map(|discovered| discovered.source.as_str());
        let reason = |what: &str| {
            if guessed {
                missing_tool::guessed_tool_missing(what, source)
            } else {
                missing_tool::declared_tool_missing(what, source)
            }
        };
        let log_path = self.log_dir.join(format!("{label}.log"));
        if let Some(tool) = missing_tool::uninstalled_npx_tool(command, self.repo) {
            let reason = reason(&missing_tool::not_installed(&tool));
            tracing::info!(%reason, "{label} not run");
            write_log(
                &log_path,
                &format!("prpd did not run `{command}`: {reason}\n"),
            )?;
            return Ok(Ran::ToolMissing { reason, guessed });
        }
        let (outcome, metrics, ran) = self.run(kind, command, label).await?;
        let could_not_run = outcome
            .exit_code()
            .filter(|_| ran)
            .and_then(|code| missing_tool::could_not_run(command, code, &outcome.tail));
        if let Some(what) = could_not_run {
            let reason = reason(&what);
            tracing::info!(%reason, log = %outcome.log_path.display(), "{label} could not run");
            return Ok(Ran::ToolMissing { reason, guessed });
        }
        Ok(Ran::Done(outcome, metrics))
    }

    /// Runs `command`, the discovered command of `kind`, unless it is refused now; the flag
    /// says whether it ran (a refused command's outcome is exit 126 with the reason as output).
    async fn run(
        &self,
        kind: CommandKind,
        command: &str,
        label: &str,
    ) -> Result<(process::Outcome, Metrics, bool), ProcessError> {
        let log_path = self.log_dir.join(format!("{label}.log"));
        if let Some(outcome) = self.refused_now(kind, &log_path)? {
            return Ok((outcome, Metrics::default(), false));
        }
        let mut spec = Spec::measurement(command, self.repo, &log_path);
        spec.timeout = self.timeout;
        spec.grace = self.grace;
        spec.env.extend(self.env.iter().cloned());
        if kind == CommandKind::Test {
            spec.env.extend(test_names::naming_env());
        }
        let outcome = process::run(spec).await?;
        let metrics = metrics::parse_log(&outcome.log_path).unwrap_or_default();
        Ok((outcome, metrics, true))
    }
}

/// How a lint or complexity command fared.
enum Ran {
    /// It ran (or was refused now, exit 126 with the reason as output).
    Done(process::Outcome, Metrics),
    /// Its tool is not installed; `guessed`: the command is prpd's default, so it does not
    /// apply.
    ToolMissing { reason: String, guessed: bool },
}

/// Writes `text` as the log at `log_path`: what prpd did instead of running a command.
fn write_log(log_path: &Path, text: &str) -> Result<(), ProcessError> {
    if let Some(parent) = log_path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ProcessError::LogDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(log_path, text).map_err(|source| ProcessError::LogFile {
        path: log_path.to_path_buf(),
        source,
    })
}

impl Probe<'_> {
    /// When the discovered command of `kind` now runs what a measurement may not: an outcome
    /// that was never run, exit 126 (the shell's "cannot execute"), whose log says why.
    fn refused_now(
        &self,
        kind: CommandKind,
        log_path: &Path,
    ) -> Result<Option<process::Outcome>, ProcessError> {
        let Some(discovered) = self.detection.commands.get(&kind).and_then(Option::as_ref) else {
            return Ok(None);
        };
        let Err(reason) = discover::judge_now(self.repo, discovered) else {
            return Ok(None);
        };
        let tail = format!(
            "prpd did not run `{}`: read again before it ran ({}), it {reason}; a measurement must not change the tree, publish or start containers",
            discovered.command, discovered.source
        );
        tracing::warn!(%tail, "refusing a discovered command");
        write_log(log_path, &format!("{tail}\n"))?;
        Ok(Some(process::Outcome {
            termination: Termination::Exited(126),
            output_bytes: u64::try_from(tail.len()).unwrap_or(u64::MAX),
            tail,
            duration: Duration::ZERO,
            log_truncated: false,
            log_path: log_path.to_path_buf(),
        }))
    }
}

/// The commit `HEAD` of the repository names, or `none` before the first commit (or when git
/// cannot tell).
pub fn head(repo: &Path) -> String {
    git2::Repository::open(repo)
        .and_then(|repository| {
            repository
                .head()?
                .peel_to_commit()
                .map(|commit| commit.id())
        })
        .map_or_else(|_| "none".to_owned(), |id| id.to_string())
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

    #[test]
    fn a_known_flaky_test_never_makes_an_error_signature() {
        use prpd_qa::metrics::Outcome::{Failed, Passed};
        let measured = |cases: &[(&str, prpd_qa::metrics::Outcome)]| {
            let cases = crate::proof::tests::run(1, cases);
            let failing: Vec<String> = cases
                .cases
                .iter()
                .filter(|(_, outcome)| **outcome == Failed)
                .map(|(name, _)| name.clone())
                .collect();
            TestMeasurement {
                command: "npm test".to_owned(),
                reused: None,
                run: TestRun {
                    exit_code: Some(1),
                    counts: Some(TestCounts {
                        passing: 1,
                        failing: u32::try_from(failing.len()).expect("few"),
                    }),
                    report_problem: None,
                },
                cases,
                failing: FailingTests {
                    names: failing,
                    more: 0,
                },
                tail: "# fail 1 at 12:00:01".to_owned(),
                log: PathBuf::from("tests.log"),
            }
        };
        let flaky: BTreeSet<String> = ["clock".to_owned()].into_iter().collect();
        let only_flaky = measured(&[("clock", Failed), ("add", Passed)]);
        assert_eq!(only_flaky.error_signature(&flaky), None);
        assert!(only_flaky.error_signature(&BTreeSet::new()).is_some());
        let both = measured(&[("clock", Failed), ("add", Failed), ("sub", Passed)]);
        let real = measured(&[("add", Failed), ("sub", Passed)]);
        assert_eq!(
            both.error_signature(&flaky),
            measured(&[("add", Failed), ("clock", Passed), ("sub", Passed)])
                .error_signature(&flaky),
            "the flaky test's outcome does not change the signature"
        );
        assert!(real.error_signature(&flaky).is_some());
    }

    #[tokio::test]
    async fn a_lint_recipe_that_changed_into_a_fix_is_not_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = dir.path();
        std::fs::write(repo.join("Makefile"), "lint:\n\ttouch linted\n").expect("Makefile");
        let detection =
            prpd_qa::discover::detect(repo, &prpd_qa::tools_mapping::ToolsMapping::builtin())
                .expect("detects");
        let logs = tempfile::tempdir().expect("log dir");
        let probe = Probe {
            repo,
            detection: &detection,
            log_dir: logs.path(),
            timeout: Duration::from_secs(30),
            grace: Duration::from_secs(1),
            junit: None,
            env: Vec::new(),
        };
        assert_eq!(
            probe.lint().await.expect("runs"),
            Lint::Ran {
                exit_code: Some(0),
                errors: None
            }
        );
        std::fs::remove_file(repo.join("linted")).expect("the recipe ran");
        std::fs::write(
            repo.join("Makefile"),
            "lint:\n\ttouch linted\n\teslint --fix .\n",
        )
        .expect("Makefile");
        assert_eq!(
            probe.lint().await.expect("refused, not failed"),
            Lint::Ran {
                exit_code: Some(126),
                errors: None
            }
        );
        assert!(!repo.join("linted").exists(), "the recipe did not run");
        let log = std::fs::read_to_string(logs.path().join("lint.log")).expect("the log");
        assert!(
            log.starts_with("prpd did not run `make lint`: read again before it ran (Makefile target lint), it rewrites files (`--fix`)"),
            "{log}"
        );
    }

    /// A repository (its files) and how its lint ends: name, files, the start expected.
    type LintCase = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    );

    /// A lint command whose tool is not installed: prpd's guessed default does not apply (npx's
    /// tool is looked for before running, any other is known by its exit), the project's own
    /// still fails.
    #[tokio::test]
    async fn a_missing_linter_is_skipped_when_guessed_and_fails_when_declared() {
        let cases: [LintCase; 3] = [
            (
                "npm package without a lint script: `npx --no eslint .`",
                &[(
                    "package.json",
                    "{\"name\": \"numkit\", \"scripts\": {\"test\": \"node --test\"}}\n",
                )],
                "skipped: the tool is missing: `eslint` is neither in node_modules/.bin nor on PATH",
            ),
            (
                "Go module: `golangci-lint run`",
                &[("go.mod", "module example.com/numkit\n\ngo 1.19\n")],
                "skipped: the tool is missing: `golangci-lint run` could not run its program (exit 127",
            ),
            (
                "a lint script the project declares",
                &[(
                    "package.json",
                    "{\"name\": \"numkit\", \"scripts\": {\"test\": \"node --test\", \"lint\": \"prpd-test-linter-on-no-path .\"}}\n",
                )],
                "missing: the tool is missing: `npm run lint` could not run its program (exit 127",
            ),
        ];
        for (name, files, expected) in cases {
            let dir = tempfile::tempdir().expect("temp dir");
            let repo = dir.path();
            for (path, text) in files {
                std::fs::write(repo.join(path), text).expect("fixture file");
            }
            let detection =
                prpd_qa::discover::detect(repo, &prpd_qa::tools_mapping::ToolsMapping::builtin())
                    .expect("detects");
            let logs = tempfile::tempdir().expect("log dir");
            let probe = Probe {
                repo,
                detection: &detection,
                log_dir: logs.path(),
                timeout: Duration::from_secs(60),
                grace: Duration::from_secs(1),
                junit: None,
                env: Vec::new(),
            };
            let found = match probe.lint().await.expect("runs") {
                Lint::Skipped { reason } => format!("skipped: {reason}"),
                Lint::ToolMissing { reason } => format!("missing: {reason}"),
                other => format!("{other:?}"),
            };
            assert!(found.starts_with(expected), "{name}: {found}");
            let log = std::fs::read_to_string(logs.path().join("lint.log")).expect("the log");
            assert!(!log.is_empty(), "{name}: the log says what happened");
        }
    }
}
