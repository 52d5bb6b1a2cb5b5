//! The watcher that tells a run's snapshots which paths changed: one recursive inotify watch
//! (through `notify`) over the run's working tree for as long as the driver lives, collecting
//! the changed paths between two snapshots. (The daemon's own watcher in prpd-watch watches the
//! user's repository, not a run's worktree, and sits above this crate.)
//!
//! Theory of operation. The watcher's thread puts every path an event names (reads left out)
//! into a shared set; a snapshot takes the set ([`TreeWatcher::changes`]) and starts a new one.
//! inotify is asynchronous, so before the set is taken the watcher settles: it creates a file
//! with a new name under `.prp-session/` in the tree (which no snapshot holds) and waits for
//! that file's event — the kernel queues events in order, so once it has arrived, every event
//! of a write made before it has too. Until the first snapshot, after an overflow
//! (`need_rescan`), a settle that timed out or a snapshot that failed, what changed is unknown
//! and the next snapshot is a full scan, which the debug log names. An error of the watcher
//! itself (most often the kernel's watch budget, spent on a folder created during the run)
//! leaves a folder unwatched for good, so from then on every snapshot is a full scan, and a
//! warning says so once. A watcher that cannot start leaves every snapshot a full scan too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use prpd_base::paths::SESSION_DIR;

use super::Changes;

/// How long a settle waits for its own file's event before the snapshot falls back to a full
/// scan.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

/// The most changed paths the watcher keeps between two snapshots; past it (a build writing
/// its ignored output, say) the full scan is the cheaper answer and the memory stays bounded.
const MAX_PATHS: usize = 50_000;

/// What the watcher knows since the last snapshot took its set.
#[derive(Debug)]
enum Pending {
    /// Nothing certain, for this reason: the next snapshot scans everything.
    Unknown(&'static str),
    /// Only these paths changed.
    Paths(BTreeSet<PathBuf>),
}

#[derive(Debug)]
struct Shared {
    pending: Pending,
    /// Why the watcher can no longer be trusted at all, once it reported an error.
    broken: Option<&'static str>,
    /// The settle files whose event has arrived.
    settled: BTreeSet<PathBuf>,
}

impl Shared {
    /// The paths changed since the last take, or why they are not known.
    fn take(&mut self) -> Result<BTreeSet<PathBuf>, &'static str> {
        let pending = std::mem::replace(&mut self.pending, Pending::Paths(BTreeSet::new()));
        match (self.broken, pending) {
            (Some(reason), _) | (None, Pending::Unknown(reason)) => Err(reason),
            (None, Pending::Paths(paths)) => Ok(paths),
        }
    }
}

/// A watcher over one working tree.
pub struct TreeWatcher {
    settle_folder: PathBuf,
    shared: Arc<(Mutex<Shared>, Condvar)>,
    settles: Mutex<u64>,
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for TreeWatcher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TreeWatcher")
            .field("settle_folder", &self.settle_folder)
            .finish_non_exhaustive()
    }
}

impl TreeWatcher {
    /// Starts watching `workdir`; `None` (said in the debug log) when the watcher cannot start,
    /// and every snapshot is then a full scan.
    pub fn start(workdir: &Path) -> Option<TreeWatcher> {
        match TreeWatcher::try_start(workdir) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::debug!(%error, workdir = %workdir.display(), "no tree watcher: every snapshot scans the whole tree");
                None
            }
        }
    }

    fn try_start(workdir: &Path) -> Result<TreeWatcher, Box<dyn std::error::Error>> {
        let workdir = workdir.canonicalize()?;
        let settle_folder = workdir.join(SESSION_DIR);
        std::fs::create_dir_all(&settle_folder)?;
        let shared = Arc::new((
            Mutex::new(Shared {
                pending: Pending::Unknown("the tree watcher has just started"),
                broken: None,
                settled: BTreeSet::new(),
            }),
            Condvar::new(),
        ));
        let handler_shared = Arc::clone(&shared);
        let root = workdir.clone();
        let mut watcher = RecommendedWatcher::new(
            move |event: notify::Result<Event>| {
                let (lock, ready) = &*handler_shared;
                let mut shared = lock.lock().unwrap_or_else(PoisonError::into_inner);
                collect(&root, event, &mut shared);
                ready.notify_all();
            },
            notify::Config::default().with_follow_symlinks(false),
        )?;
        watcher.watch(&workdir, RecursiveMode::Recursive)?;
        Ok(TreeWatcher {
            settle_folder,
            shared,
            settles: Mutex::new(0),
            _watcher: watcher,
        })
    }

    /// What changed since the last call, after the events of every write made before this
    /// call have arrived; [`Changes::All`] when that is not known.
    pub fn changes(&self) -> Changes {
        let settled = self.settle();
        let (lock, _) = &*self.shared;
        let taken = lock.lock().unwrap_or_else(PoisonError::into_inner).take();
        let reason = match (settled, taken) {
            (Ok(()), Ok(paths)) => return Changes::Paths(paths),
            (Ok(()), Err(reason)) | (Err(reason), _) => reason,
        };
        tracing::debug!(
            reason,
            "the tree watcher cannot list the changes: a full scan"
        );
        Changes::All
    }

    /// Makes the next [`TreeWatcher::changes`] answer [`Changes::All`] (a snapshot that failed
    /// may have lost the set it took).
    pub fn forget(&self, reason: &'static str) {
        let (lock, _) = &*self.shared;
        lock.lock().unwrap_or_else(PoisonError::into_inner).pending = Pending::Unknown(reason);
    }

    fn settle(&self) -> Result<(), &'static str> {
        let number = {
            let mut settles = self.settles.lock().unwrap_or_else(PoisonError::into_inner);
            *settles += 1;
            *settles
        };
        // A name no agent can guess: a settle file made in advance would answer before the
        // events of the writes that followed it.
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let file = self
            .settle_folder
            .join(format!("snapshot-settle-{number}-{nonce}"));
        // An agent may have removed the folder; a recreated one is watched again.
        std::fs::create_dir_all(&self.settle_folder)
            .and_then(|()| std::fs::write(&file, b""))
            .map_err(|_| "the settle file could not be written")?;
        let (lock, ready) = &*self.shared;
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        let mut shared = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let arrived = loop {
            if shared.settled.remove(&file) {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            shared = ready
                .wait_timeout(shared, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        shared.settled.clear();
        drop(shared);
        let _ = std::fs::remove_file(&file);
        if arrived {
            Ok(())
        } else {
            Err("the tree watcher did not settle in time")
        }
    }
}

/// Puts what `event` says into `shared`.
fn collect(root: &Path, event: notify::Result<Event>, shared: &mut Shared) {
    let event = match event {
        Ok(event) => event,
        Err(error) => {
            if shared.broken.is_none() {
                let reason = if let notify::ErrorKind::MaxFilesWatch = error.kind {
                    "the kernel's limit on inotify watches is reached"
                } else {
                    "the tree watcher reported an error"
                };
                tracing::warn!(
                    %error,
                    "{reason}: a folder may be unwatched, so every later snapshot of this run \
                     scans the whole tree (raise fs.inotify.max_user_watches with sysctl: the \
                     run's next session, after a stop or an escalation, watches again)"
                );
                shared.broken = Some(reason);
            }
            return;
        }
    };
    if event.need_rescan() {
        shared.pending = Pending::Unknown("the tree watcher overflowed");
        return;
    }
    let read_only = matches!(
        event.kind,
        EventKind::Access(kind) if kind != AccessKind::Close(AccessMode::Write)
    );
    for path in &event.paths {
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        if relative.starts_with(SESSION_DIR) {
            if path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("snapshot-settle-"))
            {
                shared.settled.insert(path.clone());
            }
            continue;
        }
        if read_only || relative.starts_with(".git") {
            continue;
        }
        match &mut shared.pending {
            Pending::Paths(paths) if paths.len() >= MAX_PATHS => {
                shared.pending = Pending::Unknown("more paths changed than the watcher keeps");
            }
            Pending::Paths(paths) => {
                paths.insert(relative.to_path_buf());
            }
            Pending::Unknown(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use notify::{Event, EventKind};

    use super::{Pending, Shared, TreeWatcher, collect};
    use crate::snapshot::Changes;

    #[test]
    fn the_first_answer_is_unknown_then_the_paths_written_since() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        let watcher = TreeWatcher::start(dir.path()).expect("the watcher starts");
        assert_eq!(watcher.changes(), Changes::All);
        assert_eq!(watcher.changes(), Changes::Paths(BTreeSet::new()));
        std::fs::write(dir.path().join("src/a.py"), "a\n").expect("write");
        std::fs::create_dir_all(dir.path().join("new/deeper")).expect("mkdir");
        std::fs::write(dir.path().join("new/deeper/b.py"), "b\n").expect("write");
        let Changes::Paths(paths) = watcher.changes() else {
            panic!("the watcher knows what changed");
        };
        assert!(paths.contains(&PathBuf::from("src/a.py")), "{paths:?}");
        assert!(paths.contains(&PathBuf::from("new")), "{paths:?}");
        assert!(
            paths
                .iter()
                .all(|path| !path.starts_with(prpd_base::paths::SESSION_DIR)),
            "{paths:?}"
        );
        let _ = std::fs::read_to_string(dir.path().join("src/a.py"));
        assert_eq!(
            watcher.changes(),
            Changes::Paths(BTreeSet::new()),
            "a read is no change"
        );
        watcher.forget("a test");
        assert_eq!(watcher.changes(), Changes::All);
    }

    #[test]
    fn after_an_error_no_list_of_changes_is_trusted_again() {
        let root = std::path::Path::new("/repo");
        let mut shared = Shared {
            pending: Pending::Paths(BTreeSet::new()),
            broken: None,
            settled: BTreeSet::new(),
        };
        let write = |path: &str| {
            Ok(
                Event::new(EventKind::Modify(notify::event::ModifyKind::Any))
                    .add_path(root.join(path)),
            )
        };
        collect(root, write("src/a.py"), &mut shared);
        assert_eq!(
            shared.take(),
            Ok(BTreeSet::from([PathBuf::from("src/a.py")]))
        );
        // A folder the kernel would not watch: writes in it are never reported.
        collect(
            root,
            Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch)),
            &mut shared,
        );
        for _ in 0..2 {
            collect(root, write("src/b.py"), &mut shared);
            assert_eq!(
                shared.take(),
                Err("the kernel's limit on inotify watches is reached")
            );
        }
    }
}
