//! The watched part of one repository, kept in step with the disk: every kept directory has a
//! non-recursive watch, and each debounced batch of events is turned into the changed paths
//! the daemon is told about.
//!
//! Theory of operation. A batch is read by `touched.rs`, then each path is judged as it is on
//! disk now, through the ignore rules of `ignored.rs`:
//!
//! - a kept file (or symbolic link) that changed is reported;
//! - a directory that appeared (created, moved in, or made again after a delete, which the
//!   kernel's watch of the old one does not see) is walked: it and its kept subdirectories get
//!   a fresh watch, and it is reported with every kept file and directory already inside it —
//!   `mkdir -p a/b && echo > a/b/f` is done before the watch on `a` exists, so the walk is
//!   the only witness of `a/b/f`;
//! - a path that is gone is reported unless the rules ignore it; a watched directory that is
//!   gone loses its watch and those of everything under it;
//! - a changed `.gitignore` walks the whole tree again: the rules are reloaded, directories
//!   that became kept get a watch, those that became ignored lose theirs;
//! - a lost event (the kernel's queue overflowed) walks the whole tree again too, and reports
//!   every kept path, since any of them may have changed.
//!
//! The kernel refusing a watch because its limit is reached is logged with the setting to
//! raise (`fs.inotify.max_user_watches`); at start it is an error (`files.rs`).
//!
//! `.git/info/exclude` and the global excludes file live outside the watched tree: an edit to
//! them is read at the next whole walk (a `.gitignore` change, lost events, or a restart).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::{ErrorKind, RecursiveMode};
use notify_debouncer_full::{DebouncedEvent, NoCache};

use crate::backend::Backend;
use crate::ignored::{GITIGNORE, IgnoreRules, Kind, is_git_or_session};
use crate::kept_tree::{Files, KeptTree, walk};
use crate::touched::{Touch, touched};

/// The debouncer over the forgiving kernel watcher, with no file-id cache (inotify pairs
/// renames itself; the cache would hold an entry per file of the repository).
pub(super) type Debouncer = notify_debouncer_full::Debouncer<Backend, NoCache>;

/// The kernel refused to watch a directory the watcher cannot do without: the root, or any
/// directory once the watch limit is reached.
#[derive(Debug)]
pub(super) struct Refused {
    pub(super) dir: PathBuf,
    /// How many directories the walk kept.
    pub(super) wanted: usize,
    /// How many of them were watched when the kernel refused.
    pub(super) watched: usize,
    pub(super) error: notify::Error,
}

impl Refused {
    /// Whether the kernel's limit on inotify watches is what refused.
    pub(super) fn is_watch_limit(&self) -> bool {
        matches!(self.error.kind, ErrorKind::MaxFilesWatch)
    }
}

/// What a walk of the whole tree changed.
#[derive(Debug, Default)]
struct Synced {
    /// Directories watched by this walk that were not before.
    newly_watched: BTreeSet<PathBuf>,
    /// Every kept directory and, when listed, file.
    kept: Vec<PathBuf>,
}

/// The watched directories of one repository, their ignore rules, and the debouncer that
/// holds the watches.
#[derive(Debug)]
pub(super) struct WatchedTree {
    root: PathBuf,
    rules: IgnoreRules,
    dirs: BTreeSet<PathBuf>,
    debouncer: Debouncer,
}

impl WatchedTree {
    /// A tree that watches nothing yet; [`WatchedTree::watch_all`] walks it.
    pub(super) fn new(root: PathBuf, debouncer: Debouncer) -> Self {
        let rules = IgnoreRules::load(&root, []);
        WatchedTree {
            root,
            rules,
            dirs: BTreeSet::new(),
            debouncer,
        }
    }

    /// Walks the whole repository and watches every kept directory.
    pub(super) fn watch_all(&mut self) -> Result<(), Refused> {
        self.sync(Files::Skipped).map(|_| ())
    }

    /// How many directories are watched.
    pub(super) fn watched_dirs(&self) -> usize {
        self.dirs.len()
    }

    /// Stops the debouncer; its thread ends within one debounce window.
    pub(super) fn stop(self) {
        self.debouncer.stop_nonblocking();
    }

    /// Applies a debounced batch to the watches and returns the changed paths it reports:
    /// absolute, deduplicated, sorted, none of them ignored.
    pub(super) fn absorb(&mut self, events: &[DebouncedEvent]) -> Vec<PathBuf> {
        let touched = touched(events);
        if touched.events_lost {
            tracing::warn!(
                root = %self.root.display(),
                "the kernel dropped file events; the watcher walks the repository again",
            );
            return match self.sync(Files::Listed) {
                Ok(synced) => synced.kept,
                Err(refused) => {
                    warn_refused(&refused);
                    Vec::new()
                }
            };
        }
        let mut newly_watched = BTreeSet::new();
        if touched.paths.keys().any(|path| self.is_ignore_file(path)) {
            match self.sync(Files::Skipped) {
                Ok(synced) => newly_watched = synced.newly_watched,
                Err(refused) => warn_refused(&refused),
            }
        }
        let mut changed = BTreeSet::new();
        for (path, touch) in touched.paths {
            self.judge(path, touch, &newly_watched, &mut changed);
        }
        changed.into_iter().collect()
    }

    /// Decides what one touched path means, and adds what it reports to `changed`.
    fn judge(
        &mut self,
        path: PathBuf,
        touch: Touch,
        newly_watched: &BTreeSet<PathBuf>,
        changed: &mut BTreeSet<PathBuf>,
    ) {
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_dir() => {
                if self.rules.is_ignored(&path, Kind::Directory) {
                    return;
                }
                if touch.replaced {
                    self.forget(&path);
                }
                if touch.replaced || !self.dirs.contains(&path) || newly_watched.contains(&path) {
                    changed.extend(self.adopt(&path));
                }
                changed.insert(path);
            }
            Ok(_) => {
                if !self.rules.is_ignored(&path, Kind::File) {
                    changed.insert(path);
                }
            }
            Err(_) => {
                if self.dirs.contains(&path) {
                    self.forget(&path);
                    changed.insert(path);
                } else if !self.rules.is_ignored(&path, touch.kind) {
                    changed.insert(path);
                }
            }
        }
    }

    /// Whether `path` is a `.gitignore` of the project (not one under `.git/` or
    /// `.prp-session/`).
    fn is_ignore_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == GITIGNORE)
            && path
                .strip_prefix(&self.root)
                .is_ok_and(|relative| !is_git_or_session(relative))
    }

    /// Walks a directory that appeared: reads the ignore files inside it, watches it and its
    /// kept subdirectories, and returns every kept path inside it.
    fn adopt(&mut self, dir: &Path) -> Vec<PathBuf> {
        let KeptTree { dirs, files } = walk(&self.root, dir, Files::Listed);
        for walked in &dirs {
            self.rules.add_gitignore_of(walked);
        }
        let mut kept = Vec::with_capacity(dirs.len() + files.len());
        for walked in dirs {
            if self.rules.is_ignored(&walked, Kind::Directory) {
                continue;
            }
            if !self.dirs.contains(&walked) {
                match self.watch(&walked) {
                    Ok(()) => {}
                    Err(error) if matches!(error.kind, ErrorKind::MaxFilesWatch) => {
                        warn_refused(&Refused {
                            dir: walked,
                            wanted: self.dirs.len() + 1,
                            watched: self.dirs.len(),
                            error,
                        });
                        break;
                    }
                    Err(error) => {
                        warn_unwatched(&walked, &error);
                        continue;
                    }
                }
            }
            kept.push(walked);
        }
        kept.extend(
            files
                .into_iter()
                .filter(|file| !self.rules.is_ignored(file, Kind::File)),
        );
        kept
    }

    /// Walks the whole repository again: the rules are reloaded, every kept directory gets a
    /// watch, and the watches of directories that are gone or now ignored are dropped.
    fn sync(&mut self, files: Files) -> Result<Synced, Refused> {
        let KeptTree {
            dirs,
            files: listed,
        } = walk(&self.root, &self.root, files);
        self.rules = IgnoreRules::load(&self.root, &dirs);
        let kept: BTreeSet<PathBuf> = dirs
            .into_iter()
            .filter(|dir| !self.rules.is_ignored(dir, Kind::Directory))
            .collect();
        let stale: Vec<PathBuf> = self.dirs.difference(&kept).cloned().collect();
        for dir in stale {
            self.unwatch(&dir);
        }
        let mut synced = Synced::default();
        for dir in &kept {
            if self.dirs.contains(dir) {
                continue;
            }
            match self.watch(dir) {
                Ok(()) => {
                    synced.newly_watched.insert(dir.clone());
                }
                Err(error)
                    if *dir == self.root || matches!(error.kind, ErrorKind::MaxFilesWatch) =>
                {
                    return Err(Refused {
                        dir: dir.clone(),
                        wanted: kept.len(),
                        watched: self.dirs.len(),
                        error,
                    });
                }
                Err(error) => warn_unwatched(dir, &error),
            }
        }
        synced.kept = kept.into_iter().collect();
        synced.kept.extend(
            listed
                .into_iter()
                .filter(|file| !self.rules.is_ignored(file, Kind::File)),
        );
        Ok(synced)
    }

    /// Watches one directory (not what is under it).
    fn watch(&mut self, dir: &Path) -> notify::Result<()> {
        self.debouncer.watch(dir, RecursiveMode::NonRecursive)?;
        self.dirs.insert(dir.to_path_buf());
        Ok(())
    }

    /// Drops the watch of one directory.
    fn unwatch(&mut self, dir: &Path) {
        if let Err(error) = self.debouncer.unwatch(dir) {
            tracing::debug!(dir = %dir.display(), %error, "the watch was already gone");
        }
        self.dirs.remove(dir);
    }

    /// Drops the watches of a directory and of every directory under it.
    fn forget(&mut self, dir: &Path) {
        let under: Vec<PathBuf> = self
            .dirs
            .range(dir.to_path_buf()..)
            .take_while(|watched| watched.starts_with(dir))
            .cloned()
            .collect();
        for watched in under {
            self.unwatch(&watched);
        }
    }
}

/// Logs a directory the watcher could not watch; a directory that vanished first is no news.
fn warn_unwatched(dir: &Path, error: &notify::Error) {
    if !matches!(error.kind, ErrorKind::PathNotFound) {
        tracing::warn!(
            dir = %dir.display(),
            %error,
            "the file watcher cannot watch this directory; changes in it go unseen",
        );
    }
}

/// Logs a refusal while the daemon runs, with what to do about it.
fn warn_refused(refused: &Refused) {
    if refused.is_watch_limit() {
        tracing::warn!(
            dir = %refused.dir.display(),
            wanted = refused.wanted,
            watched = refused.watched,
            "the inotify watch limit is reached; changes in new directories go unseen: raise \
             fs.inotify.max_user_watches (sysctl) and restart prpd watch"
        );
    } else {
        tracing::warn!(
            dir = %refused.dir.display(),
            error = %refused.error,
            "the file watcher cannot watch this directory; changes in it go unseen",
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use notify::event::{CreateKind, Flag, RemoveKind};
    use notify::{Event, EventKind};
    use notify_debouncer_full::new_debouncer_opt;

    use super::*;

    fn write(root: &Path, file: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x\n").unwrap();
    }

    /// A watched tree over a real debouncer whose batches go nowhere: the tests hand
    /// `absorb` the events themselves.
    fn watched(files: &[&str]) -> (tempfile::TempDir, PathBuf, WatchedTree) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        for file in files {
            write(&root, file);
        }
        let debouncer = new_debouncer_opt::<_, Backend, NoCache>(
            Duration::from_secs(60),
            None,
            |_| {},
            NoCache,
            notify::Config::default(),
        )
        .unwrap();
        let mut tree = WatchedTree::new(root.clone(), debouncer);
        tree.watch_all().unwrap();
        (dir, root, tree)
    }

    fn event(kind: EventKind, path: &Path) -> DebouncedEvent {
        DebouncedEvent::new(
            Event::new(kind).add_path(path.to_path_buf()),
            Instant::now(),
        )
    }

    #[test]
    fn lost_events_report_every_kept_path_and_watch_what_is_new() {
        let (_dir, root, mut tree) = watched(&[".gitignore", "src/lib.rs", "target/out.o"]);
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        write(&root, "src/new/mod.rs");
        let lost = DebouncedEvent::new(
            Event::new(EventKind::Other).set_flag(Flag::Rescan),
            Instant::now(),
        );
        let mut expected: Vec<PathBuf> = [
            "",
            ".gitignore",
            "src",
            "src/lib.rs",
            "src/new",
            "src/new/mod.rs",
        ]
        .iter()
        .map(|relative| root.join(relative))
        .collect();
        expected.sort();
        let mut batch = tree.absorb(&[lost]);
        batch.sort();
        assert_eq!(batch, expected);
        assert_eq!(
            tree.watched_dirs(),
            3,
            "the root, src/ and src/new/; not target/"
        );
    }

    #[test]
    fn a_gone_path_is_reported_unless_the_rules_ignore_it() {
        let (_dir, root, mut tree) = watched(&[".gitignore", "src/lib.rs"]);
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        tree.watch_all().unwrap();
        let batch = tree.absorb(&[
            event(EventKind::Remove(RemoveKind::Any), &root.join("target")),
            event(
                EventKind::Remove(RemoveKind::File),
                &root.join("src/debug.log"),
            ),
            event(
                EventKind::Remove(RemoveKind::File),
                &root.join("src/old.rs"),
            ),
            event(
                EventKind::Create(CreateKind::File),
                &root.join(".git/index.lock"),
            ),
            event(
                EventKind::Create(CreateKind::File),
                Path::new("/elsewhere/file.rs"),
            ),
        ]);
        assert_eq!(batch, [root.join("src/old.rs")]);
    }

    #[test]
    fn a_watched_directory_that_is_gone_loses_its_watch_and_those_under_it() {
        let (_dir, root, mut tree) = watched(&["a/b/c/f.rs", "ab/g.rs"]);
        assert_eq!(tree.watched_dirs(), 5);
        std::fs::remove_dir_all(root.join("a")).unwrap();
        let batch = tree.absorb(&[event(
            EventKind::Remove(RemoveKind::Folder),
            &root.join("a"),
        )]);
        assert_eq!(batch, [root.join("a")]);
        assert_eq!(
            tree.watched_dirs(),
            2,
            "the root and ab/, whose name starts like a's"
        );
    }
}
