//! A soak of the daemon (`prpd watch`, the release binary as a user runs it): RUNS PRPs, one
//! after another, through one daemon, and its resident memory after each. Targets: back under
//! 20 MB within a minute after a run ends, and flat over 50 runs — a daemon lives for weeks, so
//! whatever a run leaves behind in it adds up. Run with `cargo bench --bench soak` (optionally
//! `-- RUNS SETTLE_SECONDS`, default `50 60`). Needs git and Python 3, no network.
//!
//! The fixture is the small Python `calc` repository of the parallel-runs benchmark
//! (`benches/parallel.rs`): each PRP asks for `subtract`, `divide` or `power` under a name of its
//! own, every phase runs `tests/it/agents/feature-agent.py` (the honest scripted agent, no
//! sleep), every check runs for real, and SHIP pushes to a local bare repository. Each PRP is
//! written once the run before it has shipped. The daemon's `VmRSS` (with its anonymous and
//! file-backed parts, `RssAnon` and `RssFile`) and its thread count are read when each run ends,
//! `SETTLE_SECONDS` after the first run (nothing else running: what one run leaves), and
//! `SETTLE_SECONDS` after the last.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod calc;
    pub mod daemon;
    pub mod git;
    pub mod repo;
    pub mod rss;
    pub mod shipping;
}

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use fixture::rss::{mib, status_kib};
use fixture::shipping::{calc_repo, feature_prp, log, pushed, shipped, stuck, wait_until_watching};

/// The functions the agent knows; PRP `n` asks for `FEATURES[n % 3]`.
const FEATURES: [&str; 3] = ["subtract", "divide", "power"];

/// How often the log is read while a run goes.
const POLL: Duration = Duration::from_millis(100);

/// How long one run may take before the benchmark gives up.
const PATIENCE: Duration = Duration::from_secs(300);

/// The daemon's memory as `/proc` shows it, in KiB, and its threads.
#[derive(Debug, Clone, Copy)]
struct Memory {
    rss: u64,
    anon: u64,
    file: u64,
    threads: usize,
}

impl Memory {
    fn of(pid: u32) -> Memory {
        let field = |name: &str| status_kib(pid, name).expect("a field of /proc/PID/status");
        Memory {
            rss: field("VmRSS"),
            anon: field("RssAnon"),
            file: field("RssFile"),
            threads: std::fs::read_dir(format!("/proc/{pid}/task"))
                .expect("tasks")
                .count(),
        }
    }

    fn row(&self, label: &str, took: &str) {
        println!(
            "{label:>12}  {took:>7}  {:>8.1}  {:>8.1}  {:>8.1}  {:>7}",
            mib(self.rss),
            mib(self.anon),
            mib(self.file),
            self.threads
        );
    }
}

/// Writes PRP `number` and waits until its run has shipped.
fn one_run(repo: &Path, daemon: &mut Child, number: usize) -> Duration {
    let name = FEATURES[number % FEATURES.len()];
    let started = Instant::now();
    std::fs::write(
        repo.join(format!("PRPs/{name}-{number:02}.md")),
        feature_prp(name, &format!("Soak {number}: {name}")),
    )
    .expect("write PRP");
    loop {
        let text = log(repo);
        if shipped(&text) == number {
            return started.elapsed();
        }
        assert!(
            !stuck(&text) && started.elapsed() < PATIENCE,
            "run {number} did not ship:\n{text}"
        );
        assert!(
            daemon.try_wait().expect("poll the daemon").is_none(),
            "the daemon exited:\n{text}"
        );
        std::thread::sleep(POLL);
    }
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with('-'));
    let runs: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(50);
    let settle = Duration::from_secs(args.next().and_then(|arg| arg.parse().ok()).unwrap_or(60));

    let scratch = tempfile::tempdir().expect("tempdir");
    let calls = scratch.path().join("agent-calls.log");
    let (repo_dir, remote) = calc_repo(scratch.path(), &calls, 1, 0.0);
    let repo = repo_dir.path().canonicalize().expect("canonical");

    let mut daemon = fixture::daemon::start(&repo, &[]);
    let pid = daemon.id();
    wait_until_watching(&repo, POLL);
    std::thread::sleep(Duration::from_secs(1));

    println!(
        "{runs} PRPs through one daemon, one after another (parallel = 1); MiB, read when each run ends"
    );
    println!(
        "{:>12}  {:>7}  {:>8}  {:>8}  {:>8}  {:>7}",
        "after", "run", "VmRSS", "RssAnon", "RssFile", "threads"
    );
    Memory::of(pid).row("start", "");
    let mut after_run = Vec::new();
    let mut settled = Vec::new();
    for number in 1..=runs {
        let took = one_run(&repo, &mut daemon, number);
        let memory = Memory::of(pid);
        memory.row(
            &format!("run {number}"),
            &format!("{:.1} s", took.as_secs_f64()),
        );
        after_run.push(memory);
        if number == 1 || number == runs {
            std::thread::sleep(settle);
            let memory = Memory::of(pid);
            memory.row(&format!("+{} s", settle.as_secs()), "");
            settled.push(memory);
        }
    }
    let pushed = pushed(&remote);
    assert_eq!(pushed.lines().count(), runs, "SHIP pushed {pushed:?}");

    let at = |number: usize| {
        after_run
            .get(number - 1)
            .map_or(f64::NAN, |memory| mib(memory.rss))
    };
    let seconds = settle.as_secs();
    println!(
        "VmRSS {seconds} s after run 1: {:.1} MiB; after run 1 / 10 / 25 / {runs}: {:.1} / {:.1} / {:.1} / {:.1} MiB; {seconds} s after the last: {:.1} MiB",
        mib(settled[0].rss),
        at(1),
        at(10),
        at(25),
        at(runs),
        mib(settled[settled.len() - 1].rss)
    );
    let _ = daemon.kill();
    let _ = daemon.wait();
}
