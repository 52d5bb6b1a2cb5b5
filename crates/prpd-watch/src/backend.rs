//! The kernel watcher under the debouncer (inotify on Linux), with one difference: unwatching
//! a directory the kernel has already forgotten counts as done.
//!
//! When a watched directory is deleted or moved away, notify drops its watch by itself, so
//! the watcher's own `unwatch` then fails with "watch not found" — and the debouncer, which
//! forgets a path only after a successful `unwatch`, would keep it in its list of roots for
//! good. In a daemon that runs for weeks beside tools that make and delete directories, that
//! list would only grow (and the debouncer scans it on every create event).

use std::path::Path;

use notify::{
    Config, ErrorKind, EventHandler, RecommendedWatcher, RecursiveMode, Watcher, WatcherKind,
};

/// The platform's watcher, forgiving about directories that are already gone.
#[derive(Debug)]
pub(super) struct Backend(RecommendedWatcher);

impl Watcher for Backend {
    fn new<F: EventHandler>(event_handler: F, config: Config) -> notify::Result<Self> {
        RecommendedWatcher::new(event_handler, config).map(Backend)
    }

    fn watch(&mut self, path: &Path, recursive_mode: RecursiveMode) -> notify::Result<()> {
        self.0.watch(path, recursive_mode)
    }

    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        match self.0.unwatch(path) {
            Err(error) if matches!(error.kind, ErrorKind::WatchNotFound) => Ok(()),
            result => result,
        }
    }

    fn configure(&mut self, option: Config) -> notify::Result<bool> {
        self.0.configure(option)
    }

    fn kind() -> WatcherKind {
        RecommendedWatcher::kind()
    }
}
