//! Live updates: an open page listens to `/events` (server-sent events) and fetches itself
//! again when the state it shows has moved on. What moved on is read from the state files'
//! sizes and modification times — each run's record, which prpd saves before each step, and
//! the queue — so it works the same whether the daemon serves the page or `prpd ui` does.
//!
//! One poller reads those stamps for every open page, and only while a page listens; a run's
//! page follows its own record only, the runs page everything. The number of open streams is
//! capped, so a client that opens many cannot tie up the daemon's threads.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use prpd_base::paths::SessionPaths;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// How often the state files are looked at while a page listens.
const POLL: Duration = Duration::from_millis(300);

/// How many event streams may be open at once.
const MAX_STREAMS: usize = 32;

/// The stamps of the state files: each run's record, and the queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamps {
    queue: u64,
    runs: BTreeMap<String, u64>,
}

impl Stamps {
    /// Reads them (a few `stat` calls).
    pub fn read(session: &SessionPaths) -> Stamps {
        Stamps {
            queue: stamp(&session.queue()),
            runs: session
                .run_ids()
                .unwrap_or_default()
                .into_iter()
                .map(|run_id| {
                    let stamp = stamp(&session.run(&run_id).record());
                    (run_id, stamp)
                })
                .collect(),
        }
    }

    /// The version of what a page shows: one run's record, or (`None`) every run and the queue.
    pub fn version(&self, run: Option<&str>) -> u64 {
        if let Some(run) = run {
            return self.runs.get(run).copied().unwrap_or_default();
        }
        let mut hasher = DefaultHasher::new();
        self.queue.hash(&mut hasher);
        self.runs.hash(&mut hasher);
        hasher.finish()
    }
}

/// A number that changes whenever the file at `path` does (or appears, or goes).
fn stamp(path: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    if let Ok(metadata) = std::fs::metadata(path) {
        metadata.len().hash(&mut hasher);
        if let Ok(modified) = metadata.modified() {
            modified
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
                .hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// The one poller of a dashboard, and the streams that listen to it.
#[derive(Debug)]
pub struct Poller {
    session: SessionPaths,
    stamps: watch::Sender<Arc<Stamps>>,
    streams: Arc<Semaphore>,
    stop: watch::Receiver<bool>,
}

impl Poller {
    /// Starts polling (while someone listens) until `stop` turns true.
    pub fn start(session: SessionPaths, stop: watch::Receiver<bool>) -> Arc<Poller> {
        let (stamps, _) = watch::channel(Arc::new(Stamps::default()));
        let poller = Arc::new(Poller {
            session,
            stamps,
            streams: Arc::new(Semaphore::new(MAX_STREAMS)),
            stop,
        });
        let polling = Arc::clone(&poller);
        tokio::spawn(async move {
            let mut stop = polling.stop.clone();
            loop {
                if *stop.borrow() {
                    return;
                }
                if polling.stamps.receiver_count() > 0 {
                    polling.look().await;
                }
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    changed = stop.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        poller
    }

    /// Reads the stamps and tells the streams when they changed.
    async fn look(&self) {
        let session = self.session.clone();
        if let Ok(fresh) = tokio::task::spawn_blocking(move || Stamps::read(&session)).await {
            self.stamps.send_if_modified(|current| {
                if **current == fresh {
                    return false;
                }
                *current = Arc::new(fresh);
                true
            });
        }
    }

    /// A page's event stream: a `change` event with the version of what it shows at once, then
    /// one whenever that changes, until the dashboard stops. `None` when too many are open.
    pub async fn stream(
        &self,
        run: Option<String>,
    ) -> Option<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>> {
        let permit = Arc::clone(&self.streams).try_acquire_owned().ok()?;
        let stamps = self.stamps.subscribe();
        self.look().await;
        let listening = Listening {
            stamps,
            stop: self.stop.clone(),
            run,
            last: None,
            _permit: permit,
        };
        let events = futures_util::stream::unfold(listening, |mut listening| async move {
            loop {
                if *listening.stop.borrow() {
                    return None;
                }
                let now = listening
                    .stamps
                    .borrow_and_update()
                    .version(listening.run.as_deref());
                if listening.last != Some(now) {
                    listening.last = Some(now);
                    let event = Event::default().event("change").data(now.to_string());
                    return Some((Ok(event), listening));
                }
                tokio::select! {
                    changed = listening.stamps.changed() => changed.ok()?,
                    changed = listening.stop.changed() => changed.ok()?,
                }
            }
        });
        Some(Sse::new(events).keep_alive(KeepAlive::default()))
    }
}

/// One open stream's state.
struct Listening {
    stamps: watch::Receiver<Arc<Stamps>>,
    stop: watch::Receiver<bool>,
    run: Option<String>,
    last: Option<u64>,
    _permit: OwnedSemaphorePermit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_moves_when_what_a_page_shows_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = SessionPaths::new(dir.path());
        let empty = Stamps::read(&session).version(None);
        std::fs::create_dir_all(session.root()).expect("session");
        std::fs::write(session.queue(), "{\"waiting\":[]}").expect("queue");
        let queued = Stamps::read(&session).version(None);
        assert_ne!(empty, queued);
        let record = session.run("run-1").record();
        std::fs::create_dir_all(record.parent().expect("run dir")).expect("run dir");
        std::fs::write(&record, "{}").expect("record");
        let started = Stamps::read(&session);
        assert_ne!(queued, started.version(None));
        assert_eq!(started, Stamps::read(&session), "nothing changed");
        std::fs::write(session.queue(), "{\"waiting\":[1]}").expect("queue");
        let requeued = Stamps::read(&session);
        assert_ne!(started.version(None), requeued.version(None));
        assert_eq!(
            started.version(Some("run-1")),
            requeued.version(Some("run-1")),
            "a run's page does not follow the queue"
        );
        std::fs::write(&record, "{\"a\":1}").expect("record");
        assert_ne!(
            requeued.version(Some("run-1")),
            Stamps::read(&session).version(Some("run-1"))
        );
    }
}
