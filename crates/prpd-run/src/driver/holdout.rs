//! The driver's side of hold-out tests (`holdout.rs` decides which): at RED's end the chosen
//! tests are cut from their files and the cut is proven by running the tests (the held-out
//! ones are gone, every other test ends as before, no new failure appears — else the files
//! the failures point at go back whole, and the notes say why); at QA's start they are put
//! back, and frozen with the harness; after a REJECT, GREEN's start cuts them again.
//!
//! Where the originals live while they are hidden, and where they do not. They are in prpd's
//! store in the run directory (`holdout/`, hex-encoded, so no search of the folder for a
//! line of a test finds one). They are in no snapshot: the snapshots since the first that
//! held them are written again with the cut files (`snapshot/rewrite.rs`), and the originals'
//! loose objects removed (`holdout/objects.rs`). Every file of the run directory that quotes a
//! held-out line (a test log, an agent's output, a QA report) is redacted in place and its
//! original kept in the store until the run ships or is aborted (`holdout/withhold.rs`); so are
//! the texts the record keeps. QA's check is `holdout/check.rs`. What this cannot hide from an
//! agent with full shell access is in the book: the store is prpd's own folder, not a vault.

mod check;
mod objects;
mod withhold;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::holdout::withhold::HeldLines;
use crate::holdout::{self, HeldFile, HeldTest, Holdout};
use crate::measure::TestMeasurement;
use prpd_qa::discover::Detection;
use prpd_qa::metrics::Outcome;

use super::{DriveError, Driver, write_text};

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
        if self.context.config.holdout <= 0.0 && self.context.config.agents.examiner.is_none() {
            self.record.holdout.decided = true;
            return Ok(());
        }
        let before = self.red_end_tests(detection).await?;
        if !self.record.holdout.decided {
            self.examine(detection, before.as_ref()).await?;
            self.choose_held_out(before.as_ref())?;
        }
        if self.record.holdout.tests.is_empty() {
            return Ok(());
        }
        let log_dir = self.run_dir().join("measure");
        // A cut that breaks a file (a class left without a method, an import only a held test
        // used) costs that file's hold-out: it goes back whole and the rest is proven again.
        for round in 1..=2 {
            self.write_held_files(false)?;
            let after = self
                .probe(detection, &log_dir)
                .tests("tests-after-holdout", None)
                .await?;
            let problems = cut_problems(before.as_ref(), after.as_ref(), &self.held_names());
            if problems.is_empty() {
                if let Some(observation) = &mut self.record.last_observation {
                    observation.tests = after.and_then(|after| after.run.counts);
                }
                break;
            }
            let said = problems
                .iter()
                .map(|(name, what)| format!("`{name}` {what}"))
                .collect::<Vec<_>>()
                .join(", ");
            let mut broken = self.files_of(&problems)?;
            let red_files = self.red_cut_files();
            if round == 2 || broken.is_empty() || red_files.len() == broken.len() {
                broken = red_files;
            }
            tracing::warn!(problems = %said, "hold-out tests: the cut did not prove out");
            self.record.holdout.notes.push(format!(
                "the tests did not run as expected after the cut ({said}), so the tests of {} all stay visible",
                broken.iter().map(|path| format!("`{}`", path.display())).collect::<Vec<_>>().join(", ")
            ));
            self.give_back(&broken)?;
            if self.red_cut_files().is_empty() {
                break;
            }
        }
        if self.record.holdout.tests.is_empty() {
            self.record.holdout.exposed = false;
            return self.save();
        }
        self.set_aside(detection, 1)
    }

    /// RED's held files, cut in blocks (the examiner's are held out whole).
    fn red_cut_files(&self) -> BTreeSet<PathBuf> {
        self.record
            .holdout
            .files
            .iter()
            .filter(|file| !file.whole)
            .map(|file| file.path.clone())
            .collect()
    }

    /// The held files (RED's, cut in blocks) the `problems` of a cut point at: a held test's
    /// own file, or the file a test that went wrong is defined in.
    fn files_of(&self, problems: &[(String, String)]) -> Result<BTreeSet<PathBuf>, DriveError> {
        let held = crate::proof::TestFiles {
            red: self.red_cut_files(),
            other: BTreeSet::new(),
        };
        let owners = crate::proof::Owners::new(&held);
        // A name that says its file (pytest's path, unittest's module, a loader's stand-in for
        // a module that no longer loads).
        let mut files: BTreeSet<PathBuf> = problems
            .iter()
            .filter_map(|(name, _)| match owners.of(name) {
                crate::proof::Owner::Red(path) => Some(path.to_path_buf()),
                _ => None,
            })
            .collect();
        for file in self.record.holdout.files.iter().filter(|file| !file.whole) {
            let original = self.stored_original(file)?;
            let points_here = problems.iter().any(|(name, _)| {
                self.record
                    .holdout
                    .tests
                    .iter()
                    .any(|test| test.name == *name && test.file == file.path)
                    || holdout::blocks::find(&original, holdout::blocks::leaf_name(name)).is_some()
            });
            if points_here {
                files.insert(file.path.clone());
            }
        }
        Ok(files)
    }

    /// The held files at `paths` go back into the tree whole, and hold nothing out any more.
    fn give_back(&mut self, paths: &BTreeSet<PathBuf>) -> Result<(), DriveError> {
        for file in self
            .record
            .holdout
            .files
            .iter()
            .filter(|file| paths.contains(&file.path))
        {
            write_text(
                &self.context.repo.join(&file.path),
                &self.stored_original(file)?,
            )?;
        }
        let holdout = &mut self.record.holdout;
        holdout.files.retain(|file| !paths.contains(&file.path));
        holdout.tests.retain(|test| !paths.contains(&test.file));
        Ok(())
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

    /// When the run has ended (shipped or aborted), no agent runs again: the held-out tests are
    /// back in the tree (an aborted run in place leaves the user's files whole), and the run
    /// directory's files are as they were written.
    pub(super) fn put_back_withheld(&mut self) -> Result<(), DriveError> {
        put_back(
            &self.run_dir(),
            &self.context.repo,
            &mut self.record.holdout,
        )
    }

    /// The held-out tests' names (RED's and the examiner's), for the cut's proof and the
    /// proof on the pull request.
    pub(super) fn held_names(&self) -> BTreeSet<String> {
        self.record
            .holdout
            .tests
            .iter()
            .map(|test| test.name.clone())
            .collect()
    }

    /// Chooses RED's tests to hold out (besides the examiner's), keeps their files' originals
    /// in the store and names them in the record, before any file is cut.
    fn choose_held_out(&mut self, before: Option<&TestMeasurement>) -> Result<(), DriveError> {
        self.record.holdout.decided = true;
        self.choose_red_tests(before)?;
        self.record.holdout.exposed = !self.record.holdout.tests.is_empty();
        self.save()
    }

    fn choose_red_tests(&mut self, before: Option<&TestMeasurement>) -> Result<(), DriveError> {
        let share = self.context.config.holdout;
        if share <= 0.0 {
            return Ok(());
        }
        let (Some(base), Some(last)) = (
            self.record.snapshots.base.clone(),
            self.record.snapshots.last.clone(),
        ) else {
            return Ok(());
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
            return Ok(());
        };
        let red_end = before
            .cases
            .cases
            .iter()
            .map(|(name, outcome)| (name.as_str(), *outcome == Outcome::Failed));
        let requirements = &self.context.prp.requirements;
        let (candidates, not_found) = holdout::candidates(red_end, &texts, |names| {
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
            return Ok(());
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
        for (path, mut held) in files {
            held.sort_by_key(|block| block.start);
            self.keep_original(path.clone(), &texts[&path], held, false)?;
        }
        Ok(())
    }

    /// Keeps `original`, the text of `path` with the held-out `blocks` (or held out `whole`),
    /// in the store, and names it in the record.
    pub(super) fn keep_original(
        &mut self,
        path: PathBuf,
        original: &str,
        blocks: Vec<std::ops::Range<usize>>,
        whole: bool,
    ) -> Result<(), DriveError> {
        let number = self.record.holdout.files.len();
        let stored = PathBuf::from(STORE)
            .join("files")
            .join(format!("{number}.hex"));
        write_text(&self.run_dir().join(&stored), &holdout::encode(original))?;
        self.record.holdout.files.push(HeldFile {
            path,
            blocks,
            full_blob: prpd_base::files::content_hash(original.as_bytes()),
            stored,
            whole,
        });
        Ok(())
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
            let path = self.context.repo.join(&file.path);
            match if full {
                Some(original)
            } else {
                file.visible(&original)
            } {
                Some(text) => write_text(&path, &text)?,
                None => match std::fs::remove_file(&path) {
                    Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                        return Err(DriveError::Write {
                            path,
                            source: error,
                        });
                    }
                    _ => {}
                },
            }
        }
        Ok(())
    }

    fn stored_original(&self, file: &HeldFile) -> Result<String, DriveError> {
        original(&self.run_dir(), file)
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
            visible.extend(file.visible(&original));
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
        let replace = self.replacements()?;
        self.hide_from_git(from, &replace)?;
        self.record_tree("hold-out tests set aside")?;
        self.freeze_harness(detection)?;
        // A file held out whole is absent now, not deleted by an agent.
        for file in &self.record.holdout.files {
            if file.whole {
                self.record.freeze.entries.remove(&file.path);
            }
        }
        // The record names the new snapshots before the old ones' objects go.
        self.save()?;
        self.remove_original_objects()?;
        self.withhold_run_files()?;
        self.record.holdout.exposed = false;
        self.save()
    }

    /// Each held file's path with its blob as GREEN sees it (`None`: absent), and the compiled
    /// copies of the originals an agent's own test run left beside them (Python's
    /// `__pycache__/<stem>.*.pyc`), which go from the tree and the snapshots.
    fn replacements(&self) -> Result<BTreeMap<PathBuf, Option<String>>, DriveError> {
        let snapshots = self.snapshots()?;
        let mut replace = BTreeMap::new();
        for file in &self.record.holdout.files {
            let visible = match file.visible(&self.stored_original(file)?) {
                Some(cut) => Some(snapshots.write_blob(&cut)?),
                None => None,
            };
            replace.insert(file.path.clone(), visible);
            for compiled in compiled_copies(&self.context.repo, &file.path) {
                let _ = std::fs::remove_file(self.context.repo.join(&compiled));
                replace.insert(compiled, None);
            }
        }
        Ok(replace)
    }
}

/// The compiled copies of `path` in its folder's `__pycache__/` (`test_x.cpython-312.pyc`).
fn compiled_copies(repo: &Path, path: &Path) -> Vec<PathBuf> {
    let (Some(folder), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str()))
    else {
        return Vec::new();
    };
    let cache = folder.join("__pycache__");
    let Ok(entries) = std::fs::read_dir(repo.join(&cache)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| {
            name.starts_with(&format!("{stem}."))
                && Path::new(name)
                    .extension()
                    .is_some_and(|extension| extension.eq_ignore_ascii_case("pyc"))
        })
        .map(|name| cache.join(name))
        .collect()
}

/// What [`Driver::put_back_withheld`] does, for a run that has ended; `prpd abort` of a run no
/// prpd drives calls it too. `tree` is the run's working tree.
pub fn put_back(run_dir: &Path, tree: &Path, holdout: &mut Holdout) -> Result<(), DriveError> {
    if !holdout.tests.is_empty() && !holdout.exposed {
        for file in &holdout.files {
            write_text(&tree.join(&file.path), &original(run_dir, file)?)?;
        }
        holdout.exposed = true;
    }
    for (relative, redacted) in std::mem::take(&mut holdout.withheld) {
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

/// The original of a held `file` from the store in `run_dir`, as prpd wrote it: the store is
/// in a folder an agent can write, so its content hash must be the one the sealed record keeps.
fn original(run_dir: &Path, file: &HeldFile) -> Result<String, DriveError> {
    let stored = run_dir.join(&file.stored);
    read_stored(&stored)
        .filter(|text| prpd_base::files::content_hash(text.as_bytes()) == file.full_blob)
        .ok_or(DriveError::HoldoutStore {
            file: file.path.clone(),
            stored,
        })
}

fn read_stored(path: &Path) -> Option<String> {
    holdout::decode(&std::fs::read_to_string(path).ok()?)
}

/// Why the tests after the cut do not prove it, by test: a held-out test still ran, or another
/// test went missing or ended otherwise. Empty when the cut is proven.
fn cut_problems(
    before: Option<&TestMeasurement>,
    after: Option<&TestMeasurement>,
    held: &BTreeSet<String>,
) -> Vec<(String, String)> {
    let (Some(before), Some(after)) = (before, after) else {
        return vec![("the test command".to_owned(), "did not run".to_owned())];
    };
    let mut problems: Vec<(String, String)> = after
        .cases
        .cases
        .keys()
        .filter(|name| !before.cases.cases.contains_key(*name))
        .map(|name| (name.clone(), "appeared after the cut".to_owned()))
        .collect();
    // A failure the runner does not name (a file that no longer loads) shows in the counts.
    if let (Some(was), Some(now)) = (before.run.counts, after.run.counts) {
        let held_failing = before
            .cases
            .cases
            .iter()
            .filter(|(name, outcome)| held.contains(*name) && **outcome == Outcome::Failed)
            .count();
        let expected = usize::try_from(was.failing)
            .unwrap_or(usize::MAX)
            .saturating_sub(held_failing);
        if usize::try_from(now.failing).unwrap_or(usize::MAX) > expected {
            problems.push((
                "the test run".to_owned(),
                format!(
                    "counted {} failing test(s) after the cut where {expected} were expected",
                    now.failing
                ),
            ));
        }
    }
    for (name, outcome) in &before.cases.cases {
        let now = after.cases.cases.get(name);
        let fine = if held.contains(name) {
            now.is_none()
        } else {
            now == Some(outcome)
        };
        if !fine {
            let what = now.map_or("was gone after the cut".to_owned(), |now| {
                format!("ended {} after the cut", now.as_str())
            });
            problems.push((name.clone(), what));
        }
    }
    problems
}
