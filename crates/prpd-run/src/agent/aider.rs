//! What Aider leaves in the repository it works in, undone. Aider writes its chat history,
//! input history and tag cache as `.aider*` files at the root (prpd keeps them out of git
//! through `.git/info/exclude`, added before the run's base snapshot so the exclude file
//! prpd freezes already holds it; the presets pass `--no-gitignore` so the project's
//! `.gitignore`, part of the frozen harness, is not touched), and it stages the files it
//! edits, empty blobs for new ones included, although `--no-auto-commits` keeps it from
//! committing. prpd never changes the user's index during a run, so the index as it was
//! before the call is put back after it.

use std::path::{Path, PathBuf};

use crate::config::AgentConfig;

/// The `.git/info/exclude` line that keeps Aider's files out of the snapshots.
pub const EXCLUDE_PATTERN: &str = "/.aider*";

/// Whether `config` runs Aider (its program is `aider`, on PATH or by path).
pub fn is_aider(config: &AgentConfig) -> bool {
    config.command.first().is_some_and(|program| {
        Path::new(program)
            .file_name()
            .is_some_and(|name| name == "aider")
    })
}

/// The repository's index file as it was before an agent ran.
pub(super) struct SavedIndex {
    path: PathBuf,
    /// `None`: there was no index file.
    bytes: Option<Vec<u8>>,
}

impl SavedIndex {
    /// Reads the index of the repository at `repo`; `None` when `repo` is not a repository.
    pub(super) fn save(repo: &Path) -> Option<SavedIndex> {
        let repository = git2::Repository::open(repo).ok()?;
        let path = repository.path().join("index");
        let bytes = std::fs::read(&path).ok();
        Some(SavedIndex { path, bytes })
    }

    /// Puts the index back as it was saved, when the agent changed it.
    pub(super) fn restore(&self) {
        let now = std::fs::read(&self.path).ok();
        if now == self.bytes {
            return;
        }
        tracing::info!(path = %self.path.display(), "putting back the index the agent staged files in");
        let restored = match &self.bytes {
            Some(bytes) => prpd_base::files::write_atomically(&self.path, bytes),
            None => std::fs::remove_file(&self.path),
        };
        if let Err(error) = restored {
            tracing::warn!(path = %self.path.display(), %error, "failed to put back the index");
        }
    }
}
