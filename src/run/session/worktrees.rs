//! The worktree side of a session: the variables every process of a run in a worktree
//! carries, where a run works, and the removal of a worktree when its run ends (or ended while
//! nobody was left to remove it, or never started).

use std::path::{Path, PathBuf};

use crate::base::config::Config;
use crate::base::lock::{self, Holder};
use crate::base::paths::SessionPaths;
use crate::base::process::owner;
use crate::run::record::RunRecord;
use crate::run::worktree;

use super::{Options, SessionError, SessionFailure};

/// What every process of the run carries: its id, and for a Rust project in a worktree the
/// worktree's own target folder, so a `CARGO_TARGET_DIR` of the user's environment (shared
/// with their own builds and every other run) is not where the run builds.
pub(super) fn run_scope(record: &RunRecord) -> owner::RunScope {
    let env = record
        .worktree
        .as_ref()
        .filter(|worktree| worktree.join("Cargo.toml").is_file())
        .map(|worktree| {
            (
                "CARGO_TARGET_DIR".to_owned(),
                worktree.join("target").display().to_string(),
            )
        })
        .into_iter()
        .collect();
    owner::RunScope {
        run_id: record.run_id.clone(),
        env,
    }
}

/// The tree run `record` works in: its worktree, or the user's own for an in-place run.
pub(super) fn work_tree(home: &Path, record: &RunRecord) -> Result<PathBuf, SessionFailure> {
    let Some(path) = &record.worktree else {
        return Ok(home.to_path_buf());
    };
    if !path.join(".git").is_file() {
        return Err(SessionError::WorktreeGone {
            run_id: record.run_id.clone(),
            path: path.clone(),
        }
        .into());
    }
    Ok(path.clone())
}

/// Removes the worktree of a run that ended, unless `[run] keep_worktrees` keeps it. The run
/// is over either way, so a failure is only logged.
pub(super) fn release_worktree(options: &Options, record: &RunRecord) {
    let Some(path) = record.worktree.as_deref().filter(|_| record.is_finished()) else {
        return;
    };
    let keep = Config::load(&options.repo, options.config.as_deref())
        .is_ok_and(|config| config.keep_worktrees);
    if keep {
        tracing::info!(run_id = %record.run_id, worktree = %path.display(), "the run's worktree is kept");
        return;
    }
    if let Err(error) = worktree::remove(&options.repo, path) {
        tracing::warn!(%error, "could not remove the run's worktree");
    }
}

/// Removes the worktrees of runs that ended while nobody was left to remove them (a kill
/// between the last record and the removal).
pub(super) fn sweep_finished_worktrees(options: &Options, session: &SessionPaths) {
    for run_id in session.run_ids().unwrap_or_default() {
        if let Ok(Some(record)) = RunRecord::load(&session.run(&run_id).record())
            && record.is_finished()
            && record.worktree.as_deref().is_some_and(Path::exists)
            && lock::holder(&session.run(&run_id).lock())
                .is_ok_and(|holder| holder == Holder::Nobody)
        {
            release_worktree(options, &record);
        }
    }
}

/// Removes a worktree made for a run that then did not start.
pub(super) fn discard_worktree(home: &Path, path: &Path) {
    if let Err(error) = worktree::remove(home, path) {
        tracing::warn!(%error, "could not remove the worktree of a run that did not start");
    }
}
