//! Figures for parallel runs in the daemon (`prpd watch`): the wall time from dropping three
//! independent PRPs into `PRPs/` at once until all three runs are SHIPPED, with
//! `[watch] parallel = 3` and with `parallel = 1` (the sequential baseline), and the daemon's
//! peak RSS meanwhile (its `VmRSS`, sampled every 50 ms). Target: `parallel = 3` takes at most
//! half the sequential time on two cores (the agents' calls overlap; prpd's checks share the
//! cores). Run with `cargo bench --bench parallel` (optionally `-- AGENT_SECONDS ROUNDS`,
//! default `1 1`; with several rounds the summary gives the medians). It drives the real
//! release binary, as a user runs it.
//!
//! The fixture is a small Python repository (`calc.py`, unittest through `make test`) whose
//! three PRPs ask for `subtract`, `divide` and `power`; SHIP pushes to a local bare repository,
//! so the runs ship offline. Every phase runs `tests/it/agents/feature-agent.py`, the honest
//! scripted agent of the parallel-run tests, told to sleep `AGENT_SECONDS` per call before it
//! does the work right the first
//! time: a run makes five agent calls, so agent time (which parallel runs overlap, up to
//! `[watch] max_agents` at once) and prpd's own checks (which share `[watch] max_checks` slots
//! and the machine's cores) both weigh in the figure, as with real agents, whose calls last
//! minutes.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod calc;
    pub mod daemon;
    pub mod git;
    pub mod repo;
    pub mod rss;
    pub mod shipping;
    pub mod stop;
}

use std::path::Path;
use std::time::{Duration, Instant};

use fixture::rss::{mib, status_kib};
use fixture::shipping::{calc_repo, feature_prp, log, pushed, shipped, stuck, wait_until_watching};
use fixture::stop::stop;

/// The three PRPs: the function each asks for and its title.
const FEATURES: [(&str, &str); 3] = [
    ("subtract", "Subtract numbers"),
    ("divide", "Divide numbers"),
    ("power", "Raise to a power"),
];

/// How often the daemon's RSS and log are read while the runs go.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// How long one case may take before the benchmark gives up on it.
const PATIENCE: Duration = Duration::from_secs(900);

/// `prpd status --json` of `repo`, as a user asks the daemon.
#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark asks the real binary, as a user does"
)]
fn status(repo: &Path) -> serde_json::Value {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_prpd"))
        .args(["status", "--json"])
        .current_dir(repo)
        .env("PRPD_LOG", "warn")
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("run prpd status");
    serde_json::from_slice(&output.stdout).expect("prpd status --json prints JSON")
}

/// The machine's 1-minute load average, as `/proc/loadavg` gives it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// What one case measured.
#[derive(Debug)]
struct Measured {
    parallel: usize,
    /// From the three PRPs written to the third "run ended" with SHIPPED in the log.
    wall: Duration,
    peak_rss_kib: u64,
    agent_calls: usize,
    load_before: String,
}

/// A fresh repository and daemon with `parallel`; the three PRPs dropped at once, timed until
/// all three runs are SHIPPED.
fn measure(parallel: usize, agent_seconds: f64) -> Measured {
    let scratch = tempfile::tempdir().expect("tempdir");
    let calls = scratch.path().join("agent-calls.log");
    let (repo_dir, remote) = calc_repo(scratch.path(), &calls, parallel, agent_seconds);
    let repo = repo_dir.path().canonicalize().expect("canonical");

    let mut daemon = fixture::daemon::start(&repo, &[]);
    let pid = daemon.id();
    wait_until_watching(&repo, SAMPLE_EVERY);

    let load_before = load_average();
    let mut peak_rss_kib = status_kib(pid, "VmRSS").expect("the daemon runs");
    let dropped = Instant::now();
    for (name, title) in FEATURES {
        std::fs::write(
            repo.join(format!("PRPs/{name}.md")),
            feature_prp(name, title),
        )
        .expect("write PRP");
    }
    loop {
        if let Some(rss) = status_kib(pid, "VmRSS") {
            peak_rss_kib = peak_rss_kib.max(rss);
        }
        let text = log(&repo);
        if shipped(&text) == FEATURES.len() {
            break;
        }
        assert!(
            !stuck(&text) && Instant::now() < dropped + PATIENCE,
            "parallel = {parallel}: the runs did not all ship:\n{text}"
        );
        assert!(
            daemon.try_wait().expect("poll the daemon").is_none(),
            "the daemon exited:\n{text}"
        );
        std::thread::sleep(SAMPLE_EVERY);
    }
    let wall = dropped.elapsed();

    let states: Vec<String> = status(&repo)["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| run["state"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(states, ["SHIPPED"; 3], "prpd status disagrees with the log");
    let pushed = pushed(&remote);
    assert_eq!(pushed.lines().count(), 3, "SHIP pushed {pushed:?}");
    stop(&mut daemon);

    Measured {
        parallel,
        wall,
        peak_rss_kib,
        agent_calls: std::fs::read_to_string(&calls)
            .expect("agent calls")
            .lines()
            .filter(|line| line.starts_with("start "))
            .count(),
        load_before,
    }
}

/// The middle of `walls` (the mean of the two middle ones for an even count).
fn median(mut walls: Vec<Duration>) -> Duration {
    walls.sort();
    let middle = walls.len() / 2;
    if walls.len().is_multiple_of(2) {
        (walls[middle - 1] + walls[middle]) / 2
    } else {
        walls[middle]
    }
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with('-'));
    let agent_seconds: f64 = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(1.0);
    let rounds: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(1);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "three PRPs dropped at once until all are SHIPPED; each agent call sleeps {agent_seconds} s; \
         {cores} cores; [watch] max_agents and max_checks at their defaults"
    );
    println!(
        "{:>5}  {:>8}  {:>10}  {:>13}  {:>11}  {:>12}",
        "round", "parallel", "wall", "peak RSS", "agent calls", "load before"
    );
    let mut by_parallel: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=rounds {
        for (slot, parallel) in [1, 3].into_iter().enumerate() {
            let measured = measure(parallel, agent_seconds);
            println!(
                "{round:>5}  {:>8}  {:>8.1} s  {:>9.1} MiB  {:>11}  {:>12}",
                measured.parallel,
                measured.wall.as_secs_f64(),
                mib(measured.peak_rss_kib),
                measured.agent_calls,
                measured.load_before
            );
            by_parallel[slot].push(measured.wall);
        }
    }
    let [sequential, parallel] = by_parallel.map(|walls| median(walls).as_secs_f64());
    println!(
        "median wall: parallel = 1 {sequential:.1} s, parallel = 3 {parallel:.1} s: {:.2}x faster",
        sequential / parallel
    );
}
