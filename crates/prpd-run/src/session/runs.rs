//! Which run a command means, and whether its record can be trusted: every run of a
//! repository has its own record, so `prpd status` lists them all and `resume`, `abort` and
//! `diff` take a run id, or pick the one run they can mean, or say which ids to choose from.
//! Every record is checked against its seal before anything reads it.

use std::collections::BTreeSet;
use std::path::Path;

use crate::record::RunRecord;
use crate::snapshot::Snapshots;
use prpd_base::paths::SessionPaths;

use super::{SessionError, SessionFailure};

/// One run as `prpd status` reads it: its record, or why prpd refuses it.
#[derive(Debug)]
pub struct Listed {
    pub run_id: String,
    pub record: Result<RunRecord, SessionFailure>,
}

/// Every run of the repository, oldest first, each record checked against its seal (read
/// without the locks: records are written atomically).
pub fn status(repo: &Path) -> Result<Vec<Listed>, SessionFailure> {
    unsettled(repo, &BTreeSet::new())
}

/// [`status`] without the runs in `settled`: runs the caller has seen finished and trusted,
/// whose records never change again (the daemon, which looks many times a minute, reads each
/// finished record once instead of on every pass).
pub fn unsettled(repo: &Path, settled: &BTreeSet<String>) -> Result<Vec<Listed>, SessionFailure> {
    let session = SessionPaths::new(repo);
    let ids = session.run_ids().map_err(|source| SessionFailure::Io {
        path: session.runs(),
        source,
    })?;
    Ok(ids
        .into_iter()
        .filter(|run_id| !settled.contains(run_id))
        .map(|run_id| Listed {
            record: verified(&session, repo, &run_id),
            run_id,
        })
        .collect())
}

/// Which runs a command without a run id may mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Choice {
    /// The only unfinished run (resume, abort).
    Unfinished,
    /// The only unfinished run, else the latest run (diff).
    Latest,
}

/// The run `run` names (it must have a record), or the one `choice` picks without a name; two
/// candidates are refused with their ids.
pub(super) fn chosen(
    session: &SessionPaths,
    repo: &Path,
    run: Option<&str>,
    action: &'static str,
    choice: Choice,
) -> Result<String, SessionFailure> {
    let ids = session.run_ids().map_err(|source| SessionFailure::Io {
        path: session.runs(),
        source,
    })?;
    if ids.is_empty() {
        return Err(SessionError::NoRun {
            action,
            repo: repo.to_path_buf(),
        }
        .into());
    }
    if let Some(asked) = run {
        return ids.into_iter().find(|id| id == asked).ok_or_else(|| {
            SessionError::NoSuchRun {
                run_id: asked.to_owned(),
                repo: repo.to_path_buf(),
            }
            .into()
        });
    }
    // A record that cannot be read counts as unfinished: it is not prpd's to skip.
    let unfinished: Vec<String> = ids
        .iter()
        .filter(|id| {
            RunRecord::load(&session.run(id).record()).map_or(true, |record| {
                record.is_some_and(|record| !record.is_finished())
            })
        })
        .cloned()
        .collect();
    match (unfinished.as_slice(), choice) {
        ([only], _) => Ok(only.clone()),
        ([], Choice::Latest) => ids.last().cloned().ok_or_else(|| {
            SessionError::NoRun {
                action,
                repo: repo.to_path_buf(),
            }
            .into()
        }),
        ([], Choice::Unfinished) => Err(match ids.last() {
            // The latest run says why there is nothing to do.
            Some(latest) => match RunRecord::load(&session.run(latest).record()) {
                Ok(Some(record)) => SessionError::Finished {
                    run_id: record.run_id.clone(),
                    state: record.state().to_string(),
                    action,
                },
                Ok(None) | Err(_) => SessionError::NoRun {
                    action,
                    repo: repo.to_path_buf(),
                },
            },
            None => SessionError::NoRun {
                action,
                repo: repo.to_path_buf(),
            },
        }
        .into()),
        (several, _) => Err(SessionError::WhichRun {
            action,
            repo: repo.to_path_buf(),
            runs: several.to_vec(),
        }
        .into()),
    }
}

/// Run `run_id`'s record, refused unless it is the content prpd sealed when it last wrote it
/// (see `snapshot/seal.rs`): every record of this version is sealed, so a record without a
/// seal is refused too.
pub fn verified(
    session: &SessionPaths,
    repo: &Path,
    run_id: &str,
) -> Result<RunRecord, SessionFailure> {
    let path = session.run(run_id).record();
    let snapshots = Snapshots::open(repo, run_id, &session.run(run_id).snapshot_index())?;
    // A prpd driving the run seals and writes its record many times a second; a reader between
    // two saves may pair a file with refs that have moved on. Reading again settles that; an
    // edit stays unsealed however often it is read.
    let mut tries = 0;
    loop {
        let content = match std::fs::read_to_string(&path) {
            Ok(content) => content,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(SessionError::NoSuchRun {
                    run_id: run_id.to_owned(),
                    repo: repo.to_path_buf(),
                }
                .into());
            }
            Err(source) => return Err(SessionFailure::Io { path, source }),
        };
        let refused = match snapshots.is_sealed_record(content.as_bytes())? {
            Some(true) => return Ok(RunRecord::parse(&path, &content)?),
            Some(false) => SessionError::RecordChanged {
                run_id: run_id.to_owned(),
                path: path.clone(),
            },
            None => SessionError::RecordUnsealed {
                run_id: run_id.to_owned(),
                path: path.clone(),
            },
        };
        tries += 1;
        if tries == READS {
            // A record that does not parse says so first: that is what a person must fix.
            RunRecord::parse(&path, &content)?;
            return Err(refused.into());
        }
        std::thread::sleep(REREAD_AFTER);
    }
}

/// How often a record whose seal does not match is read before it is refused, and the pause
/// between two reads.
const READS: u32 = 5;
const REREAD_AFTER: std::time::Duration = std::time::Duration::from_millis(20);
