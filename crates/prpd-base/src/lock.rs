//! One prpd per repository: `.prp-session/prpd.lock`, held with an advisory file lock by the
//! process that drives the repository's run. The lock dies with the process (kill -9
//! included), so a stale lock file never blocks a restart.

use std::fs::{File, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The held lock; released when dropped or when the process ends.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another prpd (pid {pid}) is driving this repository ({}); wait for it, or stop it first",
        path.display()
    )]
    Busy { path: PathBuf, pid: String },
    #[error("failed to open the lock file {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SessionLock {
    /// Takes the lock at `path`, and writes our pid into it. It waits only as long as a
    /// [`holder`] probe may hold it ([`PROBE_GRACE`]): `prpd status` and the dashboard take a
    /// run's lock for an instant to see whether anyone drives it, and that instant must not
    /// make a daemon believe another prpd drives the run.
    pub fn acquire(path: &Path) -> Result<SessionLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let mut tries = 0;
        let taken = loop {
            match file.try_lock() {
                Err(TryLockError::WouldBlock) if tries < PROBE_TRIES => {
                    tries += 1;
                    std::thread::sleep(PROBE_GRACE / PROBE_TRIES);
                }
                other => break other,
            }
        };
        match taken {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(path)
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                return Err(LockError::Busy {
                    path: path.to_path_buf(),
                    pid,
                });
            }
            Err(TryLockError::Error(source)) => return Err(io(source)),
        }
        file.set_len(0).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(SessionLock { _file: file })
    }
}

/// How long [`SessionLock::acquire`] waits out a probe, in how many looks.
const PROBE_GRACE: std::time::Duration = std::time::Duration::from_millis(200);
const PROBE_TRIES: u32 = 10;

/// Who holds the lock of a repository, as `prpd status` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// No live process holds it: nothing drives the run (a lock file left by a killed prpd
    /// holds no lock).
    Nobody,
    /// A live prpd drives the run.
    Process {
        /// The pid the holder wrote into the file.
        pid: String,
    },
}

/// Who holds the lock at `path`, without taking it for longer than the probe and without
/// writing to the file.
pub fn holder(path: &Path) -> Result<Holder, LockError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Holder::Nobody),
        Err(source) => {
            return Err(LockError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    match file.try_lock() {
        Ok(()) => Ok(Holder::Nobody),
        Err(TryLockError::WouldBlock) => Ok(Holder::Process {
            pid: std::fs::read_to_string(path)
                .unwrap_or_default()
                .trim()
                .to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(LockError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.lock");
        let first = SessionLock::acquire(&path).expect("first");
        let error = SessionLock::acquire(&path).expect_err("second");
        assert!(
            error
                .to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{error}"
        );
        drop(first);
        SessionLock::acquire(&path).expect("free again");
    }

    #[test]
    fn the_holder_is_a_live_lock_not_a_leftover_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.lock");
        assert_eq!(holder(&path).expect("no file"), Holder::Nobody);
        let held = SessionLock::acquire(&path).expect("take");
        assert_eq!(
            holder(&path).expect("probe"),
            Holder::Process {
                pid: std::process::id().to_string()
            }
        );
        drop(held);
        assert!(path.exists(), "the file stays behind");
        assert_eq!(holder(&path).expect("probe"), Holder::Nobody);
        SessionLock::acquire(&path).expect("the probe let go");
    }
}
