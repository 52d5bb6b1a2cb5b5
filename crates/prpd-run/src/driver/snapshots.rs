//! The driver's side of snapshots and the frozen measurement: when a snapshot is taken, what
//! is frozen when, and what happens to a change an agent made to something frozen (it is
//! restored from the last accepted snapshot and fails the iteration's gate, by name). It stands
//! apart because it is the one place where the loop turns the working tree into facts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::agent;
use crate::config::SnapshotRetention;
use crate::frozen::{self, Family, Violation};
use crate::machine::Event;
use crate::measure::Tree;
use crate::prompt;
use crate::snapshot::{Changes, Snapshot, SnapshotError, SnapshotLog, Snapshots, TreeWatcher};
use prpd_base::phase::Phase;
use prpd_protocols::verify_tasks;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;
use prpd_qa::method::BaseDocs;
use prpd_qa::settings;

use super::own_time::Part;
use super::{Context, DriveError, Driver, InputChanges};

/// The run's tree watcher in this session.
#[derive(Debug)]
pub(super) enum TreeWatch {
    /// Before this session's first snapshot.
    NotStarted,
    /// Watching: snapshots read only the changed paths.
    Running(TreeWatcher),
    /// It could not start (said in the debug log): every snapshot is a full scan.
    Unavailable,
}

impl Driver {
    pub(super) fn snapshots(&self) -> Result<Snapshots, DriveError> {
        Ok(Snapshots::open(
            &self.context.repo,
            &self.record.run_id,
            &self
                .context
                .session
                .run(&self.record.run_id)
                .snapshot_index(),
        )?)
    }

    /// The snapshots this session records, opened once: the run's index stays in memory
    /// between its snapshots, and the record's seal uses the same repository.
    pub(super) fn recorder(&mut self) -> Result<&Snapshots, SnapshotError> {
        kept_open(&mut self.recorder, &self.context, &self.record.run_id)
    }

    /// Records the tree as snapshot `number` from the paths the run's tree watcher saw change
    /// (a full scan when it knows of none, and for this session's first snapshot, which starts
    /// the watcher).
    fn record_snapshot(
        &mut self,
        number: u32,
        parent: Option<&Snapshot>,
        message: &str,
    ) -> Result<Snapshot, SnapshotError> {
        self.snapshot_with(|snapshots, changes| {
            snapshots.record_changes(number, parent, message, changes)
        })
    }

    /// Brings the run's index up to the tree with `record`, given what the watcher saw change.
    fn snapshot_with<T>(
        &mut self,
        record: impl FnOnce(&Snapshots, &Changes) -> Result<T, SnapshotError>,
    ) -> Result<T, SnapshotError> {
        let started = Instant::now();
        let snapshots = kept_open(&mut self.recorder, &self.context, &self.record.run_id)?;
        if let TreeWatch::NotStarted = self.tree_watch {
            self.tree_watch = TreeWatcher::start(&self.context.repo)
                .map_or(TreeWatch::Unavailable, TreeWatch::Running);
        }
        let watcher = match &self.tree_watch {
            TreeWatch::Running(watcher) => Some(watcher),
            TreeWatch::NotStarted | TreeWatch::Unavailable => None,
        };
        let mut changes = watcher.map_or(Changes::All, TreeWatcher::changes);
        // A write the watcher cannot see (through a shared memory map) must not change a frozen
        // file unnoticed: the frozen files are read again at every snapshot, whatever the
        // watcher says (their number, not the tree's size, is the cost).
        if let Changes::Paths(paths) = &mut changes {
            paths.extend(self.record.freeze.entries.keys().cloned());
        }
        let recorded = record(snapshots, &changes);
        if recorded.is_err()
            && let Some(watcher) = watcher
        {
            watcher.forget("the last snapshot failed");
        }
        self.own_time.add(Part::Snapshot, started);
        recorded
    }

    /// Records the run's base snapshot, once, before any agent runs: prpd's own inputs freeze
    /// here, and the test files as they are become the run's starting point.
    pub(super) fn ensure_base_snapshot(&mut self) -> Result<(), DriveError> {
        if self.record.snapshots.base.is_some() {
            return Ok(());
        }
        // Aider's own files stay out of the snapshots; the line goes in before the exclude
        // file freezes, so it is part of the baseline every later snapshot is compared with.
        let agents = &self.context.config.agents;
        if Phase::ITERATING
            .into_iter()
            .any(|phase| agent::is_aider(agents.for_phase(phase)))
        {
            self.context
                .session
                .exclude(agent::AIDER_EXCLUDE)
                .map_err(|source| DriveError::Write {
                    path: PathBuf::from(".git/info/exclude"),
                    source,
                })?;
        }
        let snapshots = self.snapshots()?;
        let message = format!("prpd {}: base", self.record.run_id);
        self.record.freeze.git_exclude = std::fs::read_to_string(snapshots.exclude_file()).ok();
        let base = self.record_snapshot(0, None, &message)?;
        // The base snapshot's parent is the commit HEAD names now; the branch that names it is
        // the pull request's base unless `[ship] base` says otherwise. A run in a worktree
        // (detached at its base) was told its base branch when it started.
        if self.record.worktree.is_none() {
            self.record.ship.base_branch = prpd_ship::git::checked_out_branch(&self.context.repo);
        }
        self.record.detection = Some(settings::detect(
            &self.context.repo,
            &self.context.mapping,
            &self.context.config.gate,
        )?);
        self.write_critical_points()?;
        let files = snapshots.files(&base)?;
        self.record.freeze.prpd_inputs(&base, &files);
        self.record.baseline.tests_at_start = Tree::from_snapshot(&base.tree, &files).test_files;
        self.record.snapshots = SnapshotLog {
            base: Some(base.clone()),
            last: Some(base),
            count: 0,
            iterations: BTreeMap::new(),
        };
        Ok(())
    }

    /// Records the working tree as the next snapshot, without judging it: at a phase start, and
    /// after prpd's own measurement (so what a test run writes is never the next agent's).
    /// Returns its tree id; nothing is listed, since only the fingerprint is needed. A tree
    /// that is the last snapshot's is not recorded again.
    pub(super) fn record_tree(&mut self, label: &str) -> Result<String, DriveError> {
        let number = self.record.snapshots.count + 1;
        let message = format!("prpd {}: {label}", self.record.run_id);
        let Some(last) = self.record.snapshots.last.clone() else {
            let snapshot = self.record_snapshot(number, None, &message)?;
            self.accept(number, &snapshot);
            return Ok(snapshot.tree);
        };
        let recorded = self.snapshot_with(|snapshots, changes| {
            snapshots.record_if_changed(number, &last, &message, changes)
        })?;
        Ok(match recorded {
            Some(snapshot) => {
                self.accept(number, &snapshot);
                snapshot.tree
            }
            None => last.tree,
        })
    }

    /// The commands of the run, as discovered when it started.
    pub(super) fn detection(&mut self) -> Result<Detection, DriveError> {
        if let Some(detection) = &self.record.detection {
            return Ok(detection.clone());
        }
        let detection = settings::detect(
            &self.context.repo,
            &self.context.mapping,
            &self.context.config.gate,
        )?;
        self.record.detection = Some(detection.clone());
        Ok(detection)
    }

    /// The repository's override of `phase`'s prompt template as prpd's frozen inputs hold it:
    /// an agent that writes `.prpd/prompts/` during the run instructs nobody.
    pub(super) fn prompt_override(
        &self,
        phase: Phase,
    ) -> Result<Option<(PathBuf, String)>, DriveError> {
        // The snapshot prpd's inputs were frozen in: the base, or the tree a human accepted with
        // `--reload-config`.
        let Some(frozen) = self.record.freeze.frozen_at.get(&Family::PrpdInputs) else {
            return Ok(None);
        };
        let path = prompt::override_path(phase)?;
        let text = self.snapshots()?.read(frozen, &path)?;
        Ok(text.map(|text| (path, text)))
    }

    /// The documentation at the run's base (the README, changelog, `docs/` and changelog
    /// fragments), for the checks that judge what the run added.
    pub(super) fn base_docs(&self) -> Result<BaseDocs, DriveError> {
        let Some(base) = &self.record.snapshots.base else {
            return Ok(BaseDocs::default());
        };
        Ok(BaseDocs::at_revision(
            &self.context.repo,
            &base.commit,
            "the run started",
        )?)
    }

    /// The documentation files the run changed since its base, and their diff.
    pub(super) fn documentation_since_base(&self) -> Result<(Vec<PathBuf>, String), DriveError> {
        let (Some(base), Some(last)) = (&self.record.snapshots.base, &self.record.snapshots.last)
        else {
            return Ok((Vec::new(), String::new()));
        };
        let snapshots = self.snapshots()?;
        let changed: Vec<PathBuf> = snapshots
            .changes(base, last)?
            .into_keys()
            .filter(|path| is_documentation(path, &self.record.prp))
            .collect();
        if changed.is_empty() {
            return Ok((changed, String::new()));
        }
        let patch = snapshots.patch_of(base, last, &changed)?;
        Ok((changed, patch))
    }

    /// Records the tree an agent left, refuses every change to something frozen (restoring it
    /// from the snapshot it was frozen in), and records the restored tree in its place.
    pub(super) fn snapshot_after_agent(
        &mut self,
        phase: Phase,
        number: u32,
    ) -> Result<(Tree, Vec<Violation>), DriveError> {
        let snapshots = self.snapshots()?;
        let previous = self.record.snapshots.last.clone();
        let sequence = self.record.snapshots.count + 1;
        let message = format!(
            "prpd {}: after {phase} iteration {number}",
            self.record.run_id
        );
        // Before the tree is recorded: the exclude file decides what the snapshot holds.
        let started = Instant::now();
        let exclude_refused = self.guard_git_exclude(&snapshots)?;
        self.own_time.add(Part::Freeze, started);
        let snapshot = self.record_snapshot(sequence, previous.as_ref(), &message)?;
        let started = Instant::now();
        let files = self.listed_files(&snapshots, &snapshot)?;
        // After a REJECT, GREEN may add tests for what QA found uncovered (and in any attempt
        // when prpd.toml says `green_may_add_tests`); they are frozen when GREEN ends.
        let allow_new_tests = phase == Phase::Green
            && (!self.record.verdicts.is_empty() || self.context.config.green_may_add_tests);
        let mut violations = self
            .record
            .freeze
            .violations(&files, allow_new_tests, |path| {
                snapshots.read(&snapshot, path).ok().flatten()
            });
        self.own_time.add(Part::Freeze, started);
        let (snapshot, files) = if violations.is_empty() {
            (snapshot, files)
        } else {
            for violation in &violations {
                tracing::warn!(%phase, path = %violation.path.display(), "restoring a frozen file");
                match &violation.restore_from {
                    Some(frozen) => snapshots.restore(frozen, &violation.path)?,
                    None => snapshots.remove(&violation.path)?,
                }
            }
            let restored = self.record_snapshot(
                sequence,
                previous.as_ref(),
                &format!("{message} (frozen files restored)"),
            )?;
            let files = self.listed_files(&snapshots, &restored)?;
            (restored, files)
        };
        violations.extend(exclude_refused);
        self.accept(sequence, &snapshot);
        if phase != Phase::Ship {
            let iteration = self.record.total_iterations() + 1;
            self.record.snapshots.iterations.insert(iteration, sequence);
        }
        Ok((Tree::from_snapshot(&snapshot.tree, &files), violations))
    }

    /// The files of `snapshot` (path → blob id), from the last snapshot listed this session and
    /// what differs between the two trees: listing a tree afresh reads every folder of it.
    fn listed_files(
        &mut self,
        snapshots: &Snapshots,
        snapshot: &Snapshot,
    ) -> Result<Arc<BTreeMap<PathBuf, String>>, SnapshotError> {
        let since = match &self.listed {
            Some((listed, files)) if listed.tree == snapshot.tree => Some(Arc::clone(files)),
            // A cache: a listing that cannot be brought up to date is made afresh.
            Some((listed, files)) => match snapshots.files_since(files, listed, snapshot) {
                Ok(files) => Some(Arc::new(files)),
                Err(error) => {
                    tracing::debug!(%error, "the snapshot's files are listed afresh");
                    None
                }
            },
            None => None,
        };
        let files = match since {
            Some(files) => files,
            None => Arc::new(snapshots.files(snapshot)?),
        };
        self.listed = Some((snapshot.clone(), Arc::clone(&files)));
        Ok(files)
    }

    /// Puts `.git/info/exclude` back as the run started with it when an agent changed it (an
    /// added pattern would hide a file from every later snapshot).
    fn guard_git_exclude(&self, snapshots: &Snapshots) -> Result<Option<Violation>, DriveError> {
        if self.record.snapshots.base.is_none() {
            return Ok(None);
        }
        let path = snapshots.exclude_file();
        let now = std::fs::read_to_string(&path).ok();
        if now == self.record.freeze.git_exclude {
            return Ok(None);
        }
        let restored = match &self.record.freeze.git_exclude {
            Some(text) => std::fs::write(&path, text),
            None => std::fs::remove_file(&path),
        };
        restored.map_err(|source| DriveError::Write {
            path: path.clone(),
            source,
        })?;
        tracing::warn!(path = %path.display(), "restoring git's exclude file");
        Ok(Some(Violation {
            path: PathBuf::from(".git/info/exclude"),
            message: "`.git/info/exclude` was changed: it decides what prpd's snapshots hold, \
                      like a .gitignore, and is frozen for the whole run; prpd restored it"
                .to_owned(),
            restore_from: None,
        }))
    }

    /// Freezes the test harness as the last accepted snapshot holds it (end of RED; again at
    /// the end of GREEN, which may have added tests after a REJECT), with what the test command
    /// and the PRP's `[VERIFY]` commands run through. (The commands of the PRP's command
    /// criteria are not frozen this way: their file arguments are often the code under work,
    /// `python -m py_compile calc.py`; they are judged again before they run instead.)
    pub(super) fn freeze_harness(&mut self, detection: &Detection) -> Result<(), DriveError> {
        let Some(last) = self.record.snapshots.last.clone() else {
            return Ok(());
        };
        let snapshots = self.snapshots()?;
        let files = snapshots.files(&last)?;
        let tasks = verify_tasks::parse(&self.context.prp_text);
        let commands: Vec<&str> = detection
            .command(CommandKind::Test)
            .into_iter()
            .chain(
                tasks
                    .iter()
                    .flat_map(verify_tasks::VerifyTask::written_commands)
                    .map(String::as_str),
            )
            .collect();
        self.record
            .freeze
            .harness(&last, &files, &commands, |path| {
                snapshots.read(&last, path).ok().flatten()
            });
        Ok(())
    }

    /// On resume: prpd's own inputs must be as the run started with them (an agent may have
    /// edited them and killed prpd), unless a human accepts the change.
    pub fn check_inputs_on_resume(&mut self, policy: InputChanges) -> Result<(), DriveError> {
        if self.record.snapshots.base.is_none() {
            return Ok(());
        }
        let snapshots = self.snapshots()?;
        let number = self.record.snapshots.count + 1;
        let message = format!("prpd {}: resume", self.record.run_id);
        let last = self.record.snapshots.last.clone();
        let snapshot = self.record_snapshot(number, last.as_ref(), &message)?;
        let files = snapshots.files(&snapshot)?;
        let changed: Vec<String> = self
            .record
            .freeze
            .violations(&files, false, |path| {
                snapshots.read(&snapshot, path).ok().flatten()
            })
            .into_iter()
            .filter(|violation| frozen::is_prpd_input(&violation.path))
            .map(|violation| violation.path.display().to_string())
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        match policy {
            InputChanges::Refuse => Err(DriveError::InputsChanged {
                run_id: self.record.run_id.clone(),
                files: changed,
            }),
            InputChanges::Reload => {
                tracing::warn!(files = %changed.join(", "), "continuing with changed prpd inputs (--reload-config)");
                self.record.freeze.reload_prpd_inputs(&snapshot, &files);
                self.record.detection = Some(settings::detect(
                    &self.context.repo,
                    &self.context.mapping,
                    &self.context.config.gate,
                )?);
                self.record.config_reloads.push(changed.join(", "));
                // Every cached result was measured under the inputs a human just replaced.
                self.record.last_test_run = None;
                self.record.without_feature = None;
                self.accept(number, &snapshot);
                Ok(())
            }
        }
    }

    /// The last check before SHIP: the tree that ships still holds everything frozen (a process
    /// that outlived its agent could have changed it after QA measured).
    pub(super) fn refuse_ship_on_frozen_changes(&mut self) -> Result<Option<Event>, DriveError> {
        // A full scan, not the watcher's list: a write inotify does not report (through a
        // shared memory map) must not reach SHIP.
        if let TreeWatch::Running(watcher) = &self.tree_watch {
            watcher.forget("the last check before SHIP reads the whole tree");
        }
        let (_, violations) = self.snapshot_after_agent(Phase::Ship, 0)?;
        if violations.is_empty() {
            return Ok(None);
        }
        let files: Vec<String> = violations
            .iter()
            .map(|violation| violation.path.display().to_string())
            .collect();
        Ok(Some(Event::ShipFailed {
            message: format!(
                "frozen files changed after QA measured the tree (prpd restored them): {}; a \
                 process that outlived an agent or a measurement (the project's test or check \
                 command) may have changed them: stop it; `prpd resume` checks the tree again",
                files.join(", ")
            ),
        }))
    }

    /// Removes the run's snapshot refs when it has ended, unless the config keeps them.
    pub(super) fn release_snapshots(&self) -> Result<(), DriveError> {
        if self.context.config.snapshots == SnapshotRetention::Keep {
            return Ok(());
        }
        let removed = self.snapshots()?.remove_snapshot_refs()?;
        tracing::debug!(removed, "snapshot refs removed");
        Ok(())
    }

    fn accept(&mut self, number: u32, snapshot: &Snapshot) {
        self.record.snapshots.count = number;
        self.record.snapshots.last = Some(snapshot.clone());
    }
}

/// Whether `path` is documentation: anything under `docs/` or `doc/`, or a Markdown,
/// reStructuredText or `AsciiDoc` file elsewhere — but not a test file or the PRP itself
/// (ticking its checkboxes documents nothing).
fn is_documentation(path: &Path, prp: &Path) -> bool {
    if path == prp || frozen::is_test_file(path) {
        return false;
    }
    path.starts_with("docs")
        || path.starts_with("doc")
        || path.extension().is_some_and(|extension| {
            ["md", "markdown", "rst", "adoc"]
                .iter()
                .any(|known| extension.eq_ignore_ascii_case(known))
        })
}

/// The snapshots in `slot`, opened for `run_id` first if they are not yet.
fn kept_open<'slot>(
    slot: &'slot mut Option<Snapshots>,
    context: &Context,
    run_id: &str,
) -> Result<&'slot Snapshots, SnapshotError> {
    let snapshots = match slot.take() {
        Some(snapshots) => snapshots,
        None => Snapshots::open(
            &context.repo,
            run_id,
            &context.session.run(run_id).snapshot_index(),
        )?,
    };
    Ok(slot.insert(snapshots))
}
