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
            if parent == me && is_waited_for(child.pid) {
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

/// The children prpd started and waits for (tokio reaps them): with several runs in one prpd,
/// another run's agent or check is a direct child of prpd while this run looks for leftovers,
/// and neither it nor its exit status is this run's to take.
static WAITED_FOR: std::sync::Mutex<BTreeSet<i32>> = std::sync::Mutex::new(BTreeSet::new());

/// A child prpd waits for, from its start until its group is cleaned up.
pub(super) struct WaitedFor(i32);

/// Starts a child with `start` (which returns it and its pid) and marks it as one prpd waits
/// for, under the lock the reaping takes: a child that exits at once is never reaped by another
/// run's sweep before it is marked.
pub(super) fn start_waited_for<T>(
    start: impl FnOnce() -> (T, Option<u32>),
) -> (T, Option<WaitedFor>) {
    let mut pids = WAITED_FOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (child, pid) = start();
    let waited = pid.and_then(|pid| i32::try_from(pid).ok()).map(|pid| {
        pids.insert(pid);
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

fn is_waited_for(pid: i32) -> bool {
    WAITED_FOR.lock().is_ok_and(|pids| pids.contains(&pid))
}

/// Reaps the zombies re-parented to `me`, each by its pid; a child prpd waits for is not one
/// (the check and the reaping hold the lock children are marked under).
fn reap_adopted_zombies(table: &[Stat], me: i32) {
    let waited = WAITED_FOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for stat in table
        .iter()
        .filter(|stat| stat.ppid == me && !stat.alive() && !waited.contains(&stat.pid))
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
pub async fn stop_leftovers() -> Vec<Leftover> {
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
    reap_adopted_zombies(&snapshot(), me);
    stopper.stopped()
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
    let pgid = pgid.as_raw();
    while snapshot()
        .iter()
        .any(|stat| stat.pgid == pgid && stat.alive())
    {
        tokio::time::sleep(POLL / 4).await;
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::process::{Spec, Termination, run};

    /// Set in the copy of the test binary that [`in_a_process_of_its_own`] starts.
    const OWN_PROCESS: &str = "PRPD_TEST_OWN_PROCESS";

    /// Runs the test `name` of this module alone in a new copy of the test binary. A subreaper
    /// adopts every orphan of the test process, and a sweep stops them all, including the
    /// children of tests running beside it; alone, the test's process is prpd's situation.
    async fn in_a_process_of_its_own(name: &str) {
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = std::env::current_exe().expect("the test binary");
        let module = module_path!()
            .split_once("::")
            .map_or(module_path!(), |(_, rest)| rest);
        let mut spec = Spec::argv(
            vec![
                binary.display().to_string(),
                format!("{module}::{name}"),
                "--exact".to_owned(),
                "--ignored".to_owned(),
                "--nocapture".to_owned(),
            ],
            dir.path(),
            &dir.path().join("test.log"),
        );
        spec.env = vec![(OWN_PROCESS.to_owned(), "1".to_owned())];
        spec.timeout = Duration::from_secs(60);
        spec.tail_lines = 200;
        let outcome = run(spec).await.expect("runs the test binary");
        assert!(
            outcome.success() && outcome.tail.contains("1 passed"),
            "{name} in its own process:\n{}",
            outcome.tail
        );
    }

    fn alone() -> bool {
        std::env::var_os(OWN_PROCESS).is_some()
    }

    fn alive(pid: i32) -> bool {
        Stat::read(pid).is_some_and(|stat| stat.alive())
    }

    /// The pids an agent script wrote to `path`, one a line.
    fn pids(path: &Path) -> Vec<i32> {
        std::fs::read_to_string(path)
            .expect("pid file")
            .lines()
            .map(|line| line.trim().parse().expect("a pid"))
            .collect()
    }

    /// Runs `script` as an agent would be run, in `dir`; it must exit 0.
    async fn agent(script: &str, dir: &Path) {
        let outcome = run(Spec::shell(script, dir, &dir.join("agent.log")))
            .await
            .expect("runs");
        assert_eq!(
            outcome.termination,
            Termination::Exited(0),
            "{}",
            outcome.tail
        );
    }

    #[tokio::test]
    async fn processes_marked_with_a_run_are_found_and_stopped_wherever_they_went() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mark = format!("run-{}-{}", std::process::id(), dir.path().display());
        let script = format!(
            "export PRPD_TEST_MARK='{mark}'; setsid sh -c 'echo $$ > escaped; exec sleep 30' & \
             while [ ! -s escaped ]; do sleep 0.01; done"
        );
        agent(&script, dir.path()).await;
        let escaped = pids(&dir.path().join("escaped"))[0];
        assert!(alive(escaped), "the escaped process runs");
        assert!(stop_marked("PRPD_TEST_MARK", "another-run").is_empty());
        let stopped = stop_marked("PRPD_TEST_MARK", &mark);
        assert_eq!(
            stopped
                .iter()
                .map(|leftover| leftover.pid)
                .collect::<Vec<_>>(),
            [escaped]
        );
        assert!(stopped[0].command.contains("sleep 30"), "{stopped:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(escaped) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        assert!(!alive(escaped), "the marked process was stopped");
    }

    #[test]
    fn stat_lines_with_odd_names_are_read() {
        let mut fields = vec!["0"; 52];
        fields[0] = "Z";
        fields[1] = "77";
        fields[2] = "70";
        fields[19] = "123456";
        let text = format!("4242 (a) b (c) {}\n", fields.join(" "));
        let stat = Stat::parse(&text).expect("parses");
        assert_eq!(
            stat,
            Stat {
                pid: 4242,
                name: "a) b (c".to_owned(),
                state: 'Z',
                ppid: 77,
                pgid: 70,
                start: 123_456,
            }
        );
        assert!(!stat.alive());
        assert_eq!(Stat::parse("4242 (cut"), None);
    }

    #[test]
    fn leftovers_are_the_adopted_processes_and_their_descendants() {
        let stat = |pid, ppid, state| Stat {
            pid,
            name: format!("p{pid}"),
            state,
            ppid,
            pgid: pid,
            start: 1,
        };
        let table = vec![
            stat(10, 1, 'S'),  // prpd
            stat(11, 10, 'S'), // adopted
            stat(12, 11, 'R'), // its child
            stat(13, 12, 'S'), // its grandchild
            stat(14, 10, 'Z'), // an adopted zombie: dead
            stat(15, 14, 'S'), // the child of a zombie whose other threads still exit
            stat(20, 1, 'S'),  // unrelated
            stat(21, 20, 'S'),
        ];
        let pids: Vec<i32> = leftovers(&table, 10).iter().map(|stat| stat.pid).collect();
        assert_eq!(
            pids.iter().copied().collect::<BTreeSet<_>>(),
            BTreeSet::from([11, 12, 13, 15])
        );
        assert!(leftovers(&table, 13).is_empty());
    }

    #[tokio::test]
    async fn an_escaped_sleep_is_stopped_and_reported() {
        in_a_process_of_its_own("escaped_sleep_alone").await;
    }

    #[tokio::test]
    #[ignore = "run alone by an_escaped_sleep_is_stopped_and_reported"]
    async fn escaped_sleep_alone() {
        if !alone() {
            return;
        }
        become_subreaper().expect("subreaper");
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("pids");
        // A new session (what Claude Code's Bash tool does), and a double fork in a second one.
        let script = format!(
            "setsid sleep 30 >/dev/null 2>&1 & echo $! > '{pids}'\n\
             setsid sh -c '(sleep 31 & echo $! >> \"{pids}\") ; exit 0' >/dev/null 2>&1 &\n\
             sleep 0.3; exit 0",
            pids = pid_file.display()
        );
        agent(&script, dir.path()).await;
        let escaped = pids(&pid_file);
        assert_eq!(escaped.len(), 2, "{escaped:?}");
        assert!(
            escaped.iter().all(|pid| alive(*pid)),
            "they escaped the group"
        );

        let stopped = stop_leftovers().await;
        for pid in &escaped {
            assert!(!alive(*pid), "{pid} survived");
            assert!(
                !Path::new(&format!("/proc/{pid}")).exists(),
                "{pid} was not reaped"
            );
        }
        let reported: BTreeMap<i32, &str> = stopped
            .iter()
            .map(|leftover| (leftover.pid, leftover.command.as_str()))
            .collect();
        assert_eq!(reported.get(&escaped[0]), Some(&"sleep 30"), "{stopped:?}");
        assert_eq!(reported.get(&escaped[1]), Some(&"sleep 31"), "{stopped:?}");
        assert!(stop_leftovers().await.is_empty());
    }

    #[tokio::test]
    async fn a_measurements_leftover_is_told_from_an_agents() {
        in_a_process_of_its_own("measurement_and_agent_leftovers_alone").await;
    }

    #[tokio::test]
    #[ignore = "run alone by a_measurements_leftover_is_told_from_an_agents"]
    async fn measurement_and_agent_leftovers_alone() {
        if !alone() {
            return;
        }
        become_subreaper().expect("subreaper");
        let dir = tempfile::tempdir().expect("tempdir");
        let leave = |file: &str| {
            format!(
                "setsid sleep 30 >/dev/null 2>&1 < /dev/null & echo $! > '{}'; sleep 0.3; exit 0",
                dir.path().join(file).display()
            )
        };
        let measured = run(Spec::measurement(
            &leave("measured"),
            dir.path(),
            &dir.path().join("tests.log"),
        ))
        .await
        .expect("runs");
        assert_eq!(measured.termination, Termination::Exited(0));
        agent(&leave("agent"), dir.path()).await;
        let (from_measurement, from_agent) = (
            pids(&dir.path().join("measured"))[0],
            pids(&dir.path().join("agent"))[0],
        );

        let stopped = stop_leftovers().await;
        let starters: BTreeMap<i32, StartedBy> = stopped
            .iter()
            .map(|leftover| (leftover.pid, leftover.started_by))
            .collect();
        assert_eq!(
            starters,
            BTreeMap::from([
                (from_measurement, StartedBy::Measurement),
                (from_agent, StartedBy::Agent)
            ]),
            "{stopped:?}"
        );
        let lines = by_starter(&stopped);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0].0, StartedBy::Measurement);
        assert!(
            lines[0]
                .1
                .starts_with(&format!("{from_measurement} `sleep 30`"))
        );
        assert!(!alive(from_measurement) && !alive(from_agent));
    }

    #[tokio::test]
    async fn a_tree_that_ignores_sigterm_is_killed() {
        in_a_process_of_its_own("stubborn_tree_alone").await;
    }

    #[tokio::test]
    #[ignore = "run alone by a_tree_that_ignores_sigterm_is_killed"]
    async fn stubborn_tree_alone() {
        if !alone() {
            return;
        }
        become_subreaper().expect("subreaper");
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("pids");
        // An ignored signal stays ignored across fork and exec: none of the three obeys SIGTERM.
        let script = format!(
            "setsid sh -c 'trap \"\" TERM; echo $$ > \"{pids}\"; \
             sleep 30 & echo $! >> \"{pids}\"; sleep 31 & echo $! >> \"{pids}\"; wait' >/dev/null 2>&1 &\n\
             sleep 0.3; exit 0",
            pids = pid_file.display()
        );
        agent(&script, dir.path()).await;
        let tree = pids(&pid_file);
        assert_eq!(tree.len(), 3, "{tree:?}");
        assert!(tree.iter().all(|pid| alive(*pid)));

        let started = Instant::now();
        let stopped = stop_leftovers().await;
        assert!(started.elapsed() >= GRACE, "{:?}", started.elapsed());
        assert!(tree.iter().all(|pid| !alive(*pid)));
        let pids: BTreeSet<i32> = stopped.iter().map(|leftover| leftover.pid).collect();
        assert_eq!(pids, tree.iter().copied().collect(), "{stopped:?}");
    }

    #[tokio::test]
    async fn adopted_zombies_are_reaped_and_not_reported() {
        in_a_process_of_its_own("adopted_zombie_alone").await;
    }

    #[tokio::test]
    #[ignore = "run alone by adopted_zombies_are_reaped_and_not_reported"]
    async fn adopted_zombie_alone() {
        if !alone() {
            return;
        }
        become_subreaper().expect("subreaper");
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("pids");
        let script = format!(
            "setsid sleep 0.2 & echo $! > '{}'; exit 0",
            pid_file.display()
        );
        agent(&script, dir.path()).await;
        let pid = pids(&pid_file)[0];
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) {
            assert!(Instant::now() < deadline, "the sleep did not end");
            tokio::time::sleep(POLL).await;
        }
        let zombie = Stat::read(pid).expect("an unreaped zombie");
        assert_eq!(
            (zombie.state, zombie.ppid),
            ('Z', Pid::this().as_raw()),
            "adopted by the test process"
        );

        assert!(stop_leftovers().await.is_empty());
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "not reaped");
    }
}
