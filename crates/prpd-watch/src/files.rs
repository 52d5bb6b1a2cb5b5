//! The daemon's file watcher: what turns edits in the repository into debounced batches of
//! changed paths, seeing the tree as git does.
//!
//! Theory of operation. [`FileWatcher::start`] walks the repository gitignore-aware and puts a
//! non-recursive inotify watch on every kept directory — a recursive watch would spend one on
//! every ignored directory too (a `node_modules/` or `target/` of thousands), and the kernel's
//! budget (`fs.inotify.max_user_watches`) is shared by every program of the user. The events go
//! through notify's full debouncer, which runs its own thread, merges the events of each path
//! (pairing the two halves of a rename) and, ten times per debounce window, hands over the
//! paths whose last event is at least one window old: a change comes out between one window
//! and a tenth more after the burst it belongs to settled (a burst with pauses longer than a
//! window comes out in several batches). Each batch is applied to the watches and judged by the ignore
//! rules (`watched_tree.rs`), and the changed paths, if any, are sent to the daemon's channel.
//!
//! The watched tree lives behind a mutex the debouncer's thread reaches through a weak
//! reference; dropping the [`FileWatcher`] takes the tree out, so no batch is sent after the
//! drop, and stops the debouncer without waiting: its thread ends within one tick, and the
//! channel's sender goes with it. A channel whose receiver is gone ends the work quietly: the
//! batch is not even computed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use notify_debouncer_full::{DebounceEventResult, NoCache, new_debouncer_opt};
use tokio::sync::mpsc::UnboundedSender;

use crate::backend::Backend;
use crate::watched_tree::{Refused, WatchedTree};

/// Where the kernel's limit on inotify watches per user is read and set.
const MAX_USER_WATCHES: &str = "/proc/sys/fs/inotify/max_user_watches";

/// The shortest debounce the watcher uses: its thread wakes ten times per window, and a window
/// of zero would keep it spinning.
const MIN_DEBOUNCE: Duration = Duration::from_millis(10);

/// How often the debouncer looks for settled events: a tenth of the debounce, so a change
/// comes out at most a tenth after its window settled (550 ms for the default 500 ms), at the
/// cost of ten wake-ups per window while idle.
fn tick(debounce: Duration) -> Duration {
    (debounce / 10).max(Duration::from_millis(5))
}

/// Watches a repository's kept files and reports debounced batches of changed paths.
#[derive(Debug)]
pub struct FileWatcher {
    /// The watched tree; `None` once the watcher is dropped, which the debouncer's thread
    /// reads as "send nothing more".
    tree: Arc<Mutex<Option<WatchedTree>>>,
}

/// The file watcher could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("failed to watch {}: it is not a directory prpd can read", path.display())]
    Repository {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "failed to start the file watcher (an inotify instance); when the user's limit of \
         instances is reached, raise it with `sudo sysctl fs.inotify.max_user_instances=1024`"
    )]
    Start {
        #[source]
        source: notify::Error,
    },
    #[error(
        "failed to watch {}: the inotify watch limit ({limit}) is reached after {watched} of the \
         {wanted} directories the repository keeps; raise it with \
         `sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it), \
         or ignore more directories in .gitignore",
        repo.display()
    )]
    WatchLimit {
        repo: PathBuf,
        wanted: usize,
        watched: usize,
        /// The limit as the kernel states it, or "unknown".
        limit: String,
    },
    #[error("failed to watch {}", dir.display())]
    Watch {
        dir: PathBuf,
        #[source]
        source: notify::Error,
    },
}

impl FileWatcher {
    /// Walks `repo` gitignore-aware and watches every kept directory non-recursively.
    /// Debounced batches of changed paths (absolute, deduplicated, sorted) go to `changes`.
    ///
    /// The paths are under the canonical form of `repo`. A batch names the files and
    /// directories that were written, created, removed or renamed (both names), and for a
    /// directory that appeared, every kept path inside it; never a path git ignores, nor one
    /// under `.git/` or `.prp-session/`. A debounce under 10 ms counts as 10 ms.
    pub fn start(
        repo: &Path,
        debounce: Duration,
        changes: UnboundedSender<Vec<PathBuf>>,
    ) -> Result<FileWatcher, WatchError> {
        let root = readable_dir(repo)?;
        let tree: Arc<Mutex<Option<WatchedTree>>> = Arc::new(Mutex::new(None));
        let handler = batch_handler(Arc::downgrade(&tree), changes);
        let debounce = debounce.max(MIN_DEBOUNCE);
        let debouncer = new_debouncer_opt::<_, Backend, NoCache>(
            debounce,
            Some(tick(debounce)),
            handler,
            NoCache,
            notify::Config::default(),
        )
        .map_err(|source| WatchError::Start { source })?;
        let mut slot = lock(&tree);
        let watched = slot.insert(WatchedTree::new(root.clone(), debouncer));
        if let Err(refused) = watched.watch_all() {
            if let Some(watched) = slot.take() {
                watched.stop();
            }
            return Err(start_error(&root, refused));
        }
        tracing::info!(
            root = %root.display(),
            dirs = watched.watched_dirs(),
            "watching the repository",
        );
        drop(slot);
        Ok(FileWatcher { tree })
    }

    /// How many directories are watched (for logs and the benchmark).
    pub fn watched_dirs(&self) -> usize {
        lock(&self.tree)
            .as_ref()
            .map_or(0, WatchedTree::watched_dirs)
    }
}

impl Drop for FileWatcher {
    fn drop(&mut self) {
        let watched = lock(&self.tree).take();
        if let Some(watched) = watched {
            watched.stop();
        }
    }
}

/// What the debouncer's thread runs for each batch: apply it to the watched tree and send
/// the changed paths, while the watcher lives and someone listens.
fn batch_handler(
    tree: Weak<Mutex<Option<WatchedTree>>>,
    changes: UnboundedSender<Vec<PathBuf>>,
) -> impl FnMut(DebounceEventResult) + Send + 'static {
    move |result| {
        if changes.is_closed() {
            return;
        }
        let Some(tree) = tree.upgrade() else {
            return;
        };
        let mut slot = lock(&tree);
        let Some(watched) = slot.as_mut() else {
            return;
        };
        match result {
            Ok(events) => {
                let batch = watched.absorb(&events);
                if !batch.is_empty() && changes.send(batch).is_err() {
                    tracing::debug!("nobody listens to the file watcher any more");
                }
            }
            Err(errors) => {
                for error in errors {
                    tracing::warn!(
                        %error,
                        "the file watcher reported an error; some changes may go unseen",
                    );
                }
            }
        }
    }
}

/// The mutex's content even if a thread panicked while holding it: the tree is only ever
/// changed one whole step at a time, and a watcher that stops reporting would be worse.
fn lock(tree: &Mutex<Option<WatchedTree>>) -> MutexGuard<'_, Option<WatchedTree>> {
    tree.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The canonical path of `repo`, once it is known to be a directory prpd can list.
fn readable_dir(repo: &Path) -> Result<PathBuf, WatchError> {
    let error = |source| WatchError::Repository {
        path: repo.to_path_buf(),
        source,
    };
    let root = std::fs::canonicalize(repo).map_err(error)?;
    std::fs::read_dir(&root).map_err(error)?;
    Ok(root)
}

/// The error a refusal at start is: the watch limit with what to do, or the directory.
fn start_error(root: &Path, refused: Refused) -> WatchError {
    if refused.is_watch_limit() {
        WatchError::WatchLimit {
            repo: root.to_path_buf(),
            wanted: refused.wanted,
            watched: refused.watched,
            limit: std::fs::read_to_string(MAX_USER_WATCHES)
                .map_or_else(|_| "unknown".to_owned(), |text| text.trim().to_owned()),
        }
    } else {
        WatchError::Watch {
            dir: refused.dir,
            source: refused.error,
        }
    }
}

#[cfg(test)]
mod tests;
