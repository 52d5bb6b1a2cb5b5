//! prpd's own measurement of an iteration, phase by phase: the facts gate 1 is decided on,
//! the observation the breaker compares between iterations, and the evidence the next prompt
//! shows. It stands apart because the agent's word moves nothing here: only what prpd ran
//! itself counts.

use std::path::Path;

use crate::breaker::{self, Observation};
use crate::cache::{self, CacheKey};
use crate::frozen::Violation;
use crate::gate::{self, Measured};
use crate::measure::{self, Probe};
use crate::record::CachedTestRun;
use prpd_base::files;
use prpd_base::phase::Phase;
use prpd_qa::checklist::Category;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::metrics::Outcome;
use prpd_qa::runner::{CheckStatus, QaOutcome};
use prpd_qa::runner::{EarlierRun, log_fingerprint};

use super::flaky::TestRunAt;
use super::{DriveError, Driver};

impl Driver {
    /// prpd's own measurement of an iteration of `phase` (gate 1 and the breaker's facts).
    pub(super) async fn measure(
        &mut self,
        phase: Phase,
        detection: &Detection,
        iteration_dir: &Path,
        tree: &measure::Tree,
        qa_outcome: Option<&QaOutcome>,
        mut observation: Observation,
    ) -> Result<Measurement, DriveError> {
        let mut evidence = Vec::new();
        let measured = match phase {
            Phase::Red => {
                let tests = self
                    .measured_tests(phase, detection, iteration_dir, &tree.hash, None)
                    .await?;
                if let Some(tests) = &tests {
                    observation.tests = tests.run.counts;
                    observation.error_signature = observation
                        .error_signature
                        .or_else(|| tests.error_signature(&self.known_flaky()));
                }
                let failing: Vec<&str> = tests.iter().flat_map(failing_names).collect();
                Measured::Red {
                    test_plan: self.record.test_plan.check(&failing),
                    tests: tests.map(|tests| tests.run),
                    changed_test_files: tree.changed_tests(&self.record.baseline.tests_at_start),
                }
            }
            Phase::Green => {
                self.measure_green(
                    detection,
                    iteration_dir,
                    &tree.hash,
                    &mut observation,
                    &mut evidence,
                )
                .await?
            }
            Phase::Refactor => {
                let tests = self
                    .measured_tests(
                        phase,
                        detection,
                        iteration_dir,
                        &tree.hash,
                        Some(&mut evidence),
                    )
                    .await?;
                let probe = self.probe(detection, iteration_dir);
                if let Some(tests) = &tests {
                    observation.tests = tests.run.counts;
                    if tests.run.exit_code != Some(0) {
                        evidence.push(test_evidence(tests));
                    }
                }
                let lint = probe.lint().await?;
                note_lint(&lint, &mut observation, &mut evidence);
                let complexity = probe.complexity().await?;
                observation.max_complexity = complexity;
                Measured::Refactor {
                    tests: tests.map(|tests| tests.run),
                    lint,
                    complexity,
                    complexity_at_green_end: self.record.baseline.complexity_at_green_end,
                }
            }
            Phase::Document => {
                self.measure_document(detection, iteration_dir, &mut observation, &mut evidence)
                    .await?
            }
            Phase::Qa => {
                let blocking = qa_outcome
                    .as_ref()
                    .map(|outcome| blocking_failures(outcome))
                    .unwrap_or_default();
                if let Some(outcome) = &qa_outcome {
                    observation.checks_passing = u32::try_from(outcome.passing()).ok();
                    observation.blocking_failed = u32::try_from(blocking.len()).ok();
                    if !blocking.is_empty() {
                        observation.error_signature =
                            Some(breaker::normalise_error(&blocking.join(" | ")));
                    }
                }
                Measured::Qa {
                    blocking_failed: blocking,
                }
            }
            Phase::Ship => return Err(DriveError::ShipIteration),
        };
        Ok(Measurement {
            measured,
            observation,
            evidence,
            refused: Vec::new(),
        })
    }

    /// GREEN's measurement: two judged test runs, and the fail-to-pass proof once both pass.
    async fn measure_green(
        &mut self,
        detection: &Detection,
        iteration_dir: &Path,
        tree: &str,
        observation: &mut Observation,
        evidence: &mut Vec<String>,
    ) -> Result<Measured, DriveError> {
        let (runs, last) = self
            .green_runs(detection, iteration_dir, tree, observation, evidence)
            .await?;
        self.remember_test_run(Phase::Green, tree, last.as_ref());
        let proof = match last {
            Some(with) if runs.len() >= 2 && runs.iter().all(gate::TestRun::passed) => {
                self.prove(detection, iteration_dir, &with.cases).await?
            }
            _ => None,
        };
        if let Some((proof, log)) = &proof
            && !proof.holds()
        {
            evidence.push(format!(
                "the test run without the feature ({}): {}",
                log.display(),
                proof.summary()
            ));
        }
        Ok(Measured::Green {
            runs,
            tests_at_red_end: self.record.baseline.tests_at_red_end,
            proof: proof.map(|(proof, _)| proof),
        })
    }

    /// DOCUMENT's measurement: the run changed documentation, and the checklist's
    /// documentation checks pass on what it added.
    async fn measure_document(
        &self,
        detection: &Detection,
        iteration_dir: &Path,
        observation: &mut Observation,
        evidence: &mut Vec<String>,
    ) -> Result<Measured, DriveError> {
        let (changed_docs, _) = self.documentation_since_base()?;
        let mut failed = Vec::new();
        if changed_docs.is_empty() {
            failed.push(
                "no documentation changed since the run started: describe the feature \
                 (README, CHANGELOG, docs/ or an ADR)"
                    .to_owned(),
            );
        }
        let documentation = self.context.checklist.only(Category::Documentation);
        if documentation.checks.is_empty() {
            evidence.push(
                "the checklist has no documentation check: nothing to verify beyond the \
                 documentation change itself"
                    .to_owned(),
            );
        } else {
            let outcome = self
                .checklist_run(detection, &documentation, iteration_dir, Vec::new())
                .await?;
            let blocking = blocking_failures(&outcome);
            observation.checks_passing = u32::try_from(outcome.passing()).ok();
            observation.blocking_failed = u32::try_from(blocking.len()).ok();
            failed.extend(blocking);
        }
        Ok(Measured::Document { failed })
    }

    /// One test run on `tree`, read from the last one when that measured the same thing, and
    /// kept for the next measurement. With `evidence` (REFACTOR), a run that failed is run
    /// again on the same tree and judged by the second run (`driver/flaky.rs`); RED's run is
    /// meant to fail, and its tests are held to failing every time by the proof's two runs
    /// without the feature.
    async fn measured_tests(
        &mut self,
        phase: Phase,
        detection: &Detection,
        iteration_dir: &Path,
        tree: &str,
        evidence: Option<&mut Vec<String>>,
    ) -> Result<Option<measure::TestMeasurement>, DriveError> {
        let earlier = self.earlier_run(tree, detection);
        let tests = match evidence {
            Some(evidence) => {
                let at = TestRunAt {
                    phase,
                    detection,
                    log_dir: iteration_dir,
                    label: "tests",
                    tree,
                };
                self.judged_tests(&at, earlier.as_ref(), evidence).await?
            }
            None => {
                self.probe(detection, iteration_dir)
                    .tests("tests", earlier.as_ref())
                    .await?
            }
        };
        self.remember_test_run(phase, tree, tests.as_ref());
        Ok(tests)
    }

    /// What a run of `command` on `tree` would measure now.
    pub(super) fn cache_key(&self, tree: &str, command: &str) -> CacheKey {
        CacheKey {
            tree: tree.to_owned(),
            command: command.to_owned(),
            settings: cache::settings(&self.context.config, &self.record.freeze.prpd_inputs_text()),
        }
    }

    /// The last test run, when it ran the test command on `tree` with the current settings.
    pub(super) fn earlier_run(&self, tree: &str, detection: &Detection) -> Option<EarlierRun> {
        let key = self.cache_key(tree, detection.command(CommandKind::Test)?);
        self.record
            .last_test_run
            .as_ref()
            .and_then(|cached| cached.measured(&key))
            .cloned()
    }

    /// Drops every cached result that was measured with other settings than the current ones
    /// (another configuration, environment or reloaded inputs): it would not stand for a run
    /// made now.
    pub(super) fn drop_stale_caches(&mut self) {
        let settings =
            cache::settings(&self.context.config, &self.record.freeze.prpd_inputs_text());
        if let Some(cached) = &self.record.last_test_run
            && cached.key.settings != settings
        {
            tracing::info!("the last test run was measured with other settings; it is not reused");
            self.record.last_test_run = None;
        }
        if let Some(without) = &self.record.without_feature
            && without.key.settings != settings
        {
            tracing::info!(
                "the run without the feature was measured with other settings; it is measured again"
            );
            self.record.without_feature = None;
        }
    }

    /// Keeps a test run prpd just made on `tree` (not one read back from an earlier run, and
    /// not a killed one) for the next measurement of the same tree.
    pub(super) fn remember_test_run(
        &mut self,
        phase: Phase,
        tree: &str,
        tests: Option<&measure::TestMeasurement>,
    ) {
        let Some(tests) = tests.filter(|tests| tests.reused.is_none()) else {
            return;
        };
        if let Some(exit_code) = tests.run.exit_code {
            self.remember_run(phase, tree, &tests.command, exit_code, &tests.log);
        }
    }

    /// Keeps `command`'s run on `tree`, which exited with `exit_code` and logged to `log`.
    pub(super) fn remember_run(
        &mut self,
        phase: Phase,
        tree: &str,
        command: &str,
        exit_code: i32,
        log: &Path,
    ) {
        // A run whose log cannot be read back cannot be reused; it is simply not kept.
        let Some(fingerprint) = log_fingerprint(log) else {
            self.record.last_test_run = None;
            return;
        };
        self.record.last_test_run = Some(CachedTestRun {
            key: self.cache_key(tree, command),
            run: EarlierRun {
                command: command.to_owned(),
                exit_code,
                log: log.to_path_buf(),
                measured_in: format!("{phase} iteration {}", self.record.iteration + 1),
                fingerprint,
            },
        });
    }

    /// prpd's own measurement commands, run with the QA limits, logging into `log_dir`.
    pub(super) fn probe<'a>(&'a self, detection: &'a Detection, log_dir: &'a Path) -> Probe<'a> {
        Probe {
            repo: &self.context.repo,
            detection,
            log_dir,
            timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            junit: self.context.config.qa.junit.as_deref(),
            env: Vec::new(),
        }
    }
}

impl Driver {
    /// GREEN runs the tests twice (a lucky pass is no pass, so never from an earlier result);
    /// a run that fails is run once more on the same tree and judged by that second run
    /// (`driver/flaky.rs`), and GREEN stops at the first failure. Also returns the last run,
    /// for the fail-to-pass proof.
    async fn green_runs(
        &mut self,
        detection: &Detection,
        iteration_dir: &Path,
        tree: &str,
        observation: &mut Observation,
        evidence: &mut Vec<String>,
    ) -> Result<(Vec<gate::TestRun>, Option<measure::TestMeasurement>), DriveError> {
        let mut runs = Vec::new();
        let mut last = None;
        for label in ["tests-1", "tests-2"] {
            let at = TestRunAt {
                phase: Phase::Green,
                detection,
                log_dir: iteration_dir,
                label,
                tree,
            };
            let Some(tests) = self.judged_tests(&at, None, evidence).await? else {
                break;
            };
            observation.tests = tests.run.counts;
            if observation.error_signature.is_none() {
                observation.error_signature = tests.error_signature(&self.known_flaky());
            }
            let failed = tests.run.exit_code != Some(0);
            if failed {
                evidence.push(test_evidence(&tests));
            }
            runs.push(tests.run.clone());
            last = Some(tests);
            if failed {
                break;
            }
        }
        Ok((runs, last))
    }
}

/// What REFACTOR's lint result adds to the breaker's facts (its error count) and to the
/// feedback (why a guessed linter was not run).
fn note_lint(lint: &gate::Lint, observation: &mut Observation, evidence: &mut Vec<String>) {
    match lint {
        gate::Lint::Ran { errors, .. } => observation.lint_errors = *errors,
        gate::Lint::Skipped { reason } => evidence.push(format!("lint was not run: {reason}")),
        gate::Lint::NotConfigured | gate::Lint::ToolMissing { .. } => {}
    }
}

/// The names of the tests that failed in `tests`, as its output (or JUnit report) gave them.
fn failing_names(tests: &measure::TestMeasurement) -> impl Iterator<Item = &str> {
    tests
        .cases
        .cases
        .iter()
        .filter(|(_, outcome)| **outcome == Outcome::Failed)
        .map(|(name, _)| name.as_str())
}

/// The failures of blocking checks, as `ID: detail`.
fn blocking_failures(outcome: &QaOutcome) -> Vec<String> {
    outcome
        .checks
        .iter()
        .filter(|check| check.status == CheckStatus::Fail)
        .map(|check| format!("{}: {}", check.id, check.detail))
        .collect()
}

fn test_evidence(tests: &measure::TestMeasurement) -> String {
    let names = if tests.failing.names.is_empty() {
        String::new()
    } else {
        format!("failing tests: {}; ", tests.failing.summary())
    };
    format!(
        "{names}last lines of the test output ({}):\n{}",
        tests.log.display(),
        files::last_lines(&tests.tail, 15)
    )
}

/// What prpd measured in one iteration.
pub(super) struct Measurement {
    /// The facts gate 1 is decided on.
    pub(super) measured: Measured,
    /// The facts the breaker compares between iterations.
    pub(super) observation: Observation,
    /// Failing test names and output for the next iteration's feedback.
    pub(super) evidence: Vec<String>,
    /// Changes to frozen files the agent made, which prpd restored before measuring.
    pub(super) refused: Vec<Violation>,
}
