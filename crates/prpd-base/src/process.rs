//! The one place where prpd starts processes: checks, agents and hooks all run through [`run`].
//!
//! Theory of operation. Each child leads its own process group, so one `killpg` reaches
//! everything it started, grandchildren included. Its stdout and stderr are the two ends of ONE
//! pipe, so their lines keep the order in which the child wrote them. A dedicated thread drains
//! that pipe as fast as the child writes (a full pipe would block a noisy child forever) into a
//! log file capped at [`Spec::max_log_bytes`] and into a tail of the last [`Spec::tail_lines`]
//! lines, each at most 4 KiB long, so memory stays bounded whatever the child prints. The
//! timeout is a `select!` between the child's exit and a sleep; when the sleep wins, the group
//! gets SIGTERM, then [`Spec::grace`] to finish, then SIGKILL. When the direct child exits on its
//! own, the processes it left behind get a bounded time to close the pipe. Either way the run
//! ends by sending SIGKILL to the group and waiting (bounded) until no member of it is alive, so
//! nothing a run starts outlives it in its group, and a drop guard sends the same SIGKILL when
//! the `run` future is dropped (tokio's `kill_on_drop` reaches only the direct child). A process
//! that left the group (`setsid`, a double fork into a new session) is out of `killpg`'s reach:
//! [`stop_leftovers`] stops those, once prpd is a subreaper ([`become_subreaper`]).
//!
//! A long-lived child that prpd talks to over its stdio (an MCP server) is a [`Service`]: the
//! same process group, environment policy and drained, capped stderr log, killed with its
//! group when it is stopped or dropped.
//!
//! `clippy.toml` forbids `Command::new` everywhere else; the one `#[expect]` is in
//! [`new_command`].

mod descendants;
mod ending;
mod env;
mod group;
#[cfg(any(test, feature = "test-support"))]
pub mod group_probe;
mod output;
pub mod owner;
mod program;
mod service;
pub mod slots;
mod watch;

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::task::AbortHandle;

pub use descendants::{
    Leftover, StartedBy, become_subreaper, by_starter, stop_leftovers, stop_marked,
};
pub use env::{
    EnvPolicy, inherited_by_measurements, is_secret_name, passed_secret_values, passed_value,
};
pub use group::stop_orphaned_group;
pub use program::{Missing, find_program};
pub use service::{Service, ServiceSpec};
pub use watch::OutputWatch;

use ending::Ending;
use group::{Cleanup, record_group};
use output::{Output, create_log, lock};

/// Default [`Spec::timeout`].
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Default [`Spec::grace`].
const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Default [`Spec::tail_lines`]: what a QA report shows of a failed check.
const DEFAULT_TAIL_LINES: usize = 50;
/// Default [`Spec::max_log_bytes`].
const DEFAULT_MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;
/// How long processes left behind by an exited child may keep the output pipe open.
const LEFTOVER_WAIT: Duration = Duration::from_secs(2);
/// How long to wait for the group to die and the pipe to close after the final SIGKILL.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// What to execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A shell command line, run as `sh -c <string>`.
    Shell(String),
    /// A program and its arguments, run without a shell; the first element is the program.
    Argv(Vec<String>),
}

impl fmt::Display for Program {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Program::Shell(script) => write!(formatter, "sh -c {script}"),
            Program::Argv(argv) => write!(formatter, "{}", argv.join(" ")),
        }
    }
}

/// How to run one process.
#[derive(Debug, Clone)]
pub struct Spec {
    /// What to execute.
    pub program: Program,
    /// The working directory.
    pub cwd: PathBuf,
    /// Variables set in the child after `env_policy` is applied.
    pub env: Vec<(String, String)>,
    /// Which of prpd's own variables the child sees.
    pub env_policy: EnvPolicy,
    /// Bytes written to the child's stdin, which is then closed; `None` gives it `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// How long the child may run before its group gets SIGTERM.
    pub timeout: Duration,
    /// How long after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// Where the merged stdout and stderr are written; its directory is created if missing.
    pub log_path: PathBuf,
    /// How many of the last output lines [`Outcome::tail`] keeps.
    pub tail_lines: usize,
    /// The log file keeps only this many bytes of output (plus one line saying it was cut).
    pub max_log_bytes: u64,
    /// While the child runs, its process group is recorded here, so that after prpd itself is
    /// killed (SIGKILL reaches no drop guard) the next prpd can stop the orphaned group with
    /// [`stop_orphaned_group`].
    pub group_file: Option<PathBuf>,
    /// Who reads the output as it comes and may stop the child before it ends (an agent's
    /// budget read from its streamed usage).
    pub watch: Option<OutputWatch>,
}

impl Spec {
    /// `sh -c <command>` in `cwd`, with the defaults: inherited environment, no stdin, a
    /// 10 minute timeout, 5 s grace, a 50 line tail and a 64 MiB log.
    pub fn shell(command: &str, cwd: &Path, log_path: &Path) -> Spec {
        Spec::new(Program::Shell(command.to_owned()), cwd, log_path)
    }

    /// `sh -c <command>` as a measurement: the defaults of [`Spec::shell`] in the environment of
    /// [`EnvPolicy::Measurement`], whose fresh home sits beside the log (`<log>.home/`, emptied
    /// before each run).
    pub fn measurement(command: &str, cwd: &Path, log_path: &Path) -> Spec {
        let mut spec = Spec::shell(command, cwd, log_path);
        spec.env_policy = EnvPolicy::Measurement {
            home: log_path.with_extension("home"),
        };
        spec
    }

    /// `args[0]` with the remaining arguments, no shell, with the defaults of [`Spec::shell`].
    pub fn argv(args: Vec<String>, cwd: &Path, log_path: &Path) -> Spec {
        Spec::new(Program::Argv(args), cwd, log_path)
    }

    fn new(program: Program, cwd: &Path, log_path: &Path) -> Spec {
        Spec {
            program,
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            env_policy: EnvPolicy::WithoutSecrets,
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            log_path: log_path.to_path_buf(),
            tail_lines: DEFAULT_TAIL_LINES,
            max_log_bytes: DEFAULT_MAX_LOG_BYTES,
            group_file: None,
            watch: None,
        }
    }
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it before its timeout (a crash, or a kill from outside prpd).
    Signaled(i32),
    /// It ran past [`Spec::timeout`] and its group was killed.
    TimedOut,
    /// Its [`Spec::watch`] asked for it to stop, and its group was killed.
    Stopped,
}

/// The result of a process that ran; a failing exit code is an `Outcome`, not an error.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// How the child ended.
    pub termination: Termination,
    /// The last [`Spec::tail_lines`] lines of the merged output, joined with `\n`.
    pub tail: String,
    /// From spawn until the output was drained.
    pub duration: Duration,
    /// How many bytes the child wrote in all, including what the log did not keep.
    pub output_bytes: u64,
    /// Whether the log misses output, because of [`Spec::max_log_bytes`] or a write error.
    pub log_truncated: bool,
    /// Where the output was written.
    pub log_path: PathBuf,
}

impl Outcome {
    /// Whether the child exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code() == Some(0)
    }

    /// The exit code, when the child exited by itself.
    pub fn exit_code(&self) -> Option<i32> {
        match self.termination {
            Termination::Exited(code) => Some(code),
            Termination::Signaled(_) | Termination::TimedOut | Termination::Stopped => None,
        }
    }
}

/// prpd could not run the process at all.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// An `Argv` program with no elements.
    #[error("failed to start a process: the argument list is empty")]
    EmptyArgv,
    /// The log file's directory could not be created.
    #[error("failed to create log directory {}", path.display())]
    LogDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The log file could not be created.
    #[error("failed to create log file {}", path.display())]
    LogFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The fresh home of a measurement could not be made.
    #[error("failed to prepare the fresh home {}", path.display())]
    Home {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The output pipe or the thread that drains it could not be set up.
    #[error("failed to set up output capture for `{command}`")]
    Capture {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// The program could not be started (missing, not executable, bad working directory).
    #[error("failed to start `{command}` in {}", cwd.display())]
    Spawn {
        command: String,
        cwd: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the child failed.
    #[error("failed to wait for `{command}`")]
    Wait {
        command: String,
        #[source]
        source: std::io::Error,
    },
}

/// Empties `path` (or creates it): what an earlier run left there must not shape this one.
fn fresh_directory(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    std::fs::create_dir_all(path)
}

/// `env` with the run's id and variables (`owner.rs`) when the process is started for a run;
/// what the process sets itself wins.
fn with_run_id(mut env: Vec<(String, String)>) -> Vec<(String, String)> {
    let Some(run) = owner::current() else {
        return env;
    };
    let id = (owner::RUN_ID_VARIABLE.to_owned(), run.run_id);
    for (name, value) in std::iter::once(id).chain(run.env) {
        if !env.iter().any(|(set, _)| *set == name) {
            env.push((name, value));
        }
    }
    env
}

/// Waits for a slot (`slots.rs`): agents run with an allow-list environment, measurements in
/// theirs; nothing else waits.
async fn take_slot(policy: &EnvPolicy) -> Option<tokio::sync::OwnedSemaphorePermit> {
    match policy {
        EnvPolicy::Measurement { .. } => slots::take(slots::Kind::Check).await,
        EnvPolicy::AllowList(_) => slots::take(slots::Kind::Agent).await,
        EnvPolicy::WithoutSecrets => None,
    }
}

/// Whether a process run with `policy` is an agent or a measurement (the work prpd waits for),
/// rather than a helper of prpd's own (git, a hook).
fn counts_as_work(policy: &EnvPolicy) -> bool {
    match policy {
        EnvPolicy::Measurement { .. } | EnvPolicy::AllowList(_) => true,
        EnvPolicy::WithoutSecrets => false,
    }
}

/// Runs `spec` to completion: see the module docs for the timeout, grace and cleanup rules.
pub async fn run(spec: Spec) -> Result<Outcome, ProcessError> {
    let Spec {
        program,
        cwd,
        env,
        env_policy,
        stdin,
        timeout,
        grace,
        log_path,
        tail_lines,
        max_log_bytes,
        group_file,
        watch,
    } = spec;
    let command_line = program.to_string();
    let _slot = take_slot(&env_policy).await;

    let mut command = build_command(&program, &cwd, &with_run_id(env), &env_policy)?;
    let log = create_log(&log_path)?;
    let capture_error = |source| ProcessError::Capture {
        command: command_line.clone(),
        source,
    };
    let (chunks, mut stop) = match watch {
        Some(OutputWatch { chunks, stop }) => (Some(chunks), Some(stop)),
        None => (None, None),
    };
    let (output, pipe_writer) =
        Output::start(log, max_log_bytes, tail_lines, chunks).map_err(capture_error)?;
    command
        .stdout(pipe_writer.try_clone().map_err(capture_error)?)
        .stderr(pipe_writer)
        .stdin(match stdin {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        });

    // From here until the child has ended, an agent's or a measurement's time is not prpd's
    // own (`owner::ProcessClock`).
    let running = owner::clock().map(|clock| clock.start(counts_as_work(&env_policy)));
    let started = Instant::now();
    let (spawned, waited_for) = descendants::start_waited_for(|| {
        let spawned = command.spawn();
        let pid = spawned.as_ref().ok().and_then(tokio::process::Child::id);
        (spawned, pid)
    });
    // The command holds the parent's copies of the pipe's write end; EOF needs them closed.
    drop(command);
    let spawn_error = |source| ProcessError::Spawn {
        command: command_line.clone(),
        cwd: cwd.clone(),
        source,
    };
    let mut child = spawned.map_err(spawn_error)?;
    let pgid = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .map(Pid::from_raw)
        .ok_or_else(|| spawn_error(std::io::Error::other("the child has no process id")))?;
    tracing::debug!(command = %command_line, pgid = pgid.as_raw(), "started process");
    if let Some(path) = &group_file {
        record_group(path, pgid);
    }
    let mut cleanup = Cleanup::new(pgid, group_file, waited_for);
    cleanup.stdin_writer = write_stdin(stdin, &mut child);

    let ending = Ending {
        timeout,
        grace,
        stop: stop.as_mut(),
        pgid,
        command_line: &command_line,
    };
    let termination = ending.wait(&mut child, &output).await?;
    // What follows, making sure nothing of its group is left, is prpd's own time.
    drop(running);
    cleanup.kill_group();
    let reaped = async {
        let _ = child.wait().await;
        output.closed().await;
        // Once the whole group is dead, what left it has been re-parented (see `descendants`).
        descendants::group_ended(pgid).await;
    };
    if tokio::time::timeout(REAP_WAIT, reaped).await.is_err() {
        tracing::warn!(command = %command_line, "output still open after SIGKILL to the group (a process left it); using what was read");
    }

    let capture = lock(&output.capture);
    Ok(Outcome {
        termination,
        tail: capture.tail.render(),
        duration: started.elapsed(),
        output_bytes: capture.output_bytes,
        log_truncated: capture.log_truncated,
        log_path,
    })
}

/// The only `Command::new` in prpd.
#[expect(
    clippy::disallowed_methods,
    reason = "src/base/process.rs is the one module allowed to start processes"
)]
fn new_command(program: &str) -> Command {
    Command::new(program)
}

fn build_command(
    program: &Program,
    cwd: &Path,
    env: &[(String, String)],
    env_policy: &EnvPolicy,
) -> Result<Command, ProcessError> {
    let mut command = match program {
        Program::Shell(script) => {
            let mut command = new_command("sh");
            command.arg("-c").arg(script);
            command
        }
        Program::Argv(argv) => {
            let (name, arguments) = argv.split_first().ok_or(ProcessError::EmptyArgv)?;
            let mut command = new_command(name);
            command.args(arguments);
            command
        }
    };
    command.current_dir(cwd).process_group(0);
    if let EnvPolicy::Measurement { home } = env_policy {
        fresh_directory(home).map_err(|source| ProcessError::Home {
            path: home.clone(),
            source,
        })?;
    }
    env_policy.apply_to(&mut command);
    command.envs(env.iter().map(|(name, value)| (name, value)));
    Ok(command)
}

fn termination_of(status: ExitStatus) -> Termination {
    match status.code() {
        Some(code) => Termination::Exited(code),
        // `wait` reports only ended children, and one that did not exit was ended by a signal.
        None => Termination::Signaled(status.signal().unwrap_or_default()),
    }
}

/// Writes `input` to the child's stdin on a task of its own (a child that never reads cannot
/// block us), then closes it.
fn write_stdin(input: Option<Vec<u8>>, child: &mut tokio::process::Child) -> Option<AbortHandle> {
    let (Some(input), Some(mut child_stdin)) = (input, child.stdin.take()) else {
        return None;
    };
    let writer = tokio::spawn(async move {
        // A child may exit without reading its input; that is its business, not an error.
        if let Err(error) = child_stdin.write_all(&input).await {
            tracing::debug!(%error, "child did not take all of its stdin");
        }
    });
    Some(writer.abort_handle())
}

#[cfg(test)]
mod tests {
    use super::output::{LINE_CAP, LINE_CUT_MARK};
    use super::*;
    use crate::process::group_probe::{group_gone_within, is_group_gone};

    fn temp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("prpd-process-")
            .tempdir()
            .expect("temp dir")
    }

    fn shell(script: &str, dir: &Path) -> Spec {
        Spec::shell(script, dir, &dir.join("out.log"))
    }

    /// Waits for a script's `echo $$ > file`: in a group leader `$$` is the process group id.
    async fn pid_from_file(path: &Path) -> i32 {
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no pid in {}", path.display());
    }

    #[tokio::test]
    async fn exit_codes_and_both_streams_reach_tail_and_log() {
        let dir = temp();
        let log_path = dir.path().join("logs/nested/check.log");
        let spec = Spec::shell(
            "echo out; echo err >&2; echo out2; exit 3",
            dir.path(),
            &log_path,
        );
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Exited(3));
        assert_eq!(outcome.exit_code(), Some(3));
        assert!(!outcome.success());
        assert_eq!(outcome.tail, "out\nerr\nout2");
        assert_eq!(
            std::fs::read_to_string(&log_path).expect("log"),
            "out\nerr\nout2\n"
        );
        assert_eq!(outcome.output_bytes, 13);
        assert!(!outcome.log_truncated);
        assert_eq!(outcome.log_path, log_path);

        let outcome = run(shell("true", dir.path())).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert!(outcome.success());
        assert_eq!(outcome.tail, "");
    }

    #[tokio::test]
    async fn a_signal_is_reported_as_signaled() {
        let dir = temp();
        let outcome = run(shell("kill -9 $$", dir.path())).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Signaled(9));
        assert_eq!(outcome.exit_code(), None);
    }

    #[tokio::test]
    async fn tail_keeps_only_the_last_lines() {
        let dir = temp();
        let mut spec = shell(
            "i=1; while [ $i -le 100 ]; do echo line$i; i=$((i+1)); done; printf unfinished",
            dir.path(),
        );
        spec.tail_lines = 4;
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.tail, "line98\nline99\nline100\nunfinished");
        let log = std::fs::read_to_string(dir.path().join("out.log")).expect("log");
        assert_eq!(log.lines().count(), 101);
    }

    #[tokio::test]
    async fn long_lines_are_cut_in_the_tail_but_logged_whole() {
        let dir = temp();
        let outcome = run(shell(
            "head -c 100000 /dev/zero | tr '\\0' a; echo; echo end",
            dir.path(),
        ))
        .await
        .expect("runs");
        let lines: Vec<&str> = outcome.tail.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], format!("{}{LINE_CUT_MARK}", "a".repeat(LINE_CAP)));
        assert_eq!(lines[1], "end");
        let log = std::fs::metadata(dir.path().join("out.log")).expect("log");
        assert_eq!(log.len(), 100_000 + 1 + 4);
    }

    #[tokio::test]
    async fn a_watcher_reads_the_output_as_it_comes_and_stops_the_child() {
        let dir = temp();
        let mut spec = shell(
            "i=0; while true; do i=$((i+1)); echo line $i; sleep 0.05; done",
            dir.path(),
        );
        spec.timeout = Duration::from_secs(30);
        let (chunks, mut received) = tokio::sync::mpsc::unbounded_channel();
        let (stop, stop_asked) = tokio::sync::watch::channel(false);
        spec.watch = Some(OutputWatch {
            chunks,
            stop: stop_asked,
        });
        let watcher = tokio::spawn(async move {
            let mut seen = String::new();
            while let Some(chunk) = received.recv().await {
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if seen.contains("line 5\n") {
                    let _ = stop.send(true);
                    break;
                }
            }
            seen
        });
        let started = Instant::now();
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Stopped);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let seen = watcher.await.expect("watcher");
        assert!(seen.starts_with("line 1\nline 2\n"), "{seen}");
        let last: u32 = outcome
            .tail
            .lines()
            .last()
            .and_then(|line| line.strip_prefix("line "))
            .and_then(|number| number.parse().ok())
            .expect("a numbered last line");
        assert!((5..10).contains(&last), "stopped soon after line 5: {last}");
    }

    #[tokio::test]
    async fn timeout_kills_a_sleeping_child_quickly() {
        let dir = temp();
        let mut spec = shell("sleep 30", dir.path());
        spec.timeout = Duration::from_millis(300);
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::TimedOut);
        assert!(!outcome.success());
        assert!(
            outcome.duration < Duration::from_secs(2),
            "{:?}",
            outcome.duration
        );
    }

    #[tokio::test]
    async fn timeout_kills_grandchildren_that_hold_the_output_open() {
        let dir = temp();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $$ > '{}'; sleep 1000 & echo started; sleep 1000",
            pid_file.display()
        );
        let mut spec = shell(&script, dir.path());
        spec.timeout = Duration::from_millis(300);
        let started = Instant::now();
        let outcome = run(spec).await.expect("runs");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(outcome.termination, Termination::TimedOut);
        assert_eq!(outcome.tail, "started");
        let pgid = pid_from_file(&pid_file).await;
        assert!(group_gone_within(pgid, Duration::from_secs(1)));
    }

    #[tokio::test]
    async fn a_grandchild_left_behind_is_waited_for_a_bounded_time_then_killed() {
        let dir = temp();
        let pid_file = dir.path().join("pid");
        let script = format!("echo $$ > '{}'; (sleep 1000) & exit 0", pid_file.display());
        let started = Instant::now();
        let outcome = run(shell(&script, dir.path())).await.expect("runs");
        let elapsed = started.elapsed();
        assert!(elapsed >= LEFTOVER_WAIT, "{elapsed:?}");
        assert!(
            elapsed < LEFTOVER_WAIT + Duration::from_secs(1),
            "{elapsed:?}"
        );
        assert_eq!(outcome.termination, Termination::Exited(0));
        let pgid = pid_from_file(&pid_file).await;
        assert!(group_gone_within(pgid, Duration::from_secs(1)));
    }

    #[tokio::test]
    async fn an_output_flood_is_drained_with_a_capped_log_and_a_bounded_tail() {
        let dir = temp();
        let mut spec = shell("yes | head -c 200000000", dir.path());
        spec.max_log_bytes = 1024 * 1024;
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert_eq!(outcome.output_bytes, 200_000_000);
        assert!(outcome.log_truncated);
        assert_eq!(outcome.tail, vec!["y"; DEFAULT_TAIL_LINES].join("\n"));
        let log = std::fs::read(dir.path().join("out.log")).expect("log");
        assert!(log.len() < 1024 * 1024 + 100, "{}", log.len());
        assert!(log[..1024 * 1024].chunks(2).all(|pair| pair == b"y\n"));
        let note = String::from_utf8_lossy(&log[1024 * 1024..]);
        assert!(
            note.contains("log truncated: kept 1048576 of 200000000 bytes"),
            "{note}"
        );
    }

    #[tokio::test]
    async fn allow_list_hides_other_variables_and_env_entries_are_set() {
        let dir = temp();
        let (hidden, _) = std::env::vars()
            .find(|(name, _)| name != "PATH" && name != "HOME" && !is_secret_name(name))
            .expect("the test process has some variable besides PATH and HOME");
        let spec_with = |env_policy: EnvPolicy| {
            let mut spec = Spec::argv(
                vec!["env".to_owned()],
                dir.path(),
                &dir.path().join("env.log"),
            );
            spec.env_policy = env_policy;
            spec.env = vec![("PRPD_PROCESS_TEST".to_owned(), "set here".to_owned())];
            spec.tail_lines = 1000;
            spec
        };
        let names = |tail: &str| -> Vec<String> {
            tail.lines()
                .filter_map(|line| line.split_once('=').map(|(name, _)| name.to_owned()))
                .collect()
        };

        let outcome = run(spec_with(EnvPolicy::WithoutSecrets))
            .await
            .expect("runs");
        assert!(names(&outcome.tail).contains(&hidden));

        let outcome = run(spec_with(EnvPolicy::AllowList(vec![])))
            .await
            .expect("runs");
        let seen = names(&outcome.tail);
        assert!(!seen.contains(&hidden), "{hidden} leaked: {seen:?}");
        assert!(seen.contains(&"PATH".to_owned()));
        assert!(outcome.tail.contains("PRPD_PROCESS_TEST=set here"));
    }

    #[tokio::test]
    async fn stdin_is_delivered_and_closed() {
        let dir = temp();
        let mut spec = Spec::argv(
            vec!["cat".to_owned()],
            dir.path(),
            &dir.path().join("cat.log"),
        );
        spec.stdin = Some(b"hello\nworld\n".to_vec());
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert_eq!(outcome.tail, "hello\nworld");
    }

    #[tokio::test]
    async fn a_child_that_never_reads_its_stdin_does_not_block_the_run() {
        let dir = temp();
        let mut spec = shell("exit 0", dir.path());
        spec.stdin = Some(vec![b'x'; 4 * 1024 * 1024]);
        let outcome = run(spec).await.expect("runs");
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert!(
            outcome.duration < Duration::from_secs(1),
            "{:?}",
            outcome.duration
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_naming_it() {
        let dir = temp();
        let spec = Spec::argv(
            vec!["prpd-no-such-program".to_owned(), "--flag".to_owned()],
            dir.path(),
            &dir.path().join("missing.log"),
        );
        let error = run(spec).await.expect_err("cannot start");
        assert!(matches!(error, ProcessError::Spawn { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("prpd-no-such-program --flag"), "{message}");
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );

        let spec = Spec::argv(vec![], dir.path(), &dir.path().join("empty.log"));
        assert!(matches!(run(spec).await, Err(ProcessError::EmptyArgv)));
    }

    #[tokio::test]
    async fn dropping_the_run_kills_the_group() {
        let dir = temp();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $$ > '{}'; sleep 1000 & sleep 1000",
            pid_file.display()
        );
        let pgid = tokio::select! {
            outcome = run(shell(&script, dir.path())) => panic!("run ended: {outcome:?}"),
            pgid = async {
                let pgid = pid_from_file(&pid_file).await;
                assert!(!is_group_gone(pgid), "the group runs before the drop");
                pgid
            } => pgid,
        };
        assert!(group_gone_within(pgid, Duration::from_secs(1)));
    }
}
