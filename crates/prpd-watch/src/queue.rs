//! The PRPs waiting for a run: the daemon drives `[watch] parallel` runs at once, the rest wait
//! here in the order they arrived, each at most once. Saved atomically in
//! `.prp-session/queue.json` after every change, so a PRP dropped while the daemon was busy
//! survives any stop. An entry stays, with the id its run got, until that run has a record: a
//! daemon killed between the two starts the same run again instead of losing the PRP.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use prpd_base::files;
use prpd_run::worktree::Base;

/// The queue as saved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    /// Oldest first.
    pub waiting: Vec<Queued>,
}

/// One PRP waiting for its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    /// Relative to the repository.
    pub prp: PathBuf,
    /// When it was queued (seconds since the Unix epoch).
    pub queued_at: u64,
    /// The commit the run starts from: what `HEAD` named when the PRP was queued (hex).
    #[serde(default)]
    pub base: Option<String>,
    /// The branch `HEAD` was on then: the pull request's base.
    #[serde(default)]
    pub base_branch: Option<String>,
    /// The id of the run that was started for it, once one was.
    #[serde(default)]
    pub run_id: Option<String>,
}

/// The queue file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("failed to read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}:{line}:{column}: not a prpd queue ({message}); move it away and queue the PRPs again with `prpd queue PRP`",
        path.display()
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Queue {
    /// The queue saved at `path` (empty when there is none).
    pub fn load(path: &Path) -> Result<Queue, QueueError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Queue::default());
            }
            Err(source) => {
                return Err(QueueError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|error| QueueError::Corrupt {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })
    }

    /// Saves the queue atomically.
    pub fn save(&self, path: &Path) -> Result<(), QueueError> {
        let write = |source| QueueError::Write {
            path: path.to_path_buf(),
            source,
        };
        let text = serde_json::to_string_pretty(self).map_err(|error| write(error.into()))?;
        files::write_atomically(path, text.as_bytes()).map_err(write)
    }

    /// Queues `prp`, to start from `base` (the commit and the branch that named it), unless it
    /// already waits; whether it was added.
    pub fn push(&mut self, prp: &Path, at: u64, base: Option<Base>) -> bool {
        if self.contains(prp) {
            return false;
        }
        let (base, base_branch) =
            base.map_or((None, None), |base| (Some(base.commit), base.branch));
        self.waiting.push(Queued {
            prp: prp.to_path_buf(),
            queued_at: at,
            base,
            base_branch,
            run_id: None,
        });
        true
    }

    /// Whether `prp` waits.
    pub fn contains(&self, prp: &Path) -> bool {
        self.waiting.iter().any(|queued| queued.prp == prp)
    }

    /// The oldest PRP whose run has not started yet, now marked as started as run `run_id`.
    pub fn start_next(&mut self, run_id: &str) -> Option<Queued> {
        let next = self
            .waiting
            .iter_mut()
            .find(|queued| queued.run_id.is_none())?;
        next.run_id = Some(run_id.to_owned());
        Some(next.clone())
    }

    /// The queue as a new daemon takes it over, given the runs that have a record: an entry
    /// whose run has one is that run now and leaves; one whose run never got a record (a kill
    /// between the start and the first record) waits to start again.
    pub fn restarted(&mut self, recorded: &BTreeSet<String>) {
        self.waiting.retain(|queued| {
            queued
                .run_id
                .as_ref()
                .is_none_or(|run_id| !recorded.contains(run_id))
        });
        for queued in &mut self.waiting {
            queued.run_id = None;
        }
    }

    /// Takes out the entry of run `run_id`: its record exists now.
    pub fn started(&mut self, run_id: &str) {
        self.waiting
            .retain(|queued| queued.run_id.as_deref() != Some(run_id));
    }

    /// The PRPs whose run has not started, oldest first.
    pub fn prps(&self) -> Vec<PathBuf> {
        self.waiting
            .iter()
            .filter(|queued| queued.run_id.is_none())
            .map(|queued| queued.prp.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prp_waits_once_and_they_leave_in_order() {
        let mut queue = Queue::default();
        assert!(queue.push(Path::new("PRPs/a.md"), 1, None));
        let base = Base {
            commit: "c0ffee".to_owned(),
            branch: Some("main".to_owned()),
        };
        assert!(queue.push(Path::new("PRPs/b.md"), 2, Some(base)));
        assert!(!queue.push(Path::new("PRPs/a.md"), 3, None), "queued twice");
        assert_eq!(
            queue.prps(),
            [PathBuf::from("PRPs/a.md"), PathBuf::from("PRPs/b.md")]
        );
        assert_eq!(
            queue.start_next("run-1").map(|queued| queued.queued_at),
            Some(1)
        );
        assert_eq!(queue.prps(), [PathBuf::from("PRPs/b.md")]);
        assert!(
            !queue.push(Path::new("PRPs/a.md"), 4, None),
            "a.md's run has no record yet"
        );
        queue.started("run-1");
        assert!(
            queue.push(Path::new("PRPs/a.md"), 4, None),
            "a.md left the queue"
        );
        let next = queue.start_next("run-2").expect("b.md");
        assert_eq!(
            (next.prp, next.base, next.base_branch),
            (
                PathBuf::from("PRPs/b.md"),
                Some("c0ffee".to_owned()),
                Some("main".to_owned())
            )
        );
    }

    #[test]
    fn after_a_kill_a_started_entry_with_a_record_leaves_and_one_without_starts_again() {
        let mut queue = Queue::default();
        queue.push(Path::new("PRPs/a.md"), 1, None);
        queue.push(Path::new("PRPs/b.md"), 2, None);
        queue.push(Path::new("PRPs/c.md"), 3, None);
        queue.start_next("run-a");
        queue.start_next("run-b");
        assert_eq!(queue.prps(), [PathBuf::from("PRPs/c.md")]);
        queue.restarted(&BTreeSet::from(["run-a".to_owned()]));
        assert_eq!(
            queue.prps(),
            [PathBuf::from("PRPs/b.md"), PathBuf::from("PRPs/c.md")],
            "a.md is its run now; b.md's run never started"
        );
    }

    #[test]
    fn the_queue_survives_a_restart_and_a_broken_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("queue.json");
        assert_eq!(Queue::load(&path).expect("none yet"), Queue::default());
        let mut queue = Queue::default();
        queue.push(Path::new("PRPs/a.md"), 7, None);
        queue.save(&path).expect("save");
        assert_eq!(Queue::load(&path).expect("load"), queue);
        std::fs::write(&path, "{\n  \"waiting\": 3\n}").expect("write");
        let message = Queue::load(&path).expect_err("corrupt").to_string();
        assert!(message.contains("queue.json:2:"), "{message}");
        assert!(message.contains("prpd queue PRP"), "{message}");
    }
}
