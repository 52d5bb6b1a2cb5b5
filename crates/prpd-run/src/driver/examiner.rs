//! The examiner (`[agents.examiner]`, off by default): after RED, an agent with another model
//! than GREEN's writes acceptance tests from the PRP alone, and they go straight into the
//! hold-out tests. RED's tests are what GREEN is measured against in view; the examiner's are
//! a second opinion GREEN never sees, from a prompt that holds the PRP and not RED's tests
//! (they are in the tree the examiner works in, though).
//!
//! The same rules hold as for RED's held-out tests, and more, since the examiner is an agent
//! too: only new test files count (anything else it changed is put back, and said); each file's
//! tests must run and fail without the feature, else the file is dropped (a test that passes
//! without the feature does not test it); the kept files leave the tree at once, before any
//! snapshot holds them, and come back in QA.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::agent::{AgentError, AgentReport};
use crate::breaker::AgentEnd;
use crate::holdout::{HeldTest, blocks};
use crate::measure::TestMeasurement;
use prpd_base::phase::Phase;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::metrics::Outcome;

use super::iteration::AgentCall;
use super::{DriveError, Driver, write_text};

impl Driver {
    /// Runs the examiner once, when one is configured, and keeps the tests it wrote that fail
    /// without the feature as hold-out tests. `before` is RED's last test run.
    pub(super) async fn examine(
        &mut self,
        detection: &Detection,
        before: Option<&TestMeasurement>,
    ) -> Result<(), DriveError> {
        let Some(config) = self.context.config.agents.examiner.clone() else {
            return Ok(());
        };
        if self.record.holdout.examined {
            return Ok(());
        }
        // Marked examined only once its tests are kept: a kill before that calls it again, and
        // what it left in the tree is collected with what it writes then.
        let dir = self.run_dir().join("examiner");
        let feedback = dir.join("feedback.md");
        write_text(&feedback, "# Feedback for the examiner\n\n(none)\n")?;
        let prompt = self.examiner_prompt(detection);
        let call = AgentCall {
            config: &config,
            phase: Phase::Red,
            number: 1,
            iteration_dir: &dir,
            feedback_path: &feedback,
            prompt: &prompt,
            extra_env: &[("PRPD_ROLE".to_owned(), "examiner".to_owned())],
            role: Some("examiner"),
        };
        self.record.holdout.examined = true;
        let trouble = trouble(self.call_agent(&call, detection).await);
        self.receipt_examiner(trouble.as_deref());
        if let Some(trouble) = trouble {
            self.note(trouble);
        }
        let written = self.examiner_files()?;
        if written.is_empty() {
            self.note("the examiner wrote no new test file".to_owned());
            return self.save();
        }
        let log_dir = self.run_dir().join("measure");
        let with = self
            .probe(detection, &log_dir)
            .tests("tests-with-examiner", None)
            .await?;
        let mut kept = Vec::new();
        for (path, text) in written {
            let names = examiner_tests(&text, before, with.as_ref());
            let failing = names.iter().all(|name| {
                with.as_ref()
                    .and_then(|with| with.cases.cases.get(name))
                    .is_some_and(|outcome| *outcome == Outcome::Failed)
            });
            if names.is_empty() || !failing {
                let _ = std::fs::remove_file(self.context.repo.join(&path));
                self.note(format!(
                    "the examiner's `{}` was dropped: {}",
                    path.display(),
                    if names.is_empty() {
                        "the test run names no test of it"
                    } else {
                        "a test of it does not fail without the feature, so it does not test it"
                    }
                ));
                continue;
            }
            let lines = text.lines().count();
            self.keep_original(
                path.clone(),
                &text,
                std::iter::once(0..lines).collect(),
                true,
            )?;
            self.record.holdout.exposed = true;
            kept.push(path.clone());
            for name in names {
                let requirement = self
                    .context
                    .prp
                    .requirements
                    .iter()
                    .find(|requirement| requirement.is_named_by(&name))
                    .map(|requirement| requirement.id.clone());
                self.record.holdout.tests.push(HeldTest {
                    name,
                    requirement,
                    file: path.clone(),
                });
            }
        }
        // Kept in the store and named in the record before they leave the tree.
        self.save()?;
        for path in kept {
            let _ = std::fs::remove_file(self.context.repo.join(path));
        }
        Ok(())
    }

    fn note(&mut self, note: String) {
        tracing::warn!(%note, "examiner");
        self.record.holdout.notes.push(note);
    }

    fn examiner_prompt(&self, detection: &Detection) -> String {
        let test_command = detection
            .command(CommandKind::Test)
            .unwrap_or("(none found)");
        format!(
            "You are the examiner of a feature request. Another agent will implement it without \
             ever seeing your tests; they check that the feature works in general, not only for \
             the examples its own tests use.\n\n\
             Write acceptance tests for the feature below, from the document alone, in NEW test \
             files beside the project's existing tests, in the project's test framework (the \
             test command is `{test_command}`). Name each test after the requirement id it \
             checks (e.g. `AC-2: ...`), and use inputs of your own choosing. The feature is not \
             implemented yet, so every test you write must fail now. Change no other file; do \
             not implement the feature.\n\n\
             # The feature request\n\n{}\n",
            self.context.prp_text
        )
    }

    /// The new test files the examiner wrote, with their text; anything else it changed is put
    /// back from the last snapshot. Nothing is written to git's objects.
    fn examiner_files(&mut self) -> Result<Vec<(PathBuf, String)>, DriveError> {
        let Some(last) = self.record.snapshots.last.clone() else {
            return Ok(Vec::new());
        };
        let snapshots = self.snapshots()?;
        let changed = snapshots.changed_in_tree(&last)?;
        let mut written = Vec::new();
        let mut put_back = Vec::new();
        for (path, added) in changed {
            if added
                && crate::frozen::is_test_file(&path)
                && let Ok(text) = std::fs::read_to_string(self.context.repo.join(&path))
            {
                written.push((path, text));
                continue;
            }
            if added {
                snapshots.remove(&path)?;
            } else {
                snapshots.restore(&last, &path)?;
            }
            put_back.push(path.display().to_string());
        }
        if !put_back.is_empty() {
            self.note(format!(
                "the examiner changed files other than new tests, which prpd put back: {}",
                put_back.join(", ")
            ));
        }
        Ok(written)
    }
}

/// What kept the examiner's tests out, when its call did not work: it could not run, its
/// provider refused for now, or it could not use its model.
fn trouble(called: Result<AgentReport, AgentError>) -> Option<String> {
    match called {
        Err(error) => Some(format!(
            "the examiner could not run ({error:#}); no test of its is held out"
        )),
        Ok(report) if report.end == AgentEnd::Quota => Some(
            "the examiner's provider refused for now (a rate or usage limit); no test of its is held out"
                .to_owned(),
        ),
        Ok(report) => report.setup_error.map(|line| {
            format!("the examiner could not use its model (`{line}`); no test of its is held out")
        }),
    }
}

/// The tests of the examiner's file `text`: the names the run with it printed that RED's run
/// did not, found in the file by name.
fn examiner_tests(
    text: &str,
    before: Option<&TestMeasurement>,
    with: Option<&TestMeasurement>,
) -> Vec<String> {
    let known: BTreeMap<&String, &Outcome> = before
        .map(|before| before.cases.cases.iter().collect())
        .unwrap_or_default();
    with.map(|with| {
        with.cases
            .cases
            .keys()
            .filter(|name| !known.contains_key(name))
            .filter(|name| blocks::find(text, blocks::leaf_name(name)).is_some())
            .cloned()
            .collect()
    })
    .unwrap_or_default()
}
