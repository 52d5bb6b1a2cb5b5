//! Git-native snapshots of the working tree: after each iteration prpd records the tree as a
//! commit on a private ref `refs/prpd/<run-id>/<n>`, so every measurement, freeze and restore
//! is about an exact, content-addressed tree rather than a walk prpd did itself.
//!
//! Theory of operation. A snapshot is built through the run's own index file
//! (`.prp-session/runs/<id>/snapshot.index`), never the repository's: `add_all` + `update_all`
//! over the working tree, which honours `.gitignore` (and `.git/info/exclude`, where prpd keeps
//! `.prp-session/` out), then `write_tree` and a commit whose parent is the previous snapshot
//! (the first one's parent is `HEAD`). The run's index keeps git's stat cache between
//! iterations, and the first one starts from a copy of the repository's index, so a file that
//! did not change is stat-ed but not read again, and there is no file cap at any size. The
//! tree id is the fingerprint; a file's blob id is its content hash, so frozen-file checks
//! compare ids.
//!
//! The full scan still stats every file. [`Snapshots::record_changes`] takes what prpd knows
//! changed since this value's last snapshot ([`Changes`]): with a list of paths it updates
//! only their entries (`changed.rs`), so an unchanged tree is not read at all; without one, or
//! when a path changes the rules themselves (a `.gitignore`), it is the full scan. After its
//! first snapshot a `Snapshots` keeps the run's index in memory, attached to its repository,
//! so a snapshot from changed paths neither reads nor writes the index file (its cost grows
//! with the change, not the tree); a full scan writes the file, and so does a snapshot that
//! removed an entry (a file the file still tracked could come back ignored, and be tracked
//! again by the next session). Otherwise the file is only a cache: the next session's first
//! snapshot is a full scan, and git's stat cache in an older file means more files read again. Such a snapshot's tree is the last one with the changed regions
//! replaced (`updated_tree.rs`), and a listing of its files can be brought up to date from the
//! last one the same way (`listing.rs`).
//!
//! The user's own index, branches and `HEAD` are never touched. The snapshot refs go when the
//! run ends unless `[run] keep_snapshots = true` (the record's seal stays); the objects are left
//! to git's garbage collection.

mod changed;
mod listing;
mod overlay;
mod rewrite;
mod seal;
mod test_diff;
mod updated_tree;
mod watcher;

pub use changed::Changes;
pub use test_diff::TestDiff;
pub use watcher::TreeWatcher;

use changed::Scan;

pub use rewrite::Rewritten;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use git2::{IndexAddOption, Oid, Repository, Signature};

use prpd_base::paths::SESSION_DIR;
use serde::{Deserialize, Serialize};

/// Folders of installed dependencies that git ignores and a checkout or worktree lacks (a run's
/// worktree links them in; the run without the feature borrows them).
pub const DEPENDENCY_FOLDERS: &[&str] = &["node_modules", ".venv", "venv"];

/// The namespace of prpd's private refs.
const REF_PREFIX: &str = "refs/prpd";

/// One recorded tree: the commit on the private ref and its tree (the fingerprint).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The snapshot commit, hex.
    pub commit: String,
    /// The commit's tree, hex: equal trees are equal working trees.
    pub tree: String,
}

/// The snapshots of a run as the record keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotLog {
    /// The tree before any agent ran (`refs/prpd/<run>/0`).
    pub base: Option<Snapshot>,
    /// The last tree prpd accepted (after refused changes were restored).
    pub last: Option<Snapshot>,
    /// The number of the last snapshot.
    pub count: u32,
    /// The snapshot each iteration ended on, by the iteration's sequence number in the run
    /// (its directory `iterations/<sequence>-<phase>-<n>`).
    pub iterations: BTreeMap<u32, u32>,
}

/// How one file differs between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Added,
    Modified,
    Deleted,
}

/// Something git could not do.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{} is not a git repository (prpd records its snapshots in git)", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to {action} in {}", repo.display())]
    Git {
        action: &'static str,
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to restore {} from snapshot {commit}", path.display())]
    Restore {
        path: PathBuf,
        commit: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to remove {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to prepare the snapshot index {}", path.display())]
    Index {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The snapshots of one run in one repository.
pub struct Snapshots {
    repo: Repository,
    workdir: PathBuf,
    run_id: String,
    index_path: PathBuf,
    /// The tree of this value's last snapshot, which the next one from changed paths starts
    /// from (`snapshot/updated_tree.rs`); once there is one, the run's index is attached to
    /// `repo`, in memory (see [`Snapshots::record_changes`]).
    last_tree: Mutex<Option<Oid>>,
    /// Whether the index in memory lost an entry its file still holds (`changed.rs`).
    index_lost_entries: AtomicBool,
}

impl std::fmt::Debug for Snapshots {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Snapshots")
            .field("workdir", &self.workdir)
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl Snapshots {
    /// Opens the repository at `workdir` for the snapshots of `run_id`, keeping the run's index
    /// at `index_path`.
    pub fn open(
        workdir: &Path,
        run_id: &str,
        index_path: &Path,
    ) -> Result<Snapshots, SnapshotError> {
        let repo = Repository::open(workdir).map_err(|source| SnapshotError::NotARepository {
            path: workdir.to_path_buf(),
            source,
        })?;
        Ok(Snapshots {
            repo,
            workdir: workdir.to_path_buf(),
            run_id: run_id.to_owned(),
            index_path: index_path.to_path_buf(),
            last_tree: Mutex::new(None),
            index_lost_entries: AtomicBool::new(false),
        })
    }

    fn git<T>(
        &self,
        action: &'static str,
        result: Result<T, git2::Error>,
    ) -> Result<T, SnapshotError> {
        result.map_err(|source| SnapshotError::Git {
            action,
            repo: self.workdir.clone(),
            source,
        })
    }

    /// The repository's `info/exclude` file (in the common git directory, which linked
    /// worktrees share), whose patterns decide what a snapshot holds.
    pub fn exclude_file(&self) -> PathBuf {
        self.repo.commondir().join("info").join("exclude")
    }

    /// The private ref of snapshot `number`.
    pub fn ref_name(&self, number: u32) -> String {
        format!("{REF_PREFIX}/{}/{number}", self.run_id)
    }

    /// Records the working tree as snapshot `number`, with `parent` (the previous snapshot) or
    /// `HEAD` as its parent, by a full scan of the tree.
    pub fn record(
        &self,
        number: u32,
        parent: Option<&Snapshot>,
        message: &str,
    ) -> Result<Snapshot, SnapshotError> {
        self.record_changes(number, parent, message, &Changes::All)
    }

    /// The same, looking only at what `changes` says may have changed since this value's last
    /// snapshot (see [`Changes`]); it falls back to the full scan when it cannot be sure (its
    /// first snapshot included), and says why in the debug log.
    pub fn record_changes(
        &self,
        number: u32,
        parent: Option<&Snapshot>,
        message: &str,
        changes: &Changes,
    ) -> Result<Snapshot, SnapshotError> {
        let tree_id = self.index_tree(changes)?;
        self.commit_tree(number, parent, message, tree_id)
    }

    /// The same, unless the tree is `parent`'s: then nothing is recorded (`None`).
    pub fn record_if_changed(
        &self,
        number: u32,
        parent: &Snapshot,
        message: &str,
        changes: &Changes,
    ) -> Result<Option<Snapshot>, SnapshotError> {
        let tree_id = self.index_tree(changes)?;
        if tree_id.to_string() == parent.tree {
            return Ok(None);
        }
        self.commit_tree(number, Some(parent), message, tree_id)
            .map(Some)
    }

    /// Brings the run's index up to the working tree (see [`Snapshots::record_changes`]) and
    /// writes its tree.
    fn index_tree(&self, changes: &Changes) -> Result<Oid, SnapshotError> {
        let mut last_tree = self
            .last_tree
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let kept = last_tree.is_some();
        let fresh = !kept && !self.index_path.exists();
        if fresh {
            if let Some(parent_dir) = self.index_path.parent() {
                std::fs::create_dir_all(parent_dir).map_err(|source| SnapshotError::Index {
                    path: parent_dir.to_path_buf(),
                    source,
                })?;
            }
            // Starting from the repository's own index gives the first snapshot git's stat cache
            // too; a missing one (a repository without commits) just starts empty.
            let _ = std::fs::copy(self.repo.path().join("index"), &self.index_path);
        }
        let mut index = if kept {
            self.git("read the kept snapshot index", self.repo.index())?
        } else {
            let mut index = self.git(
                "open the snapshot index",
                git2::Index::open(&self.index_path),
            )?;
            self.git("attach the snapshot index", self.repo.set_index(&mut index))?;
            index
        };
        let scan = match changes {
            Changes::All => Scan::Full("no list of changed paths"),
            // The paths changed since this value's last snapshot: an index not yet kept in
            // memory may be older than that (its file is written by full scans only).
            Changes::Paths(_) if !kept => Scan::Full("the run's index was not kept in memory"),
            Changes::Paths(paths) => self.update_paths(&mut index, paths)?,
        };
        if let Scan::Full(reason) = scan {
            tracing::debug!(reason, "snapshot by a full scan of the tree");
            self.full_scan(&mut index)?;
        }
        let updated = match (&scan, *last_tree) {
            (Scan::Paths(regions), Some(base)) => self.updated_tree(base, &index, regions),
            _ => None,
        };
        let tree_id = match updated {
            Some(tree_id) => tree_id,
            // The tree first: it fills the index's tree cache, which the index file then keeps,
            // so the next full scan rebuilds only the trees of the folders that changed.
            None => self.git("write the snapshot tree", index.write_tree())?,
        };
        let lost_entries = self.index_lost_entries.swap(false, Ordering::Relaxed);
        if matches!(scan, Scan::Full(_)) || lost_entries {
            self.git("write the snapshot index", index.write())?;
        }
        *last_tree = Some(tree_id);
        Ok(tree_id)
    }

    /// Commits `tree_id` as snapshot `number` on `parent` (the commit `HEAD` names for none).
    fn commit_tree(
        &self,
        number: u32,
        parent: Option<&Snapshot>,
        message: &str,
        tree_id: Oid,
    ) -> Result<Snapshot, SnapshotError> {
        let tree = self.git("find the snapshot tree", self.repo.find_tree(tree_id))?;
        let parent_commit = match parent {
            Some(parent) => Some(self.commit_of(&parent.commit)?),
            None => self
                .repo
                .head()
                .ok()
                .and_then(|head| head.peel_to_commit().ok()),
        };
        let signature = self.git(
            "make the snapshot signature",
            Signature::now("prpd", "prpd@localhost"),
        )?;
        let parents: Vec<&git2::Commit<'_>> = parent_commit.iter().collect();
        let commit = self.git(
            "commit the snapshot",
            self.repo
                .commit(None, &signature, &signature, message, &tree, &parents),
        )?;
        self.git(
            "write the snapshot ref",
            self.repo
                .reference(&self.ref_name(number), commit, true, message),
        )?;
        Ok(Snapshot {
            commit: commit.to_string(),
            tree: tree_id.to_string(),
        })
    }

    /// Brings the whole run's index up to the working tree: every file is stat'ed, and the
    /// changed ones read.
    fn full_scan(&self, index: &mut git2::Index) -> Result<(), SnapshotError> {
        self.git(
            "add the working tree to the snapshot index",
            // A pathspec, not none: git2 reads the matched pathspec the callback gets, which
            // libgit2 leaves null without one.
            index.add_all(
                ["*"].iter(),
                IndexAddOption::DEFAULT,
                Some(&mut |path: &Path, _: &[u8]| i32::from(Snapshots::left_out(path))),
            ),
        )?;
        self.git(
            "update the snapshot index",
            index.update_all(["*"].iter(), None),
        )
    }

    /// Snapshot `number` of this run, if its ref is still there.
    pub fn at(&self, number: u32) -> Option<Snapshot> {
        let reference = self.repo.find_reference(&self.ref_name(number)).ok()?;
        let commit = reference.peel_to_commit().ok()?;
        Some(Snapshot {
            commit: commit.id().to_string(),
            tree: commit.tree_id().to_string(),
        })
    }

    /// Paths a snapshot never holds: prpd's own state (kept out through `.git/info/exclude`,
    /// which a linked worktree does not read), a nested repository that is not a submodule,
    /// which git cannot add (a user's clone under `examples/`, a test's `git init`), and the
    /// link to the user's dependency folder prpd made in a run's worktree (a link is a file to
    /// git, so a `node_modules/` ignore pattern does not match it).
    fn left_out(path: &Path) -> bool {
        path.starts_with(SESSION_DIR)
            || path.to_str().is_some_and(|text| text.ends_with('/'))
            || DEPENDENCY_FOLDERS
                .iter()
                .any(|folder| path == Path::new(folder))
    }

    fn commit_of(&self, hex: &str) -> Result<git2::Commit<'_>, SnapshotError> {
        let oid = self.git("read a snapshot id", Oid::from_str(hex))?;
        self.git("find a snapshot commit", self.repo.find_commit(oid))
    }

    /// The difference between the trees of `from` and `to`.
    fn diff(&self, from: &Snapshot, to: &Snapshot) -> Result<git2::Diff<'_>, SnapshotError> {
        let old = self.tree_of(from)?;
        let new = self.tree_of(to)?;
        self.git(
            "compare two snapshots",
            self.repo.diff_tree_to_tree(Some(&old), Some(&new), None),
        )
    }

    fn tree_of(&self, snapshot: &Snapshot) -> Result<git2::Tree<'_>, SnapshotError> {
        let oid = self.git("read a snapshot tree id", Oid::from_str(&snapshot.tree))?;
        self.git("find a snapshot tree", self.repo.find_tree(oid))
    }

    /// The files of the working tree that differ from `snapshot`, each with whether it is new,
    /// found without writing anything to git's objects (unlike [`Snapshots::record`]): what a
    /// snapshot leaves out is left out.
    pub fn changed_in_tree(
        &self,
        snapshot: &Snapshot,
    ) -> Result<Vec<(PathBuf, bool)>, SnapshotError> {
        let tree = self.tree_of(snapshot)?;
        let mut options = git2::DiffOptions::new();
        options.include_untracked(true).recurse_untracked_dirs(true);
        let diff = self.git(
            "compare the working tree with a snapshot",
            self.repo
                .diff_tree_to_workdir(Some(&tree), Some(&mut options)),
        )?;
        let mut changed = Vec::new();
        for delta in diff.deltas() {
            let Some(path) = delta.new_file().path().or_else(|| delta.old_file().path()) else {
                continue;
            };
            if Snapshots::left_out(path) {
                continue;
            }
            let added = matches!(delta.status(), git2::Delta::Added | git2::Delta::Untracked);
            changed.push((path.to_path_buf(), added));
        }
        Ok(changed)
    }

    /// The files that differ between `from` and `to`.
    pub fn changes(
        &self,
        from: &Snapshot,
        to: &Snapshot,
    ) -> Result<BTreeMap<PathBuf, Change>, SnapshotError> {
        let diff = self.diff(from, to)?;
        let mut changes = BTreeMap::new();
        for delta in diff.deltas() {
            let change = match delta.status() {
                git2::Delta::Added | git2::Delta::Copied | git2::Delta::Untracked => Change::Added,
                git2::Delta::Deleted => Change::Deleted,
                git2::Delta::Modified
                | git2::Delta::Renamed
                | git2::Delta::Typechange
                | git2::Delta::Unmodified
                | git2::Delta::Ignored
                | git2::Delta::Unreadable
                | git2::Delta::Conflicted => Change::Modified,
            };
            let path = delta.new_file().path().or_else(|| delta.old_file().path());
            if let Some(path) = path {
                changes.insert(path.to_path_buf(), change);
            }
        }
        Ok(changes)
    }

    /// A unified diff of what changed between `from` and `to`, as `git diff` prints it.
    pub fn patch(&self, from: &Snapshot, to: &Snapshot) -> Result<String, SnapshotError> {
        self.patch_of(from, to, &[])
    }

    /// The same, limited to `paths` (all files when empty).
    pub fn patch_of(
        &self,
        from: &Snapshot,
        to: &Snapshot,
        paths: &[PathBuf],
    ) -> Result<String, SnapshotError> {
        let old = self.tree_of(from)?;
        let new = self.tree_of(to)?;
        let mut options = git2::DiffOptions::new();
        for path in paths {
            options.pathspec(path);
        }
        options.disable_pathspec_match(true);
        let diff = self.git(
            "compare two snapshots",
            self.repo
                .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options)),
        )?;
        let mut text = String::new();
        self.git(
            "print a snapshot diff",
            diff.print(git2::DiffFormat::Patch, |_, _, line| {
                if matches!(line.origin(), '+' | '-' | ' ') {
                    text.push(line.origin());
                }
                text.push_str(&String::from_utf8_lossy(line.content()));
                true
            }),
        )?;
        Ok(text)
    }

    /// Puts `path` back as it is in `snapshot` — its content and executable bit, or the link it
    /// was — or removes it when the snapshot has no such file. Whatever stands at the path now
    /// (a symlink pointing out of the repository, a directory) is removed first, never written
    /// through.
    pub fn restore(&self, snapshot: &Snapshot, path: &Path) -> Result<(), SnapshotError> {
        let tree = self.tree_of(snapshot)?;
        let Ok(entry) = tree.get_path(path) else {
            return self.remove(path);
        };
        let io_error = |source| SnapshotError::Restore {
            path: path.to_path_buf(),
            commit: snapshot.commit.clone(),
            source,
        };
        let target = self.workdir.join(path);
        self.remove(path)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_error)?;
        }
        match entry.filemode() {
            0o120_000 => {
                let blob = self.git("read a frozen link", self.repo.find_blob(entry.id()))?;
                let link = PathBuf::from(String::from_utf8_lossy(blob.content()).into_owned());
                std::os::unix::fs::symlink(link, &target).map_err(io_error)?;
            }
            0o160_000 => {
                return Err(io_error(std::io::Error::other(
                    "it is a submodule, which prpd does not restore",
                )));
            }
            mode => {
                let blob = self.git("read a frozen file", self.repo.find_blob(entry.id()))?;
                std::fs::write(&target, blob.content()).map_err(io_error)?;
                set_executable(&target, mode == 0o100_755).map_err(io_error)?;
            }
        }
        Ok(())
    }

    /// Removes whatever is at `path` in the working tree (a file, a link — not what it points
    /// to — or a directory); nothing there is fine.
    pub fn remove(&self, path: &Path) -> Result<(), SnapshotError> {
        let target = self.workdir.join(path);
        let result = match std::fs::symlink_metadata(&target) {
            Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(&target),
            Ok(_) => std::fs::remove_file(&target),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error),
        };
        result.map_err(|source| SnapshotError::Remove {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The text of `path` in `snapshot`, if the file is there and is UTF-8.
    pub fn read(&self, snapshot: &Snapshot, path: &Path) -> Result<Option<String>, SnapshotError> {
        let tree = self.tree_of(snapshot)?;
        let Ok(entry) = tree.get_path(path) else {
            return Ok(None);
        };
        let blob = self.git("read a snapshot file", self.repo.find_blob(entry.id()))?;
        Ok(std::str::from_utf8(blob.content()).ok().map(str::to_owned))
    }

    /// Removes every ref of this run but the seal of its record, which `prpd status` checks
    /// for as long as the record is there (one ref per run).
    pub fn remove_snapshot_refs(&self) -> Result<usize, SnapshotError> {
        let pattern = format!("{REF_PREFIX}/{}/*", self.run_id);
        let mut names = Vec::new();
        for reference in self.git(
            "list the snapshot refs",
            self.repo.references_glob(&pattern),
        )? {
            let reference = self.git("read a snapshot ref", reference)?;
            if let Ok(name) = reference.name() {
                names.push(name.to_owned());
            }
        }
        names.retain(|name| *name != self.seal_ref("record"));
        for name in &names {
            let mut reference = self.git("find a snapshot ref", self.repo.find_reference(name))?;
            self.git("delete a snapshot ref", reference.delete())?;
        }
        Ok(names.len())
    }
}

/// An index entry for `path` with the object `id` and `mode`, for a tree prpd builds in
/// memory (no stat data: no working tree backs it).
pub(crate) fn index_entry(path: &Path, id: Oid, mode: u32) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.to_string_lossy().into_owned().into_bytes(),
    }
}

fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut permissions = std::fs::metadata(path)?.permissions();
    let mode = permissions.mode();
    let wanted = if executable {
        mode | 0o111
    } else {
        mode & !0o111
    };
    if wanted != mode {
        permissions.set_mode(wanted);
        std::fs::set_permissions(path, permissions)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn repo_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        for (path, text) in files {
            let target = dir.path().join(path);
            std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
            std::fs::write(target, text).expect("write");
        }
        let mut index = repo.index().expect("index");
        index
            .add_all(["*"].iter(), IndexAddOption::DEFAULT, None)
            .expect("add");
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let signature = Signature::now("t", "t@example.com").expect("sig");
        repo.commit(Some("HEAD"), &signature, &signature, "base", &tree, &[])
            .expect("commit");
        dir
    }

    pub(super) fn snapshots(dir: &Path) -> Snapshots {
        Snapshots::open(dir, "run-1", &dir.join(".prp-session/snapshot.index")).expect("open")
    }

    #[test]
    fn an_unchanged_tree_has_the_same_tree_id_and_a_change_shows_by_path() {
        let dir = repo_with(&[("src/a.py", "a\n"), ("tests/test_a.py", "t\n")]);
        std::fs::write(dir.path().join(".gitignore"), "build/\n.prp-session/\n").expect("write");
        let snaps = snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        let again = snaps.record(1, Some(&first), "same").expect("record");
        assert_eq!(first.tree, again.tree);

        std::fs::create_dir_all(dir.path().join("build")).expect("mkdir");
        std::fs::write(dir.path().join("build/out.o"), "ignored").expect("write");
        std::fs::write(dir.path().join("src/a.py"), "changed\n").expect("write");
        std::fs::write(dir.path().join("src/b.py"), "new\n").expect("write");
        std::fs::remove_file(dir.path().join("tests/test_a.py")).expect("rm");
        let second = snaps.record(2, Some(&again), "edit").expect("record");
        let changes = snaps.changes(&again, &second).expect("changes");
        assert_eq!(
            changes,
            BTreeMap::from([
                (PathBuf::from("src/a.py"), Change::Modified),
                (PathBuf::from("src/b.py"), Change::Added),
                (PathBuf::from("tests/test_a.py"), Change::Deleted),
            ])
        );
        assert!(
            snaps
                .patch(&again, &second)
                .expect("patch")
                .contains("+changed")
        );
    }

    #[test]
    fn an_unchanged_tree_is_not_recorded_again_when_asked_only_for_a_change() {
        let dir = repo_with(&[("src/a.py", "a\n")]);
        let snaps = snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        let all = Changes::All;
        let same = snaps
            .record_if_changed(1, &first, "same", &all)
            .expect("record");
        assert_eq!(same, None);
        assert!(snaps.at(1).is_none(), "no ref for a snapshot not recorded");
        std::fs::write(dir.path().join("src/a.py"), "b\n").expect("write");
        let changed = snaps
            .record_if_changed(1, &first, "changed", &all)
            .expect("record")
            .expect("a changed tree is recorded");
        assert_ne!(changed.tree, first.tree);
        assert_eq!(snaps.at(1), Some(changed));
    }

    #[test]
    fn restore_puts_back_content_and_removes_files_the_snapshot_lacks() {
        let dir = repo_with(&[("run_tests.py", "real\n")]);
        let snaps = snapshots(dir.path());
        let frozen = snaps.record(0, None, "frozen").expect("record");
        std::fs::write(
            dir.path().join("run_tests.py"),
            "print('3 passed, 0 failed')\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("conftest.py"), "cheat\n").expect("write");
        snaps
            .restore(&frozen, Path::new("run_tests.py"))
            .expect("restore");
        snaps
            .restore(&frozen, Path::new("conftest.py"))
            .expect("restore");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("run_tests.py")).expect("read"),
            "real\n"
        );
        assert!(!dir.path().join("conftest.py").exists());
    }

    #[test]
    fn refs_are_private_and_removed_with_the_run() {
        let dir = repo_with(&[("a.txt", "a\n")]);
        let snaps = snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        snaps.record(1, Some(&first), "next").expect("record");
        let repo = Repository::open(dir.path()).expect("open");
        assert!(repo.find_reference("refs/prpd/run-1/1").is_ok());
        let head = repo.head().expect("head");
        assert!(head.is_branch(), "HEAD stays on the user's branch");
        assert_eq!(
            head.peel_to_commit().expect("commit").message(),
            Ok("base"),
            "snapshots never move the user's branch"
        );
        assert_eq!(snaps.remove_snapshot_refs().expect("remove"), 2);
        assert!(repo.find_reference("refs/prpd/run-1/0").is_err());
    }

    #[test]
    fn a_nested_repository_and_prpds_state_are_left_out() {
        let dir = repo_with(&[("a.txt", "a\n")]);
        Repository::init(dir.path().join("examples/clone")).expect("nested init");
        std::fs::write(dir.path().join("examples/clone/x.txt"), "x").expect("write");
        std::fs::create_dir_all(dir.path().join(".prp-session")).expect("mkdir");
        std::fs::write(dir.path().join(".prp-session/state.json"), "{}").expect("write");
        let snaps = snapshots(dir.path());
        let snapshot = snaps
            .record(0, None, "base")
            .expect("a nested repository is no error");
        let files = snaps.files(&snapshot).expect("files");
        assert_eq!(files.keys().collect::<Vec<_>>(), vec![Path::new("a.txt")]);
    }

    #[test]
    fn restore_replaces_a_symlink_instead_of_writing_through_it() {
        let dir = repo_with(&[("tests/test_a.py", "real test\n")]);
        let outside = tempfile::NamedTempFile::new().expect("outside file");
        std::fs::write(outside.path(), "the user's data").expect("write");
        let snaps = snapshots(dir.path());
        let frozen = snaps.record(0, None, "frozen").expect("record");
        let target = dir.path().join("tests/test_a.py");
        std::fs::remove_file(&target).expect("rm");
        std::os::unix::fs::symlink(outside.path(), &target).expect("symlink");
        snaps
            .restore(&frozen, Path::new("tests/test_a.py"))
            .expect("restore");
        assert_eq!(
            std::fs::read_to_string(outside.path()).expect("read"),
            "the user's data"
        );
        assert!(
            !std::fs::symlink_metadata(&target)
                .expect("stat")
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            "real test\n"
        );
    }
}
