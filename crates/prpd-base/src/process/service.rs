//! A long-lived child that prpd talks to over its stdin and stdout (an MCP server), as opposed
//! to [`super::run`], which runs a command to its end. It lives here because this module is the
//! only one that starts processes, and the same rules hold: the child leads its own process
//! group, its environment follows an [`EnvPolicy`], its stderr is drained by a thread into a
//! capped log file and a bounded tail (the protocol owns stdout), and when the [`Service`] is
//! stopped or dropped its whole group gets SIGKILL, so nothing it started outlives it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::group::{Cleanup, signal_group};
use super::output::{Output, create_log, lock};
use super::{EnvPolicy, ProcessError, Program, build_command};

/// How many lines of the child's stderr [`Service::stderr_tail`] keeps.
const STDERR_TAIL_LINES: usize = 20;

/// How to start one long-lived child.
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    /// The program and its arguments (no shell).
    pub argv: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Which of prpd's variables the child sees.
    pub env_policy: EnvPolicy,
    /// Where the child's stderr is written; its directory is created if missing.
    pub stderr_log: PathBuf,
    /// The log keeps only this many bytes of stderr.
    pub max_log_bytes: u64,
}

/// A running child with its stdin and stdout piped to prpd. Dropping it kills its process
/// group.
pub struct Service {
    child: Child,
    command_line: String,
    cleanup: Cleanup,
    stderr: Output,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Service")
            .field("command", &self.command_line)
            .field("group", &self.group())
            .finish_non_exhaustive()
    }
}

impl Service {
    /// Starts the child in its own process group, stdin and stdout piped, stderr to the log.
    pub fn spawn(spec: ServiceSpec) -> Result<Service, ProcessError> {
        let ServiceSpec {
            argv,
            cwd,
            env_policy,
            stderr_log,
            max_log_bytes,
        } = spec;
        let program = Program::Argv(argv);
        let command_line = program.to_string();
        let mut command = build_command(&program, &cwd, &[], &env_policy)?;
        let log = create_log(&stderr_log)?;
        let (stderr, pipe_writer) = Output::start(log, max_log_bytes, STDERR_TAIL_LINES, None)
            .map_err(|source| ProcessError::Capture {
                command: command_line.clone(),
                source,
            })?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(pipe_writer);
        // Counted as started: once it is gone, what it left is the next sweep's to find.
        drop(super::owner::clock().map(|clock| clock.start(false)));
        let (spawned, waited_for) = super::descendants::start_waited_for(|| {
            let spawned = command.spawn();
            let pid = spawned.as_ref().ok().and_then(tokio::process::Child::id);
            (spawned, pid)
        });
        // The command holds the parent's copy of the stderr pipe's write end; EOF needs it closed.
        drop(command);
        let spawn_error = |source| ProcessError::Spawn {
            command: command_line.clone(),
            cwd: cwd.clone(),
            source,
        };
        let child = spawned.map_err(spawn_error)?;
        let pgid = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .map(Pid::from_raw)
            .ok_or_else(|| spawn_error(std::io::Error::other("the child has no process id")))?;
        tracing::debug!(command = %command_line, pgid = pgid.as_raw(), "started a long-lived process");
        Ok(Service {
            child,
            command_line,
            cleanup: Cleanup::new(pgid, None, waited_for),
            stderr,
        })
    }

    /// The child's stdout (prpd reads it) and stdin (prpd writes it); `None` once taken.
    pub fn take_stdio(&mut self) -> Option<(ChildStdout, ChildStdin)> {
        Some((self.child.stdout.take()?, self.child.stdin.take()?))
    }

    /// The process group's id (the child's pid); `None` once the group was killed.
    pub fn group(&self) -> Option<i32> {
        self.cleanup.group.map(Pid::as_raw)
    }

    /// The command line, for messages.
    pub fn command_line(&self) -> &str {
        &self.command_line
    }

    /// The last lines the child wrote to its stderr, joined with `\n`.
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr.capture).tail.render()
    }

    /// How the child ended, if it has; `None` while it runs.
    pub fn exited(&mut self) -> Option<super::Termination> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(super::termination_of(status)),
            Ok(None) | Err(_) => None,
        }
    }

    /// Asks the group to end (SIGTERM), waits up to `grace` for the child, then kills the group
    /// and waits (bounded) until its stderr is all in the log.
    pub async fn stop(mut self, grace: Duration) {
        if let Some(pgid) = self.cleanup.group {
            signal_group(pgid, Signal::SIGTERM);
            let _ = tokio::time::timeout(grace, self.child.wait()).await;
        }
        self.cleanup.kill_group();
        let ended = async {
            let _ = self.child.wait().await;
            self.stderr.closed().await;
        };
        let _ = tokio::time::timeout(grace, ended).await;
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;
    use crate::process::group_probe::{group_gone_within, is_group_gone};

    fn spec(script: &str, dir: &std::path::Path) -> ServiceSpec {
        ServiceSpec {
            argv: vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()],
            cwd: dir.to_path_buf(),
            env_policy: EnvPolicy::WithoutSecrets,
            stderr_log: dir.join("logs/stderr.log"),
            max_log_bytes: 1024,
        }
    }

    #[tokio::test]
    async fn stdin_and_stdout_are_the_conversation_and_stderr_goes_to_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut service = Service::spawn(spec(
            "echo started >&2; while read line; do echo \"got $line\"; done",
            dir.path(),
        ))
        .expect("spawn");
        let (stdout, mut stdin) = service.take_stdio().expect("stdio");
        assert!(service.take_stdio().is_none(), "taken once");
        stdin.write_all(b"ping\n").await.expect("write");
        let mut lines = BufReader::new(stdout).lines();
        let answer = lines.next_line().await.expect("read").expect("a line");
        assert_eq!(answer, "got ping");
        assert!(service.exited().is_none());
        service.stop(Duration::from_secs(1)).await;
        let log = std::fs::read_to_string(dir.path().join("logs/stderr.log")).expect("log");
        assert_eq!(log, "started\n");
    }

    #[tokio::test]
    async fn dropping_the_service_kills_its_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let service = Service::spawn(spec("sleep 30 & sleep 30", dir.path())).expect("spawn");
        let pgid = service.group().expect("running");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!is_group_gone(pgid), "the group runs");
        drop(service);
        assert!(
            group_gone_within(pgid, Duration::from_secs(2)),
            "the group outlived the drop"
        );
    }

    #[tokio::test]
    async fn stop_ends_a_child_that_ignores_sigterm() {
        let dir = tempfile::tempdir().expect("tempdir");
        let service =
            Service::spawn(spec("trap '' TERM; sleep 30 & wait", dir.path())).expect("spawn");
        let pgid = service.group().expect("running");
        tokio::time::sleep(Duration::from_millis(100)).await;
        service.stop(Duration::from_millis(200)).await;
        assert!(group_gone_within(pgid, Duration::from_secs(2)));
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut missing = spec("", dir.path());
        missing.argv = vec!["prpd-no-such-server".to_owned()];
        let error = Service::spawn(missing).expect_err("missing");
        assert!(error.to_string().contains("prpd-no-such-server"), "{error}");
    }
}
