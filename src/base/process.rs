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
//! ends by sending SIGKILL to the group, so nothing a run starts outlives it, and a drop guard
//! does the same when the `run` future is dropped (tokio's `kill_on_drop` reaches only the
//! direct child).
//!
//! `clippy.toml` forbids `Command::new` everywhere else; the one `#[expect]` is in
//! [`new_command`].

use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// Default [`Spec::timeout`].
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Default [`Spec::grace`].
const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Default [`Spec::tail_lines`]: what a QA report shows of a failed check.
const DEFAULT_TAIL_LINES: usize = 50;
/// Default [`Spec::max_log_bytes`].
const DEFAULT_MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;
/// Longest line kept in the tail; the rest of a longer line is dropped and marked.
const LINE_CAP: usize = 4 * 1024;
/// Marks a tail line cut at [`LINE_CAP`].
const LINE_CUT_MARK: &str = "…";
/// One read from the pipe; a Linux pipe holds 64 KiB by default.
const READ_CHUNK: usize = 64 * 1024;
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

/// Which of prpd's environment variables the child sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvPolicy {
    /// All of them except those whose names mark them as secrets ([`is_secret_name`]): the
    /// project's own commands (tests, linters) need the environment, but a test that prints it
    /// must not carry a token into a report, a prompt or a pull request.
    WithoutSecrets,
    /// Only these names, plus `PATH` and `HOME`, which every tool expects.
    AllowList(Vec<String>),
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
}

impl Spec {
    /// `sh -c <command>` in `cwd`, with the defaults: inherited environment, no stdin, a
    /// 10 minute timeout, 5 s grace, a 50 line tail and a 64 MiB log.
    pub fn shell(command: &str, cwd: &Path, log_path: &Path) -> Spec {
        Spec::new(Program::Shell(command.to_owned()), cwd, log_path)
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
            Termination::Signaled(_) | Termination::TimedOut => None,
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
    } = spec;
    let command_line = program.to_string();

    let mut command = build_command(&program, &cwd, &env, &env_policy)?;
    let log = create_log(&log_path)?;
    let capture_error = |source| ProcessError::Capture {
        command: command_line.clone(),
        source,
    };
    let (output, pipe_writer) =
        Output::start(log, max_log_bytes, tail_lines).map_err(capture_error)?;
    command
        .stdout(pipe_writer.try_clone().map_err(capture_error)?)
        .stderr(pipe_writer)
        .stdin(match stdin {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        });

    let started = Instant::now();
    let spawned = command.spawn();
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
    let mut cleanup = Cleanup {
        group: Some(pgid),
        stdin_writer: None,
        group_file,
    };
    cleanup.stdin_writer = write_stdin(stdin, &mut child);

    let exit = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep(timeout) => None,
    };
    let termination = if let Some(status) = exit {
        let status = status.map_err(|source| ProcessError::Wait {
            command: command_line.clone(),
            source,
        })?;
        if tokio::time::timeout(LEFTOVER_WAIT, output.closed())
            .await
            .is_err()
        {
            tracing::warn!(command = %command_line, "processes left behind by the command kept its output open; killing them");
        }
        termination_of(status)
    } else {
        tracing::debug!(command = %command_line, ?timeout, "timed out; sending SIGTERM");
        signal_group(pgid, Signal::SIGTERM);
        let finished = async {
            // A wait error here changes nothing: SIGKILL follows either way.
            let _ = child.wait().await;
            output.closed().await;
        };
        let _ = tokio::time::timeout(grace, finished).await;
        Termination::TimedOut
    };
    cleanup.kill_group();
    let reaped = async {
        let _ = child.wait().await;
        output.closed().await;
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
    reason = "src/process.rs is the one module allowed to start processes"
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
    match env_policy {
        EnvPolicy::WithoutSecrets => {
            for (name, _) in std::env::vars_os() {
                if is_secret_name(&name.to_string_lossy()) {
                    command.env_remove(name);
                }
            }
        }
        EnvPolicy::AllowList(names) => {
            command.env_clear();
            for name in names.iter().map(String::as_str).chain(["PATH", "HOME"]) {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
        }
    }
    command.envs(env.iter().map(|(name, value)| (name, value)));
    Ok(command)
}

/// Words that mark an environment variable as a secret (matched in its upper-cased name).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "CREDENTIAL",
];

/// Whether an environment variable's name marks it as a secret: `GITHUB_TOKEN`,
/// `ANTHROPIC_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`, anything ending in `_KEY`.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_KEY") || SECRET_WORDS.iter().any(|word| upper.contains(word))
}

fn create_log(path: &Path) -> Result<File, ProcessError> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| ProcessError::LogDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    File::create(path).map_err(|source| ProcessError::LogFile {
        path: path.to_path_buf(),
        source,
    })
}

fn termination_of(status: ExitStatus) -> Termination {
    match status.code() {
        Some(code) => Termination::Exited(code),
        // `wait` reports only ended children, and one that did not exit was ended by a signal.
        None => Termination::Signaled(status.signal().unwrap_or_default()),
    }
}

fn signal_group(pgid: Pid, signal: Signal) {
    match killpg(pgid, signal) {
        // ESRCH: the whole group has already gone, which is what we wanted.
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(errno) => {
            tracing::warn!(pgid = pgid.as_raw(), ?signal, %errno, "failed to signal process group");
        }
    }
}

/// Kills the group and stops the stdin writer when a run ends, including by being dropped.
struct Cleanup {
    /// `None` once the group has had its SIGKILL.
    group: Option<Pid>,
    stdin_writer: Option<AbortHandle>,
    /// Where the group is recorded (removed once the group is killed).
    group_file: Option<PathBuf>,
}

impl Cleanup {
    fn kill_group(&mut self) {
        if let Some(pgid) = self.group.take() {
            signal_group(pgid, Signal::SIGKILL);
            if let Some(path) = &self.group_file {
                let _ = std::fs::remove_file(path);
            }
        }
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

/// Writes `<pgid> <start time>` to `path`; the start time tells a reused pid from ours. Best
/// effort: failing to record only weakens the cleanup after a kill -9 of prpd.
fn record_group(path: &Path, pgid: Pid) {
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

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(stdin_writer) = self.stdin_writer.take() {
            stdin_writer.abort();
        }
    }
}

/// What the drain thread has read so far; `run` takes a snapshot when it ends.
struct Capture {
    tail: Tail,
    output_bytes: u64,
    log_truncated: bool,
}

impl Capture {
    fn new(tail_lines: usize) -> Capture {
        Capture {
            tail: Tail::new(tail_lines),
            output_bytes: 0,
            log_truncated: false,
        }
    }
}

/// The reading side of the output pipe, as seen from `run`.
struct Output {
    capture: Arc<Mutex<Capture>>,
    /// Becomes `true` when the drain thread has seen EOF.
    closed: watch::Receiver<bool>,
}

impl Output {
    /// Creates the pipe and starts the thread that drains it; returns the write end for the child.
    fn start(
        log: File,
        max_log_bytes: u64,
        tail_lines: usize,
    ) -> std::io::Result<(Output, PipeWriter)> {
        let (pipe_reader, pipe_writer) = std::io::pipe()?;
        let capture = Arc::new(Mutex::new(Capture::new(tail_lines)));
        let (closed_sender, closed) = watch::channel(false);
        let drain = Drain {
            pipe: pipe_reader,
            log: Some(log),
            max_log_bytes,
            capture: Arc::clone(&capture),
            closed: closed_sender,
        };
        std::thread::Builder::new()
            .name("prpd-output".to_owned())
            .spawn(move || drain.run())?;
        Ok((Output { capture, closed }, pipe_writer))
    }

    /// Resolves once the drain thread has seen EOF (or died, which closes the pipe as well).
    async fn closed(&self) {
        let _ = self.closed.clone().wait_for(|closed| *closed).await;
    }
}

/// A panicking drain thread leaves consistent counters behind, so a poisoned lock is still usable.
fn lock(capture: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The body of the thread that drains the output pipe. It is a plain thread, not
/// `spawn_blocking`, because a process that escaped its group can hold the pipe open forever
/// and the runtime waits for blocking tasks when it shuts down.
struct Drain {
    pipe: PipeReader,
    /// `None` after a write error: the rest of the output is counted but not logged.
    log: Option<File>,
    max_log_bytes: u64,
    capture: Arc<Mutex<Capture>>,
    closed: watch::Sender<bool>,
}

impl Drain {
    fn run(mut self) {
        let mut buffer = vec![0_u8; READ_CHUNK];
        let mut logged: u64 = 0;
        loop {
            let count = match self.pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(count) => count,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    tracing::warn!(%error, "failed to read process output");
                    break;
                }
            };
            let chunk = &buffer[..count];
            let mut capture = lock(&self.capture);
            capture.output_bytes += count as u64;
            capture.tail.push(chunk);
            let room =
                usize::try_from(self.max_log_bytes.saturating_sub(logged)).unwrap_or(usize::MAX);
            let kept = &chunk[..count.min(room)];
            if kept.len() < count {
                capture.log_truncated = true;
            }
            if let Some(log) = &mut self.log
                && !kept.is_empty()
            {
                if let Err(error) = log.write_all(kept) {
                    tracing::warn!(%error, "failed to write process log; the rest is not logged");
                    self.log = None;
                    capture.log_truncated = true;
                }
                logged += kept.len() as u64;
            }
        }
        let capture = lock(&self.capture);
        if let Some(log) = &mut self.log
            && capture.log_truncated
        {
            let note = format!(
                "\n[prpd: log truncated: kept {logged} of {} bytes]\n",
                capture.output_bytes
            );
            if let Err(error) = log.write_all(note.as_bytes()) {
                tracing::warn!(%error, "failed to write process log");
            }
        }
        drop(capture);
        self.closed.send_replace(true);
    }
}

/// The last lines of a byte stream, with bounded memory: at most `capacity` lines of at most
/// [`LINE_CAP`] bytes each, plus the unfinished line.
struct Tail {
    capacity: usize,
    lines: VecDeque<Vec<u8>>,
    /// The line still being written, cut at [`LINE_CAP`].
    partial: Vec<u8>,
    partial_cut: bool,
}

impl Tail {
    fn new(capacity: usize) -> Tail {
        Tail {
            capacity,
            lines: VecDeque::with_capacity(capacity),
            partial: Vec::new(),
            partial_cut: false,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        // A chunk that ends with more than `capacity` complete lines replaces everything before
        // them, so skip to them instead of copying lines that would be dropped at once.
        let start = match nth_newline_from_end(chunk, self.capacity + 1) {
            Some(position) => {
                self.lines.clear();
                self.partial.clear();
                self.partial_cut = false;
                position + 1
            }
            None => 0,
        };
        let mut segments = chunk[start..].split(|byte| *byte == b'\n').peekable();
        while let Some(segment) = segments.next() {
            let room = LINE_CAP - self.partial.len();
            self.partial
                .extend_from_slice(&segment[..segment.len().min(room)]);
            self.partial_cut |= segment.len() > room;
            if segments.peek().is_some() {
                self.finish_line();
            }
        }
    }

    fn finish_line(&mut self) {
        let mut line = std::mem::take(&mut self.partial);
        if std::mem::take(&mut self.partial_cut) {
            line.extend_from_slice(LINE_CUT_MARK.as_bytes());
        }
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The last `capacity` lines, the unfinished one counting as a line.
    fn render(&self) -> String {
        let unfinished = !self.partial.is_empty();
        let skip = usize::from(unfinished && self.lines.len() == self.capacity);
        let mut rendered: Vec<String> = self
            .lines
            .iter()
            .skip(skip)
            .map(|line| String::from_utf8_lossy(line).into_owned())
            .collect();
        if unfinished {
            let mut last = String::from_utf8_lossy(&self.partial).into_owned();
            if self.partial_cut {
                last.push_str(LINE_CUT_MARK);
            }
            rendered.push(last);
        }
        rendered.join("\n")
    }
}

/// The position of the `n`th `\n` counted from the end of `bytes`, if it has that many.
fn nth_newline_from_end(bytes: &[u8], n: usize) -> Option<usize> {
    let mut end = bytes.len();
    let mut position = None;
    for _ in 0..n {
        let found = bytes[..end].iter().rposition(|byte| *byte == b'\n')?;
        position = Some(found);
        end = found;
    }
    position
}

#[cfg(test)]
mod secret_tests {
    use super::is_secret_name;

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "NPM_TOKEN",
            "SIGNING_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "CI",
            "NODE_ENV",
            "KEYBOARD",
            "PRPD_PHASE",
            "TOKENIZERS_X",
        ] {
            assert_eq!(is_secret_name(name), name.contains("TOKEN"), "{name}");
        }
    }
}

#[cfg(test)]
mod group_file_tests {
    use super::*;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("prpd-process-")
            .tempdir()
            .expect("temp dir")
    }

    fn shell(script: &str, dir: &Path) -> Spec {
        Spec::shell(script, dir, &dir.join("out.log"))
    }

    /// Whether no live process (zombies do not count) has process group `pgid`. A signal-0
    /// probe would still see the zombies that `killpg` leaves until they are reaped.
    fn is_group_gone(pgid: i32) -> bool {
        let entries = std::fs::read_dir("/proc").expect("read /proc");
        !entries.flatten().any(|entry| {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                return false;
            };
            // Fields after the command name, which is in parentheses and may hold anything.
            let Some((_, after_name)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = after_name.split_whitespace().collect();
            let state = fields.first().copied().unwrap_or("Z");
            let group = fields.get(2).and_then(|field| field.parse::<i32>().ok());
            group == Some(pgid) && state != "Z" && state != "X"
        })
    }

    fn group_gone_within(pgid: i32, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if is_group_gone(pgid) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
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

    #[test]
    fn tail_is_the_same_however_the_stream_is_chunked() {
        let texts = [
            "",
            "a",
            "a\n",
            "\n\n\n",
            "one\ntwo\nthree\nfour\nfive\n",
            "one\ntwo\nthree\nfour\nfive",
            "x\ny\n\nz\n\n",
        ];
        for text in texts {
            for capacity in 1..=4 {
                let mut lines: Vec<&str> = text.split('\n').collect();
                if lines.last() == Some(&"") {
                    lines.pop();
                }
                let expected = lines[lines.len().saturating_sub(capacity)..].join("\n");
                for first in 0..=text.len() {
                    for second in first..=text.len() {
                        let mut tail = Tail::new(capacity);
                        tail.push(&text.as_bytes()[..first]);
                        tail.push(&text.as_bytes()[first..second]);
                        tail.push(&text.as_bytes()[second..]);
                        assert_eq!(
                            tail.render(),
                            expected,
                            "{text:?} capacity {capacity} split at {first}, {second}"
                        );
                    }
                }
            }
        }
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
