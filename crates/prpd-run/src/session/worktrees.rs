//! The worktree side of a session: the variables every process of a run in a worktree
//! carries, where a run works, and the removal of a worktree when its run ends (or ended while
//! nobody was left to remove it, or never started).

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::record::RunRecord;
use crate::worktree;
use prpd_base::lock::{self, Holder};
use prpd_base::paths::SessionPaths;
use prpd_base::process::owner;

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
        clock: owner::ProcessClock::default(),
    }
}

/// The tree run `record` works in: its worktree, or the user's own for an in-place run. The
/// place comes from the run's id, never from a path in the record.
pub(super) fn work_tree(home: &Path, record: &RunRecord) -> Result<PathBuf, SessionFailure> {
    if record.worktree.is_none() {
        return Ok(home.to_path_buf());
    }
    let path = worktree::location(home, &record.run_id).map_err(SessionError::from)?;
    if record.worktree.as_deref() != Some(path.as_path()) || !path.join(".git").is_file() {
        return Err(SessionError::WorktreeGone {
            run_id: record.run_id.clone(),
            path,
        }
        .into());
    }
    Ok(path)
}

/// Removes the worktree of a run that ended, unless `[run] keep_worktrees` keeps it. The run
/// is over either way, so a failure is only logged. What is removed is the run's worktree by
/// its id: a path an edited record names is never deleted.
pub(super) fn release_worktree(options: &Options, record: &RunRecord) {
    if record.worktree.is_none() || !record.is_finished() {
        return;
    }
    let Ok(path) = worktree::location(&options.repo, &record.run_id) else {
        return;
    };
    let keep = Config::load(&options.repo, options.config.as_deref())
        .is_ok_and(|config| config.keep_worktrees);
    if keep {
        tracing::info!(run_id = %record.run_id, worktree = %path.display(), "the run's worktree is kept");
        return;
    }
    if let Err(error) = worktree::remove(&options.repo, &path) {
        tracing::warn!(%error, "could not remove the run's worktree");
    }
}

/// Removes the worktrees nobody is left to remove: those of runs that ended (a kill between
/// the last record and the removal), of runs that never got a record (a kill before the
/// first), and the worktrees of QA on a moved base whose run is not being driven. A worktree
/// whose run's lock is held is some prpd's work in progress and stays.
pub(super) fn sweep_finished_worktrees(options: &Options, session: &SessionPaths) {
    let Ok(found) = worktree::list(&options.repo) else {
        return;
    };
    for (name, _) in found {
        let run_id = name.strip_suffix(worktree::ON_BASE_SUFFIX).unwrap_or(&name);
        let idle =
            lock::holder(&session.run(run_id).lock()).is_ok_and(|holder| holder == Holder::Nobody);
        if !idle {
            continue;
        }
        let leftover = if name == run_id {
            match super::verified(session, &options.repo, run_id) {
                Ok(record) => record.is_finished().then_some(record),
                Err(_) if !session.run(run_id).record().exists() => None,
                Err(_) => continue,
            }
        } else {
            None
        };
        match leftover {
            Some(record) => release_worktree(options, &record),
            None if name != run_id || !session.run(run_id).record().exists() => {
                if let Ok(path) = worktree::location(&options.repo, &name) {
                    discard_worktree(&options.repo, &path);
                }
            }
            None => {}
        }
    }
}

/// Removes a worktree made for a run that then did not start.
pub(super) fn discard_worktree(home: &Path, path: &Path) {
    if let Err(error) = worktree::remove(home, path) {
        tracing::warn!(%error, "could not remove the worktree of a run that did not start");
    }
}
