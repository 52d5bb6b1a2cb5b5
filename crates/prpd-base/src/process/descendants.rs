//! Leftovers: the processes an agent started that escaped its process group. A process group is
//! not a cage: Claude Code runs each Bash command under `setsid`, and any program can
//! double-fork into a session of its own, so `killpg` misses it. Such a process would outlive
//! its phase and could edit the repository after prpd measured it. prpd therefore makes itself
//! a child subreaper ([`become_subreaper`]): an orphan then re-parents to prpd instead of PID 1,
//! and [`stop_leftovers`] finds every such process, with all it descends from, in `/proc`, and
//! stops it. This file stands apart from the spawn logic because it is about processes prpd no
//! longer has a handle on.
//!
//! Theory of operation. When [`super::run`] returns, the child's group has been killed and no
//! member of it is still alive (it waits for that), so every process that left the group and
//! whose parent was in it has been re-parented to prpd by then. Its live descendants, found by
//! following parent ids through a snapshot of `/proc`, are the leftovers. They get SIGTERM,
//! [`GRACE`] to exit (new ones found while waiting get SIGTERM too), then SIGKILL until none is
//! left. Zombies re-parented to prpd are reaped by pid, never with `waitpid(-1)`, which would
//! steal the exit status of a child tokio is waiting for.
//!
//! A leftover is not always an agent's: a project's test command may start a server and leave
//! it running. Each leftover is told by who started it ([`StartedBy`]): a process that carries
//! this prpd's measurement mark in its environment (set by [`super::EnvPolicy::Measurement`],
//! inherited by everything a measurement starts) is a measurement's, anything else an agent's,
//! so the warning blames the right one.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use super::env::{MEASUREMENT_MARK, measurement_mark};

/// How long leftovers have between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(1);
/// How long SIGKILL is repeated (for processes still forking) before prpd gives up.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// How often `/proc` is read again while waiting.
const POLL: Duration = Duration::from_millis(20);

/// Makes prpd a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): a process whose parent dies
/// is re-parented to prpd instead of PID 1, so [`stop_leftovers`] can find it. Call once, at
/// start-up, before any child is started; it holds for the life of the process.
#[cfg(target_os = "linux")]
pub fn become_subreaper() -> std::io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from)
}

/// Other systems have no child subreaper; orphans go to PID 1 there.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "a child subreaper needs Linux",
    ))
}

/// A process [`stop_leftovers`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub pid: i32,
    /// Its command line (`/proc/<pid>/cmdline`, arguments joined with spaces), or `[name]`
    /// when it has none.
    pub command: String,
    /// Who started it, for the warning that names it.
    pub started_by: StartedBy,
}

/// Who started a leftover process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StartedBy {
    /// One of prpd's own measurements (a test run, a QA check: it carries this prpd's
    /// measurement mark): the project's command started it, say a test suite that starts a
    /// server and leaves it running.
    Measurement,
    /// An agent: prpd starts nothing else that outlives its call.
    Agent,
}

impl StartedBy {
    /// The warning's sentence for processes this starter left running.
    pub fn stopped_message(self) -> &'static str {
        match self {
            StartedBy::Measurement => {
                "stopped processes a measurement left running (the project's test or check \
                 command started them, not the agent)"
            }
            StartedBy::Agent => "stopped processes the agent left running",
        }
    }
}

/// The stopped `leftovers` by who started them, each group as one line of the leftovers as
/// they display (pid and command line), comma-separated; measurements first.
pub fn by_starter(leftovers: &[Leftover]) -> Vec<(StartedBy, String)> {
    let mut groups: BTreeMap<StartedBy, Vec<String>> = BTreeMap::new();
    for leftover in leftovers {
        groups
            .entry(leftover.started_by)
            .or_default()
            .push(leftover.to_string());
    }
    groups
        .into_iter()
        .map(|(started_by, stopped)| (started_by, stopped.join(", ")))
        .collect()
}

impl fmt::Display for Leftover {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} `{}`", self.pid, self.command)
    }
}

/// What `/proc/<pid>/stat` says about one process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    pid: i32,
    /// The command name (field 2), without its parentheses.
    name: String,
    /// Field 3: `R`, `S`, `D`, `Z`, ...
    state: char,
    ppid: i32,
    pgid: i32,
    /// Field 22, in clock ticks since boot: tells a reused pid from the process we saw.
    start: u64,
}

impl Stat {
    /// Parses the text of `/proc/<pid>/stat`. The name may hold spaces and parentheses, so the
    /// fields resume after the last `)`.
    fn parse(text: &str) -> Option<Stat> {
        let (head, rest) = text.rsplit_once(") ")?;
        let (pid, name) = head.split_once(" (")?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            pid: pid.trim().parse().ok()?,
            name: name.to_owned(),
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgid: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    fn read(pid: i32) -> Option<Stat> {
        Stat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// A zombie (or a process being torn down) is dead: it only waits to be reaped.
    fn alive(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Every process in `/proc` (empty where there is no `/proc`).
fn snapshot() -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Stat::read)
        .collect()
}

/// The live processes re-parented to `me` and all their live descendants. The walk goes
/// through dead processes too: a multi-threaded process (node) whose leader is already a zombie
/// keeps its children until its last thread has exited, and only then are they re-parented to
/// prpd, so a child of such a zombie would otherwise be missed by this round and the next.
fn leftovers(table: &[Stat], me: i32) -> Vec<&Stat> {
    let mut children: BTreeMap<i32, Vec<&Stat>> = BTreeMap::new();
    for stat in table {
        children.entry(stat.ppid).or_default().push(stat);
    }
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut next = vec![me];
    while let Some(parent) = next.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            // A child prpd waits for is work going on, with all it started.
            if parent == me && is_waited_for(child) {
                continue;
            }
            if seen.insert(child.pid) {
                if child.alive() {
                    found.push(*child);
                }
                next.push(child.pid);
            }
        }
    }
    found
}

/// The command line of `stat`'s process, or its name when it has none (a kernel thread, or a
/// process that has just exited).
fn command_line(stat: &Stat) -> String {
    let arguments = std::fs::read(format!("/proc/{}/cmdline", stat.pid)).unwrap_or_default();
    let command = String::from_utf8_lossy(&arguments)
        .split('\0')
        .filter(|argument| !argument.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if command.is_empty() {
        format!("[{}]", stat.name)
    } else {
        command
    }
}

/// Signals `stat`'s process if its pid still names the process that was seen.
fn signal(stat: &Stat, signal: Signal) {
    if Stat::read(stat.pid).is_none_or(|now| now.start != stat.start) {
        return;
    }
    match kill(Pid::from_raw(stat.pid), signal) {
        // ESRCH: it has gone already, which is what we wanted.
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(errno) => {
            tracing::warn!(pid = stat.pid, ?signal, %errno, "failed to signal a leftover process");
        }
    }
}

/// The children prpd started and waits for (tokio reaps them), each by its pid and its start
/// time: with several runs in one prpd, another run's agent or check is a direct child of prpd
/// while this run looks for leftovers, and neither it nor its exit status is this run's to
/// take. A [`super::Service`] (an MCP memory server) is one for its whole life, from its start
/// until it is stopped or dropped, so the sweep after each agent call leaves it, and what it
/// started, running.
///
/// What is exempt is only the process recorded at its start and what descends from it by
/// parent links, never a process group: an agent's process in prpd's session may join the
/// service's group (`setpgid`), but its parent is still the agent, and once the agent has gone
/// it is re-parented to prpd, where the sweep finds it. Nor can it take on a recorded pid: a
/// pid freed by a service that died and reused keeps the pid but not the start time.
static WAITED_FOR: std::sync::Mutex<BTreeMap<i32, Option<u64>>> =
    std::sync::Mutex::new(BTreeMap::new());

/// A child prpd waits for, from its start until its group is cleaned up.
pub(super) struct WaitedFor(i32);

/// Starts a child with `start` (which returns it and its pid) and marks it as one prpd waits
/// for, with its start time, under the lock the reaping takes: a child that exits at once is
/// never reaped by another run's sweep before it is marked (and, unreaped, keeps its pid and
/// its `/proc` entry until the start time is read).
pub(super) fn start_waited_for<T>(
    start: impl FnOnce() -> (T, Option<u32>),
) -> (T, Option<WaitedFor>) {
    let mut pids = WAITED_FOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (child, pid) = start();
    let waited = pid.and_then(|pid| i32::try_from(pid).ok()).map(|pid| {
        pids.insert(pid, Stat::read(pid).map(|stat| stat.start));
        WaitedFor(pid)
    });
    (child, waited)
}

impl Drop for WaitedFor {
    fn drop(&mut self) {
        if let Ok(mut pids) = WAITED_FOR.lock() {
            pids.remove(&self.0);
        }
    }
}

/// Whether `stat` is a child prpd waits for: its pid recorded, and its start time the one
/// recorded (or none could be read when it started).
fn is_waited_for(stat: &Stat) -> bool {
    WAITED_FOR.lock().is_ok_and(|pids| {
        pids.get(&stat.pid)
            .is_some_and(|start| start.is_none_or(|start| start == stat.start))
    })
}

/// Reaps the zombies re-parented to `me`, each by its pid; a child prpd waits for is not one
/// (the check and the reaping hold the lock children are marked under).
fn reap_adopted_zombies(table: &[Stat], me: i32) {
    let waited = WAITED_FOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for stat in table
        .iter()
        .filter(|stat| stat.ppid == me && !stat.alive() && !waited.contains_key(&stat.pid))
    {
        // ECHILD: someone else reaped it (tokio, for a child it started); nothing to do.
        let _ = waitpid(Pid::from_raw(stat.pid), Some(WaitPidFlag::WNOHANG));
    }
}

/// Stops every live process that descends from prpd without being a child it is waiting for:
/// the processes re-parented to prpd (see [`become_subreaper`]) and their descendants. SIGTERM,
/// [`GRACE`], then SIGKILL; then the zombies re-parented to prpd are reaped. Returns what was
/// stopped, in pid order, for the caller to log.
///
/// Inside a run's scope (`owner.rs`) only the processes that carry the run's id, or no run's id
/// at all (an environment cleared to hide), are stopped: the daemon drives several runs at
/// once, and another run's agent or test suite is not this run's leftover. Call it when none of the run's own children runs: a run's loop is
/// sequential, so right after its agent ends nothing else of the run runs; anything of the run
/// that descends from prpd then is the agent's. Outside a run (prpd stopping) everything that
/// descends from prpd is stopped.
///
/// Inside a run's scope, when the run has started no process since a look found none, there is
/// nothing to look for (`owner::ProcessClock`), and `/proc` is not read.
pub async fn stop_leftovers() -> Vec<Leftover> {
    let clock = super::owner::clock();
    if clock
        .as_ref()
        .is_some_and(super::owner::ProcessClock::clean)
    {
        return Vec::new();
    }
    let started = clock.as_ref().map(super::owner::ProcessClock::started);
    let leftovers = sweep().await;
    if let (Some(clock), Some(started)) = (clock, started) {
        clock.swept(started, leftovers.is_empty());
    }
    leftovers
}

/// One look for leftovers: see [`stop_leftovers`].
async fn sweep() -> Vec<Leftover> {
    let me = Pid::this().as_raw();
    let mark = super::owner::current()
        .map(|run| format!("{}={}", super::owner::RUN_ID_VARIABLE, run.run_id));
    let mut stopper = Stopper::new();
    loop {
        let table = snapshot();
        reap_adopted_zombies(&table, me);
        let mut found = leftovers(&table, me);
        if let Some(mark) = &mark {
            // This run's, and what carries no run at all (a process that cleared its
            // environment to hide): another run's processes are that run's to stop.
            found.retain(|stat| carries(stat.pid, mark) || !carries_any_run(stat.pid));
        }
        if !stopper.round(&found) {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let leftovers = stopper.stopped();
    // The last table's zombies are reaped already; only the processes just stopped may have
    // left new ones.
    if !leftovers.is_empty() {
        reap_adopted_zombies(&snapshot(), me);
    }
    leftovers
}

/// Stops every live process (but prpd itself) whose environment holds `name=value`: what an
/// earlier prpd's agent left running when that prpd was killed with `kill -9` and so could not
/// stop it. Agents get `PRPD_RUN_ID`, which their children inherit; a process that cleared its
/// environment is not found this way. Blocks for at most [`GRACE`] + [`KILL_WAIT`].
pub fn stop_marked(name: &str, value: &str) -> Vec<Leftover> {
    let me = Pid::this().as_raw();
    let mark = format!("{name}={value}");
    let mut stopper = Stopper::new();
    loop {
        let table = snapshot();
        let targets: Vec<&Stat> = table
            .iter()
            .filter(|stat| stat.pid != me && stat.alive() && carries(stat.pid, &mark))
            .collect();
        if !stopper.round(&targets) {
            break;
        }
        std::thread::sleep(POLL);
    }
    stopper.stopped()
}

/// Whether `pid`'s environment names a run (`PRPD_RUN_ID=…`).
fn carries_any_run(pid: i32) -> bool {
    let prefix = format!("{}=", super::owner::RUN_ID_VARIABLE);
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ
            .split(|byte| *byte == 0)
            .any(|entry| entry.starts_with(prefix.as_bytes()))
    })
}

/// `pid`'s environment holds the entry `mark` (unreadable environments hold nothing).
fn carries(pid: i32, mark: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ
            .split(|byte| *byte == 0)
            .any(|entry| entry == mark.as_bytes())
    })
}

/// The signalling of one stop: SIGTERM to each new target, SIGKILL to all after [`GRACE`],
/// giving up after [`KILL_WAIT`] more.
struct Stopper {
    started: Instant,
    stopped: BTreeMap<(i32, u64), Leftover>,
}

impl Stopper {
    fn new() -> Stopper {
        Stopper {
            started: Instant::now(),
            stopped: BTreeMap::new(),
        }
    }

    /// Signals this round's `targets`; false when there is nothing left to do.
    fn round(&mut self, targets: &[&Stat]) -> bool {
        if targets.is_empty() {
            return false;
        }
        let elapsed = self.started.elapsed();
        if elapsed > GRACE + KILL_WAIT {
            let pids: Vec<i32> = targets.iter().map(|stat| stat.pid).collect();
            tracing::warn!(?pids, "leftover processes still alive after SIGKILL");
            return false;
        }
        for target in targets {
            let new = !self.stopped.contains_key(&(target.pid, target.start));
            if new {
                let mark = format!("{MEASUREMENT_MARK}={}", measurement_mark());
                self.stopped.insert(
                    (target.pid, target.start),
                    Leftover {
                        pid: target.pid,
                        command: command_line(target),
                        started_by: if carries(target.pid, &mark) {
                            StartedBy::Measurement
                        } else {
                            StartedBy::Agent
                        },
                    },
                );
            }
            if elapsed >= GRACE {
                signal(target, Signal::SIGKILL);
            } else if new {
                signal(target, Signal::SIGTERM);
            }
        }
        true
    }

    /// What was stopped, in pid order.
    fn stopped(self) -> Vec<Leftover> {
        self.stopped.into_values().collect()
    }
}

/// Waits until no live process is in group `pgid`: after a SIGKILL to the group, its members
/// die one by one, and only a dead parent hands its children (those that left the group) to
/// prpd. Callers bound the wait.
pub(super) async fn group_ended(pgid: Pid) {
    // No process at all in the group (not even a zombie), the usual case: no need to read
    // `/proc`.
    if nix::sys::signal::killpg(pgid, None) == Err(Errno::ESRCH) {
        return;
    }
    let pgid = pgid.as_raw();
    while snapshot()
        .iter()
        .any(|stat| stat.pgid == pgid && stat.alive())
    {
        tokio::time::sleep(POLL / 4).await;
    }
}

#[cfg(test)]
mod tests;
