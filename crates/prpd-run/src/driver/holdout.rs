//! The driver's side of hold-out tests (`holdout.rs` decides which): at RED's end the chosen
//! tests are cut from their files and the cut is proven by running the tests (the held-out
//! ones are gone, every other test ends as before — else nothing is held out and the report
//! says why); at QA's start they are put back, and frozen with the harness; after a REJECT,
//! GREEN's start cuts them again.
//!
//! Where the originals live while they are hidden, and where they do not. They are in prpd's
//! store in the run directory (`holdout/`, hex-encoded, so no search of the folder for a
//! line of a test finds one). They are in no snapshot: the snapshots since the first that
//! held them are written again with the cut files (`snapshot/rewrite.rs`), and the originals'
//! loose objects removed. Every file of the run directory that quotes a held-out line (a test
//! log, an agent's output, a QA report) is redacted in place and its original kept in the
//! store until the run ships or is aborted (`holdout/withhold.rs`); so are the texts the record
//! hands to GREEN's prompt. What this cannot hide from an agent with full shell access is
//! written in the README: the store is prpd's own folder, not a vault.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::holdout::withhold::HeldLines;
use crate::holdout::{self, HeldFile, HeldTest, Redacted, blocks};
use crate::measure::TestMeasurement;
use prpd_qa::checklist::Category;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::metrics::Outcome;
use prpd_qa::runner::{CheckResult, CheckStatus};

use super::{DriveError, Driver, write_text};

/// The id of QA's hold-out check.
pub(super) const CHECK_ID: &str = "HOLDOUT";

/// The store's folder in the run directory.
const STORE: &str = "holdout";

impl Driver {
    /// At RED's end, before the harness freezes: chooses the tests to hold out, keeps their
    /// files in the store, cuts them out of the tree and proves the cut; the tests left in
    /// view are the count GREEN's gate holds on to.
    pub(super) async fn hold_out_at_red_end(
        &mut self,
        detection: &Detection,
    ) -> Result<(), DriveError> {
        if self.record.holdout.decided
            && (self.record.holdout.tests.is_empty() || !self.record.holdout.exposed)
        {
            return Ok(());
        }
        let before = self.red_end_tests(detection).await?;
        if !self.record.holdout.decided {
            self.choose_held_out(before.as_ref())?;
        }
        if self.record.holdout.tests.is_empty() {
            return Ok(());
        }
        self.write_held_files(false)?;
        let log_dir = self.run_dir().join("measure");
        let after = self
            .probe(detection, &log_dir)
            .tests("tests-after-holdout", None)
            .await?;
        if let Some(problem) = cut_problem(before.as_ref(), after.as_ref(), &self.held_names()) {
            tracing::warn!(%problem, "hold-out tests: the cut did not prove out; nothing is held out");
            self.write_held_files(true)?;
            let holdout = &mut self.record.holdout;
            holdout.notes.push(format!(
                "the tests did not run as expected without the held-out ones ({problem}), so every test stays visible"
            ));
            holdout.tests.clear();
            holdout.files.clear();
            return self.save();
        }
        if let Some(observation) = &mut self.record.last_observation {
            observation.tests = after.and_then(|after| after.run.counts);
        }
        self.set_aside(detection, 1)
    }

    /// At QA's start: the held-out tests go back into the tree, and freeze with the harness.
    pub(super) fn put_back_for_qa(&mut self, detection: &Detection) -> Result<(), DriveError> {
        if self.record.holdout.tests.is_empty() || self.record.holdout.exposed {
            return Ok(());
        }
        self.write_held_files(true)?;
        self.record_tree("hold-out tests put back")?;
        let number = self.record.snapshots.count;
        self.record.holdout.restores.push(number);
        self.freeze_harness(detection)?;
        self.record.holdout.exposed = true;
        self.save()
    }

    /// At GREEN's start after a REJECT: the held-out tests leave the tree again, and QA's
    /// snapshots that held them are written again without them.
    pub(super) fn hide_again(&mut self, detection: &Detection) -> Result<(), DriveError> {
        if self.record.holdout.tests.is_empty() || !self.record.holdout.exposed {
            return Ok(());
        }
        let from = self.record.holdout.restores.last().copied().unwrap_or(1);
        self.write_held_files(false)?;
        self.set_aside(detection, from)
    }

    /// When the run has ended: the run directory's files are as they were written.
    pub(super) fn put_back_withheld(&mut self) -> Result<(), DriveError> {
        let run_dir = self.run_dir();
        for (relative, redacted) in std::mem::take(&mut self.record.holdout.withheld) {
            let path = run_dir.join(&relative);
            let stored = read_stored(&run_dir.join(STORE).join("withheld").join(&relative));
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            match stored.and_then(|stored| redacted.original(&stored, &current)) {
                Some(original) => write_text(&path, &original)?,
                None => {
                    tracing::warn!(file = %path.display(), "a withheld file was rewritten since; its original stays in prpd's hold-out store");
                }
            }
        }
        Ok(())
    }

    /// The held-out tests' names, for the proof.
    pub(super) fn held_names(&self) -> BTreeSet<String> {
        self.record
            .holdout
            .tests
            .iter()
            .map(|test| test.name.clone())
            .collect()
    }

    /// QA's `HOLDOUT` check: every held-out test ran in the checklist's test run and passed.
    /// `None` when nothing is held out.
    pub(super) fn holdout_check(
        &mut self,
        detection: &Detection,
        checks: &[CheckResult],
    ) -> Option<CheckResult> {
        if self.record.holdout.tests.is_empty() {
            return None;
        }
        let test_command = detection.command(CommandKind::Test);
        let test_check = checks
            .iter()
            .find(|check| check.command.is_some() && check.command.as_deref() == test_command);
        let cases = test_check.map(|check| check.metrics.test_cases().clone());
        let log = test_check
            .and_then(|check| check.log.as_ref())
            .and_then(|log| std::fs::read_to_string(log).ok())
            .unwrap_or_default();
        let lines = self.held_lines().unwrap_or_default();
        let mut results = BTreeMap::new();
        let mut failed = Vec::new();
        for test in &self.record.holdout.tests {
            let outcome = cases.as_ref().and_then(|cases| cases.get(&test.name));
            if let Some(outcome) = outcome {
                results.insert(test.name.clone(), outcome);
            }
            if outcome != Some(Outcome::Passed) {
                let how = outcome.map_or("did not run", Outcome::as_str);
                let said = holdout::message::of(&log, &test.name)
                    .map(|message| lines.redact(&message).unwrap_or(message))
                    .map_or_else(String::new, |message| format!(": {message}"));
                failed.push(format!("{} {how}{said}", describe(test)));
            }
        }
        self.record.holdout.results = results;
        let total = self.record.holdout.tests.len();
        let (status, detail) = if failed.is_empty() {
            (
                CheckStatus::Pass,
                format!("{total} held-out test(s) that GREEN never saw pass"),
            )
        } else {
            (
                CheckStatus::Fail,
                format!(
                    "{} of {total} held-out test(s) do not pass: {}. GREEN never saw them (their \
                     source stays hidden); they check the same requirements on other inputs, so \
                     the feature must work in general, not only for the visible tests' inputs",
                    failed.len(),
                    failed.join("; ")
                ),
            )
        };
        Some(CheckResult {
            id: CHECK_ID.to_owned(),
            category: Category::Functionality.to_string(),
            criterion: "The tests held out of GREEN's view pass".to_owned(),
            blocking: true,
            status,
            command: None,
            source: Some("prpd: RED's tests set aside at RED's end".to_owned()),
            exit_code: None,
            duration_ms: 0,
            metrics: prpd_qa::metrics::Metrics::default(),
            detail,
            failing_tests: Vec::new(),
            output_tail: String::new(),
            log: None,
            reused_from: None,
        })
    }

    /// `text` without a line of a held-out test: for what the record keeps, which is sealed as
    /// a git object at every save (the run directory's files are withheld in place instead).
    pub(super) fn without_held_lines(&self, text: String) -> Result<String, DriveError> {
        if self.record.holdout.tests.is_empty() {
            return Ok(text);
        }
        Ok(self.held_lines()?.redact(&text).unwrap_or(text))
    }

    /// GREEN's feedback after a REJECT says which held-out tests failed and what their runner
    /// said (the `HOLDOUT` check's line), never a line of their source.
    pub(super) fn withhold_from_feedback(&self, reasons: &mut [String]) -> Result<(), DriveError> {
        let lines = self.held_lines()?;
        for reason in reasons.iter_mut() {
            if let Some(redacted) = lines.redact(reason) {
                *reason = redacted;
            }
        }
        Ok(())
    }

    fn choose_held_out(&mut self, before: Option<&TestMeasurement>) -> Result<(), DriveError> {
        self.record.holdout.decided = true;
        let share = self.context.config.holdout;
        if share <= 0.0 {
            return self.save();
        }
        let (Some(base), Some(last)) = (
            self.record.snapshots.base.clone(),
            self.record.snapshots.last.clone(),
        ) else {
            return self.save();
        };
        let snapshots = self.snapshots()?;
        let (at_base, now) = (snapshots.files(&base)?, snapshots.files(&last)?);
        let mut texts = BTreeMap::new();
        for (path, blob) in &now {
            if crate::frozen::is_test_file(path)
                && at_base.get(path) != Some(blob)
                && let Ok(text) = std::fs::read_to_string(self.context.repo.join(path))
            {
                texts.insert(path.clone(), text);
            }
        }
        let Some(before) = before else {
            return self.save();
        };
        let failed = before
            .cases
            .cases
            .iter()
            .filter(|(_, outcome)| **outcome == Outcome::Failed)
            .map(|(name, _)| name.as_str());
        let requirements = &self.context.prp.requirements;
        let (candidates, not_found) = holdout::candidates(failed, &texts, |names| {
            requirements
                .iter()
                .find(|requirement| names.iter().any(|name| requirement.is_named_by(name)))
                .map(|requirement| requirement.id.clone())
        });
        if not_found > 0 {
            self.record.holdout.notes.push(format!(
                "{not_found} of RED's failing test(s) could not be found by name in RED's test files, so they stay visible"
            ));
        }
        let chosen = holdout::choose(&candidates, share);
        if chosen.is_empty() {
            self.record.holdout.notes.push(format!(
                "no requirement has two tests or more among the {} test(s) of RED's that prpd can set aside, so every test stays visible",
                candidates.len()
            ));
            return self.save();
        }
        let mut files: BTreeMap<PathBuf, Vec<std::ops::Range<usize>>> = BTreeMap::new();
        for index in chosen {
            let candidate = &candidates[index];
            files
                .entry(candidate.file.clone())
                .or_default()
                .push(candidate.block.clone());
            for name in &candidate.names {
                self.record.holdout.tests.push(HeldTest {
                    name: name.clone(),
                    requirement: candidate.requirement.clone(),
                    file: candidate.file.clone(),
                });
            }
        }
        let run_dir = self.run_dir();
        for (number, (path, mut held)) in files.into_iter().enumerate() {
            held.sort_by_key(|block| block.start);
            let stored = PathBuf::from(STORE)
                .join("files")
                .join(format!("{number}.hex"));
            write_text(&run_dir.join(&stored), &holdout::encode(&texts[&path]))?;
            self.record.holdout.files.push(HeldFile {
                full_blob: now[&path].clone(),
                path,
                blocks: held,
                stored,
            });
        }
        // The originals are in the store and the record names them before any file is cut.
        self.record.holdout.exposed = true;
        self.save()
    }

    /// RED's last test run (read back from the measurement RED's gate made on this tree).
    async fn red_end_tests(
        &mut self,
        detection: &Detection,
    ) -> Result<Option<TestMeasurement>, DriveError> {
        let tree = self
            .record
            .snapshots
            .last
            .as_ref()
            .map(|last| last.tree.clone());
        let earlier = tree.and_then(|tree| self.earlier_run(&tree, detection));
        let log_dir = self.run_dir().join("measure");
        Ok(self
            .probe(detection, &log_dir)
            .tests("tests-before-holdout", earlier.as_ref())
            .await?)
    }

    /// Writes every held file into the tree: whole (`full`) or cut.
    fn write_held_files(&self, full: bool) -> Result<(), DriveError> {
        for file in &self.record.holdout.files {
            let original = self.stored_original(file)?;
            let text = if full {
                original
            } else {
                blocks::cut(&original, &file.blocks)
            };
            write_text(&self.context.repo.join(&file.path), &text)?;
        }
        Ok(())
    }

    fn stored_original(&self, file: &HeldFile) -> Result<String, DriveError> {
        let path = self.run_dir().join(&file.stored);
        read_stored(&path).ok_or_else(|| DriveError::Write {
            path,
            source: std::io::Error::other(
                "prpd's copy of a file with held-out tests is missing or damaged",
            ),
        })
    }

    fn held_lines(&self) -> Result<HeldLines, DriveError> {
        let mut held = Vec::new();
        let mut visible = Vec::new();
        for file in &self.record.holdout.files {
            let original = self.stored_original(file)?;
            let lines: Vec<&str> = original.lines().collect();
            for block in &file.blocks {
                held.push(
                    lines[block.start.min(lines.len())..block.end.min(lines.len())].join("\n"),
                );
            }
            visible.push(blocks::cut(&original, &file.blocks));
        }
        Ok(HeldLines::new(
            held.iter().map(String::as_str),
            visible.iter().map(String::as_str),
        ))
    }

    /// The tree holds the cut files: the snapshots from `from` on are written again without
    /// the originals, a snapshot records the cut tree, the harness freezes on it, the
    /// originals' objects go, and the run directory and the record stop quoting them.
    fn set_aside(&mut self, detection: &Detection, from: u32) -> Result<(), DriveError> {
        let snapshots = self.snapshots()?;
        let mut replace = BTreeMap::new();
        for file in &self.record.holdout.files {
            let cut = blocks::cut(&self.stored_original(file)?, &file.blocks);
            replace.insert(file.path.clone(), snapshots.write_blob(&cut)?);
        }
        let count = self.record.snapshots.count;
        let rewritten = snapshots.rewrite(from.max(1), count, &replace)?;
        if let Some(last) = rewritten.snapshots.get(&count) {
            self.record.snapshots.last = Some(last.clone());
        }
        let mut dropped = rewritten.dropped_objects;
        dropped.append(&mut snapshots.remove_named_ref("without-feature", replace.keys())?);
        dropped.extend(rewritten.dropped_blobs);
        drop(snapshots);
        self.record_tree("hold-out tests set aside")?;
        self.freeze_harness(detection)?;
        self.remove_original_objects(&dropped)?;
        self.withhold_run_files()?;
        self.record.holdout.exposed = false;
        self.save()
    }

    fn remove_original_objects(&mut self, dropped: &BTreeSet<String>) -> Result<(), DriveError> {
        let snapshots = self.snapshots()?;
        let (Some(base), Some(last)) = (&self.record.snapshots.base, &self.record.snapshots.last)
        else {
            return Ok(());
        };
        let head = git2::Repository::open(&self.context.repo)
            .ok()
            .and_then(|repo| {
                repo.head()
                    .ok()?
                    .peel_to_commit()
                    .ok()
                    .map(|c| c.id().to_string())
            });
        let start = git2::Repository::open(&self.context.repo)
            .ok()
            .and_then(|repo| {
                let id = git2::Oid::from_str(&base.commit).ok()?;
                Some(repo.find_commit(id).ok()?.parent_id(0).ok()?.to_string())
            });
        if head != start {
            self.record.holdout.objects_note = Some(
                "an agent committed in the run's worktree, so git's objects may hold the held-out tests; prpd left them alone"
                    .to_owned(),
            );
            return Ok(());
        }
        // What the base and the cut tree hold stays, whatever the rewrite dropped.
        let paths: Vec<PathBuf> = self
            .record
            .holdout
            .files
            .iter()
            .map(|file| file.path.clone())
            .collect();
        let mut kept: BTreeSet<String> = snapshots
            .files(base)?
            .into_values()
            .chain(snapshots.files(last)?.into_values())
            .chain([base.commit.clone(), last.commit.clone()])
            .collect();
        kept.append(&mut snapshots.trees_on_the_way(base, &paths)?);
        kept.append(&mut snapshots.trees_on_the_way(last, &paths)?);
        let (removed, packed) =
            snapshots.remove_loose_objects(dropped.iter().filter(|id| !kept.contains(*id)));
        self.record.holdout.objects_removed += removed;
        if packed > 0 {
            self.record.holdout.objects_note = Some(format!(
                "git had already packed {packed} object(s) holding held-out tests; an agent that reads git's packs can find them"
            ));
        }
        Ok(())
    }

    /// Redacts every file of the run directory (and every text of the record GREEN's prompt
    /// reads) that quotes a line of a held-out test, keeping the file's original in the store.
    fn withhold_run_files(&mut self) -> Result<(), DriveError> {
        let lines = self.held_lines()?;
        if lines.is_empty() {
            return Ok(());
        }
        let run_dir = self.run_dir();
        let record_file = self.paths().record();
        let mut pending = vec![run_dir.clone()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if path != run_dir.join(STORE) {
                        pending.push(path);
                    }
                    continue;
                }
                if !kind.is_file() || path == record_file {
                    continue;
                }
                let Ok(current) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let relative = path.strip_prefix(&run_dir).unwrap_or(&path).to_path_buf();
                let stored = run_dir.join(STORE).join("withheld").join(&relative);
                // A file withheld before: its original is the stored one and what came since.
                let original = self
                    .record
                    .holdout
                    .withheld
                    .get(&relative)
                    .and_then(|redacted| redacted.original(&read_stored(&stored)?, &current))
                    .unwrap_or(current);
                let Some(redacted) = lines.redact(&original) else {
                    continue;
                };
                write_text(&stored, &holdout::encode(&original))?;
                write_text(&path, &redacted)?;
                self.record
                    .holdout
                    .withheld
                    .insert(relative, Redacted::of(&redacted));
            }
        }
        let record = &mut self.record;
        let texts = record
            .last_qa_markdown
            .iter_mut()
            .chain(record.feedback.values_mut().flatten())
            .chain(record.evidence.iter_mut())
            .chain(record.qa_blockers.iter_mut())
            .chain(
                record
                    .verdicts
                    .iter_mut()
                    .flat_map(|verdict| verdict.blocking.iter_mut()),
            );
        for text in texts {
            if let Some(redacted) = lines.redact(text) {
                *text = redacted;
            }
        }
        Ok(())
    }
}

/// A held-out test as GREEN's feedback names it: `name` (`AC-2`).
fn describe(test: &HeldTest) -> String {
    match &test.requirement {
        Some(id) => format!("`{}` ({id})", test.name),
        None => format!("`{}`", test.name),
    }
}

fn read_stored(path: &Path) -> Option<String> {
    holdout::decode(&std::fs::read_to_string(path).ok()?)
}

/// Why the tests after the cut do not prove it: a held-out test still ran, or another test
/// went missing or ended otherwise. `None` when the cut is proven.
fn cut_problem(
    before: Option<&TestMeasurement>,
    after: Option<&TestMeasurement>,
    held: &BTreeSet<String>,
) -> Option<String> {
    let (Some(before), Some(after)) = (before, after) else {
        return Some("the test command did not run".to_owned());
    };
    let mut problems = String::new();
    for (name, outcome) in &before.cases.cases {
        let now = after.cases.cases.get(name);
        let fine = if held.contains(name) {
            now.is_none()
        } else {
            now == Some(outcome)
        };
        if !fine {
            let _ = write!(
                problems,
                "{}`{name}` {} after the cut",
                if problems.is_empty() { "" } else { ", " },
                now.map_or("was gone".to_owned(), |now| format!(
                    "ended {}",
                    now.as_str()
                ))
            );
        }
    }
    (!problems.is_empty()).then_some(problems)
}
