//! How [`super::run`] waits for its child to end: by itself, at its timeout, or when its
//! watcher ([`super::OutputWatch`]) asks. It stands apart from `run` because it is the one place
//! that decides how a child's end came about; `run` then kills what is left of the group.

use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::group::signal_group;
use super::output::Output;
use super::{LEFTOVER_WAIT, ProcessError, Termination, termination_of, watch};

/// How [`super::run`] waits for its child to end: by itself, at its timeout, or when its watcher asks.
pub(super) struct Ending<'a> {
    pub(super) timeout: Duration,
    pub(super) grace: Duration,
    pub(super) stop: Option<&'a mut tokio::sync::watch::Receiver<bool>>,
    pub(super) pgid: Pid,
    pub(super) command_line: &'a str,
}

impl Ending<'_> {
    /// Waits for the child's exit, or sends its group SIGTERM at the timeout or on request and
    /// gives it the grace to finish; the caller sends SIGKILL after either.
    pub(super) async fn wait(
        self,
        child: &mut tokio::process::Child,
        output: &Output,
    ) -> Result<Termination, ProcessError> {
        let Ending {
            timeout,
            grace,
            stop,
            pgid,
            command_line,
        } = self;
        let exit = tokio::select! {
            status = child.wait() => Ok(status),
            () = tokio::time::sleep(timeout) => Err(Termination::TimedOut),
            () = watch::stop_asked(stop) => Err(Termination::Stopped),
        };
        Ok(match exit {
            Ok(status) => {
                let status = status.map_err(|source| ProcessError::Wait {
                    command: command_line.to_owned(),
                    source,
                })?;
                if tokio::time::timeout(LEFTOVER_WAIT, output.closed())
                    .await
                    .is_err()
                {
                    tracing::warn!(command = %command_line, "processes left behind by the command kept its output open; killing them");
                }
                termination_of(status)
            }
            Err(ended) => {
                tracing::debug!(command = %command_line, ?timeout, ?ended, "timed out or asked to stop; sending SIGTERM");
                signal_group(pgid, Signal::SIGTERM);
                let finished = async {
                    // A wait error here changes nothing: SIGKILL follows either way.
                    let _ = child.wait().await;
                    output.closed().await;
                };
                let _ = tokio::time::timeout(grace, finished).await;
                ended
            }
        })
    }
}
