//! What a debounced batch of file events says, reduced to what the watcher acts on: the paths
//! that may have changed, what each was when the event named its kind, whether it appeared
//! (created or moved in, so a directory needs a fresh watch), and whether the kernel lost
//! events (its queue overflowed, so only a new walk can tell what changed).
//!
//! Access events (a file opened, or closed without writing) change nothing and are dropped
//! here; a file closed after writing is a change. The ignore rules are not asked here: this
//! is the pure part, tested with plain events.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use notify::EventKind;
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify_debouncer_full::DebouncedEvent;

use crate::watch::ignored::Kind;

/// One path a batch named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Touch {
    /// What the path was, when an event said so.
    pub(super) kind: Kind,
    /// Whether the path was created or moved in: a directory there is a new one, even when
    /// one of the same name was watched before.
    pub(super) appeared: bool,
}

/// The paths a batch named, and whether events were lost.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Touched {
    pub(super) paths: BTreeMap<PathBuf, Touch>,
    pub(super) events_lost: bool,
}

/// Reads a batch of debounced events.
pub(super) fn touched(events: &[DebouncedEvent]) -> Touched {
    let mut touched = Touched::default();
    for event in events {
        if event.need_rescan() {
            touched.events_lost = true;
            continue;
        }
        let (kind, appeared) = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => (Kind::File, false),
            EventKind::Access(_) | EventKind::Other => continue,
            EventKind::Create(create) => (created_kind(create), true),
            EventKind::Remove(remove) => (removed_kind(remove), false),
            EventKind::Modify(ModifyKind::Name(mode)) => match mode {
                RenameMode::Both => {
                    note_rename(&mut touched, &event.paths);
                    continue;
                }
                RenameMode::To | RenameMode::Any => (Kind::Unknown, true),
                RenameMode::From | RenameMode::Other => (Kind::Unknown, false),
            },
            EventKind::Modify(
                ModifyKind::Any | ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Other,
            )
            | EventKind::Any => (Kind::Unknown, false),
        };
        for path in &event.paths {
            note(&mut touched, path, Touch { kind, appeared });
        }
    }
    touched
}

/// A rename within the watched tree: the first path is gone, the last one appeared.
fn note_rename(touched: &mut Touched, paths: &[PathBuf]) {
    let gone = Touch {
        kind: Kind::Unknown,
        appeared: false,
    };
    let arrived = Touch {
        kind: Kind::Unknown,
        appeared: true,
    };
    if let Some((to, from)) = paths.split_last() {
        for path in from {
            note(touched, path, gone);
        }
        note(touched, to, arrived);
    }
}

/// Adds a path, keeping the most any event said of it.
fn note(touched: &mut Touched, path: &Path, touch: Touch) {
    let entry = touched.paths.entry(path.to_path_buf()).or_insert(touch);
    if entry.kind == Kind::Unknown {
        entry.kind = touch.kind;
    }
    entry.appeared |= touch.appeared;
}

fn created_kind(create: CreateKind) -> Kind {
    match create {
        CreateKind::File => Kind::File,
        CreateKind::Folder => Kind::Directory,
        CreateKind::Any | CreateKind::Other => Kind::Unknown,
    }
}

fn removed_kind(remove: RemoveKind) -> Kind {
    match remove {
        RemoveKind::File => Kind::File,
        RemoveKind::Folder => Kind::Directory,
        RemoveKind::Any | RemoveKind::Other => Kind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use notify::Event;
    use notify::event::{DataChange, Flag};

    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> DebouncedEvent {
        let mut event = Event::new(kind);
        for path in paths {
            event = event.add_path(PathBuf::from(path));
        }
        DebouncedEvent::new(event, Instant::now())
    }

    fn touch(kind: Kind, appeared: bool) -> Touch {
        Touch { kind, appeared }
    }

    #[test]
    fn each_event_kind_gives_its_paths() {
        type Case = (EventKind, Vec<&'static str>, Vec<(&'static str, Touch)>);
        let cases: Vec<Case> = vec![
            (
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                vec!["/r/a.rs"],
                vec![("/r/a.rs", touch(Kind::Unknown, false))],
            ),
            (
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                vec!["/r/a.rs"],
                vec![("/r/a.rs", touch(Kind::File, false))],
            ),
            (
                EventKind::Access(AccessKind::Close(AccessMode::Read)),
                vec!["/r/a.rs"],
                vec![],
            ),
            (
                EventKind::Access(AccessKind::Open(AccessMode::Any)),
                vec!["/r/src"],
                vec![],
            ),
            (
                EventKind::Create(CreateKind::Folder),
                vec!["/r/new"],
                vec![("/r/new", touch(Kind::Directory, true))],
            ),
            (
                EventKind::Remove(RemoveKind::Folder),
                vec!["/r/target"],
                vec![("/r/target", touch(Kind::Directory, false))],
            ),
            (
                EventKind::Remove(RemoveKind::File),
                vec!["/r/a.rs"],
                vec![("/r/a.rs", touch(Kind::File, false))],
            ),
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
                vec!["/r/old", "/r/new"],
                vec![
                    ("/r/new", touch(Kind::Unknown, true)),
                    ("/r/old", touch(Kind::Unknown, false)),
                ],
            ),
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::To)),
                vec!["/r/moved-in"],
                vec![("/r/moved-in", touch(Kind::Unknown, true))],
            ),
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::From)),
                vec!["/r/moved-out"],
                vec![("/r/moved-out", touch(Kind::Unknown, false))],
            ),
        ];
        for (kind, paths, expected) in cases {
            let got = touched(&[event(kind, &paths)]);
            let expected: BTreeMap<PathBuf, Touch> = expected
                .into_iter()
                .map(|(path, touch)| (PathBuf::from(path), touch))
                .collect();
            assert_eq!(got.paths, expected, "{kind:?}");
            assert!(!got.events_lost);
        }
    }

    #[test]
    fn a_path_named_twice_keeps_what_either_event_said() {
        let got = touched(&[
            event(EventKind::Remove(RemoveKind::Folder), &["/r/dist"]),
            event(EventKind::Create(CreateKind::Any), &["/r/dist"]),
        ]);
        assert_eq!(
            got.paths,
            BTreeMap::from([(PathBuf::from("/r/dist"), touch(Kind::Directory, true))])
        );
    }

    #[test]
    fn a_queue_overflow_says_events_were_lost() {
        let lost = DebouncedEvent::new(
            Event::new(EventKind::Other).set_flag(Flag::Rescan),
            Instant::now(),
        );
        let got = touched(&[lost]);
        assert!(got.events_lost);
        assert!(got.paths.is_empty());
    }
}
