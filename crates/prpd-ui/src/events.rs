//! Live updates: an open page listens to `/events` (server-sent events) and fetches itself
//! again when the state it shows has moved on. What moved on is read from the state files'
//! sizes and modification times — every run's record, which prpd saves before each step, and
//! the queue — so it works the same whether the daemon serves the page or `prpd ui` does, and
//! costs a few `stat` calls per poll.

use std::convert::Infallible;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::time::{Duration, UNIX_EPOCH};

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use prpd_base::paths::SessionPaths;
use tokio::sync::watch;

/// How often the state files are looked at while a page listens.
const POLL: Duration = Duration::from_millis(300);

/// A number that changes whenever a record or the queue does.
pub fn version(session: &SessionPaths) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut stamp = |path: &std::path::Path| {
        path.hash(&mut hasher);
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
    };
    stamp(&session.queue());
    for run_id in session.run_ids().unwrap_or_default() {
        stamp(&session.run(&run_id).record());
    }
    hasher.finish()
}

/// The event stream of one page: a `change` event with the state's version at once, then one
/// whenever it changes, until the dashboard stops.
pub fn stream(
    session: SessionPaths,
    stop: watch::Receiver<bool>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = futures_util::stream::unfold(
        (session, stop, None::<u64>),
        |(session, mut stop, last)| async move {
            loop {
                if *stop.borrow() {
                    return None;
                }
                let looked = session.clone();
                let now = tokio::task::spawn_blocking(move || version(&looked))
                    .await
                    .ok()?;
                if last != Some(now) {
                    let event = Event::default().event("change").data(now.to_string());
                    return Some((Ok(event), (session, stop, Some(now))));
                }
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    changed = stop.changed() => {
                        if changed.is_err() {
                            return None;
                        }
                    }
                }
            }
        },
    );
    Sse::new(events).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_moves_when_a_record_or_the_queue_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = SessionPaths::new(dir.path());
        let empty = version(&session);
        std::fs::create_dir_all(session.root()).expect("session");
        std::fs::write(session.queue(), "{\"waiting\":[]}").expect("queue");
        let queued = version(&session);
        assert_ne!(empty, queued);
        let record = session.run("run-1").record();
        std::fs::create_dir_all(record.parent().expect("run dir")).expect("run dir");
        std::fs::write(&record, "{}").expect("record");
        let started = version(&session);
        assert_ne!(queued, started);
        assert_eq!(started, version(&session), "nothing changed");
        std::fs::write(&record, "{\"a\":1}").expect("record");
        assert_ne!(started, version(&session));
    }
}
