//! What a debounced batch of file events says, reduced to what the watcher acts on: the paths
//! that may have changed, what each was when the event named its kind, whether what is there
//! now may be another file or directory than before (created, removed, or moved in or out: a
//! directory there needs a fresh watch, since the kernel dropped the old one with the old
//! directory), and whether the kernel lost events (its queue overflowed, so only a new walk
//! can tell what changed).
//!
//! Access events (a file opened, or closed without writing) change nothing and are dropped
//! here; a file closed after writing is a change. The ignore rules are not asked here: this
//! is the pure part, tested with plain events.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use notify::EventKind;
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify_debouncer_full::DebouncedEvent;

use crate::ignored::Kind;

/// One path a batch named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Touch {
    /// What the path was, when an event said so.
    pub(super) kind: Kind,
    /// Whether the path was created, removed, or moved in or out: a directory there now is
    /// not the one that was watched, even when it has the same name.
    pub(super) replaced: bool,
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
        let (kind, replaced) = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => (Kind::File, false),
            EventKind::Access(_) | EventKind::Other => continue,
            EventKind::Create(create) => (created_kind(create), true),
            EventKind::Remove(remove) => (removed_kind(remove), true),
            EventKind::Modify(ModifyKind::Name(mode)) => match mode {
                RenameMode::Both => {
                    note_rename(&mut touched, &event.paths);
                    continue;
                }
                RenameMode::To | RenameMode::From | RenameMode::Any | RenameMode::Other => {
                    (Kind::Unknown, true)
                }
            },
            EventKind::Modify(
                ModifyKind::Any | ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Other,
            )
            | EventKind::Any => (Kind::Unknown, false),
        };
        for path in &event.paths {
            note(&mut touched, path, Touch { kind, replaced });
        }
    }
    touched
}

/// A rename within the watched tree names both paths: the one that went, the one that came.
fn note_rename(touched: &mut Touched, paths: &[PathBuf]) {
    let renamed = Touch {
        kind: Kind::Unknown,
        replaced: true,
    };
    for path in paths {
        note(touched, path, renamed);
    }
}

/// Adds a path, keeping the most any event said of it.
fn note(touched: &mut Touched, path: &Path, touch: Touch) {
    let entry = touched.paths.entry(path.to_path_buf()).or_insert(touch);
    if entry.kind == Kind::Unknown {
        entry.kind = touch.kind;
    }
    entry.replaced |= touch.replaced;
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

    fn touch(kind: Kind, replaced: bool) -> Touch {
        Touch { kind, replaced }
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
                vec![("/r/target", touch(Kind::Directory, true))],
            ),
            (
                EventKind::Remove(RemoveKind::File),
                vec!["/r/a.rs"],
                vec![("/r/a.rs", touch(Kind::File, true))],
            ),
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
                vec!["/r/old", "/r/new"],
                vec![
                    ("/r/new", touch(Kind::Unknown, true)),
                    ("/r/old", touch(Kind::Unknown, true)),
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
                vec![("/r/moved-out", touch(Kind::Unknown, true))],
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
