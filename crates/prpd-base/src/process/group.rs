//! Process groups: the signals that end a child together with everything it started, and the
//! record that lets the next prpd stop a group that a killed prpd (kill -9 reaches no drop
//! guard) left running. It stands apart from the spawn and drain logic because it is the part
//! that must hold even when [`super::run`] never gets to finish.

use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::task::AbortHandle;

use super::descendants::WaitedFor;

pub(super) fn signal_group(pgid: Pid, signal: Signal) {
    match killpg(pgid, signal) {
        // ESRCH: the whole group has already gone, which is what we wanted.
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(errno) => {
            tracing::warn!(pgid = pgid.as_raw(), ?signal, %errno, "failed to signal process group");
        }
    }
}

/// Kills the group and stops the stdin writer when a run ends, including by being dropped.
/// While it lives, the child (its group's leader) counts as one prpd waits for, which
/// [`super::stop_leftovers`] neither stops nor reaps.
pub(super) struct Cleanup {
    /// `None` once the group has had its SIGKILL.
    pub(super) group: Option<Pid>,
    pub(super) stdin_writer: Option<AbortHandle>,
    /// Where the group is recorded (removed once the group is killed).
    pub(super) group_file: Option<PathBuf>,
    _waited_for: Option<WaitedFor>,
}

impl Cleanup {
    /// The cleanup of the child that leads group `pgid`.
    pub(super) fn new(
        pgid: Pid,
        group_file: Option<PathBuf>,
        waited_for: Option<WaitedFor>,
    ) -> Cleanup {
        Cleanup {
            group: Some(pgid),
            stdin_writer: None,
            group_file,
            _waited_for: waited_for,
        }
    }

    pub(super) fn kill_group(&mut self) {
        if let Some(pgid) = self.group.take() {
            signal_group(pgid, Signal::SIGKILL);
            if let Some(path) = &self.group_file {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(stdin_writer) = self.stdin_writer.take() {
            stdin_writer.abort();
        }
    }
}

/// Writes `<pgid> <start time>` to `path`; the start time tells a reused pid from ours. Best
/// effort: failing to record only weakens the cleanup after a kill -9 of prpd.
pub(super) fn record_group(path: &Path, pgid: Pid) {
    let Some(start) = process_start_time(pgid.as_raw()) else {
        return;
    };
    if let Err(error) = std::fs::write(path, format!("{} {start}", pgid.as_raw())) {
        tracing::warn!(path = %path.display(), %error, "cannot record the child's process group");
    }
}

/// The start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot) of `pid`.
fn process_start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last `)`.
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Stops the process group recorded in `group_file` by a prpd that was killed before it could
/// (kill -9), if that group still runs; returns its id. The file is removed either way.
pub fn stop_orphaned_group(group_file: &Path) -> Option<i32> {
    let recorded = std::fs::read_to_string(group_file).ok()?;
    let _ = std::fs::remove_file(group_file);
    let mut fields = recorded.split_whitespace();
    let pgid: i32 = fields.next()?.parse().ok()?;
    let start: u64 = fields.next()?.parse().ok()?;
    if process_start_time(pgid) != Some(start) {
        return None;
    }
    signal_group(Pid::from_raw(pgid), Signal::SIGKILL);
    Some(pgid)
}

#[cfg(test)]
mod group_file_tests {
    use super::*;
    use crate::process::{Spec, Termination, run};
    use std::time::Duration;

    #[tokio::test]
    async fn orphaned_group_is_stopped_from_its_record() {
        let dir = tempfile::tempdir().expect("tempdir");
        let group_file = dir.path().join("agent.pgid");
        let mut spec = Spec::shell("sleep 30", dir.path(), &dir.path().join("log"));
        spec.group_file = Some(group_file.clone());
        let running = tokio::spawn(run(spec));
        for _ in 0..100 {
            if group_file.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pgid = stop_orphaned_group(&group_file).expect("the recorded group runs");
        let outcome = running.await.expect("join").expect("run");
        assert_eq!(outcome.termination, Termination::Signaled(9));
        assert!(!group_file.exists());
        assert_eq!(
            stop_orphaned_group(&group_file),
            None,
            "nothing recorded any more"
        );
        assert!(pgid > 0);
    }

    #[test]
    fn a_record_of_another_process_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let group_file = dir.path().join("agent.pgid");
        std::fs::write(&group_file, format!("{} 1", std::process::id())).expect("write");
        assert_eq!(stop_orphaned_group(&group_file), None);
        assert!(!group_file.exists());
    }
}
