//! Figures for the daemon (`prpd watch`) on a generated repository of 50,000 files: how long it
//! takes to start watching, its memory (RSS) and CPU while idle, the latency from writing a PRP
//! to the run's start, and how many change batches 10,000 writes under the ignored `target/`
//! cause. Targets: RSS under 20 MB, CPU near 0, latency within the debounce + 50 ms, zero
//! batches. Run with `cargo bench --bench watch` (optionally `-- FILES IDLE_SECONDS`, default
//! `50000 60`). It drives the real release binary, as a user runs it.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod git;
    pub mod repo;
    pub mod rss;
}

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fixture::repo::commit_files;
use fixture::rss::{mib, status_kib};

/// The debounce the benchmark configures (the default of `[watch] debounce`).
const DEBOUNCE_MS: u64 = 500;

/// A committed repository of `count` small files, 100 to a directory, with a test command and
/// a `.gitignore` that leaves `target/` out.
fn generated_repo(count: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for index in 0..count {
        let folder = dir.path().join(format!("src/d{}", index / 100));
        if index % 100 == 0 {
            std::fs::create_dir_all(&folder).expect("mkdir");
        }
        std::fs::write(
            folder.join(format!("f{index}.py")),
            format!("value = {index}\n"),
        )
        .expect("write");
    }
    std::fs::create_dir_all(dir.path().join("PRPs")).expect("PRPs");
    let config = format!("[watch]\ndebounce = \"{DEBOUNCE_MS}ms\"\n");
    commit_files(
        dir.path(),
        &[
            (".gitignore", "target/\n"),
            ("Makefile", "test:\n\t@echo ok\n"),
            ("prpd.toml", &config),
        ],
        "generated",
    );
    dir
}

#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark measures the real daemon, started as a user starts it"
)]
fn start_daemon(repo: &Path) -> Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_prpd"))
        .args(["watch", "--repo"])
        .arg(repo)
        .env("PRPD_LOG", "prpd=debug")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prpd watch")
}

fn log(repo: &Path) -> String {
    std::fs::read_to_string(repo.join(".prp-session/prpd.log")).unwrap_or_default()
}

fn wait_for_log(repo: &Path, needles: &[&str], patience: Duration) -> Instant {
    let deadline = Instant::now() + patience;
    loop {
        if logged_line(repo, needles).is_some() {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "no line with {needles:?} in the log:\n{}",
            log(repo)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS").expect("VmRSS")
}

/// User + system CPU time of `pid` in clock ticks (100 per second on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after_name = stat.rsplit(')').next().expect("stat fields");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 and 15 of stat(5), counted after the name: state is 3, utime 14, stime 15.
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// The first line of the daemon's log that holds every one of `needles`.
fn logged_line(repo: &Path, needles: &[&str]) -> Option<String> {
    log(repo)
        .lines()
        .find(|line| needles.iter().all(|needle| line.contains(needle)))
        .map(str::to_owned)
}

/// The JSON log's timestamp of the first line holding every one of `needles`, as seconds since
/// the epoch.
fn logged_at(repo: &Path, needles: &[&str]) -> f64 {
    let line = logged_line(repo, needles).expect("logged");
    let value: serde_json::Value = serde_json::from_str(&line).expect("JSON line");
    let stamp = value["timestamp"].as_str().expect("timestamp");
    let time = humantime::parse_rfc3339(stamp).expect("RFC 3339");
    time.duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs_f64()
}

#[expect(
    clippy::cast_precision_loss,
    reason = "figures printed for a person: ticks, KiB and seconds stay far below 2^52"
)]
fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with('-'));
    let files: usize = args
        .next()
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(50_000);
    let idle_seconds: u64 = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(60);

    let built = Instant::now();
    let repo = generated_repo(files);
    let path = repo.path().canonicalize().expect("canonical");
    println!(
        "repository of {files} files built in {:.1?}",
        built.elapsed()
    );

    let started = Instant::now();
    let mut daemon = start_daemon(&path);
    let watching = wait_for_log(&path, &["\"watching\""], Duration::from_secs(120));
    println!("started watching in {:.0?}", watching - started);
    let pid = daemon.id();

    let ticks_before = cpu_ticks(pid);
    let mut peak_rss = rss_kib(pid);
    let idle_start = Instant::now();
    while idle_start.elapsed() < Duration::from_secs(idle_seconds) {
        std::thread::sleep(Duration::from_secs(1));
        peak_rss = peak_rss.max(rss_kib(pid));
    }
    let cpu_seconds = (cpu_ticks(pid) - ticks_before) as f64 / 100.0;
    println!(
        "idle {idle_seconds} s: peak RSS {:.1} MiB, CPU {cpu_seconds:.2} s ({:.3} % of one core)",
        mib(peak_rss),
        cpu_seconds * 100.0 / idle_seconds as f64
    );

    let batches_before = log(&path).matches("\"file changes\"").count();
    let churn = Instant::now();
    for index in 0..10_000 {
        let folder = path.join(format!("target/debug/d{}", index / 500));
        if index % 500 == 0 {
            std::fs::create_dir_all(&folder).expect("mkdir");
        }
        std::fs::write(folder.join(format!("o{index}.o")), index.to_string()).expect("write");
    }
    std::thread::sleep(Duration::from_millis(DEBOUNCE_MS * 3));
    let batches = log(&path).matches("\"file changes\"").count() - batches_before;
    println!(
        "10,000 writes under target/ in {:.0?}: {batches} change batches reached the daemon",
        churn.elapsed()
    );
    peak_rss = peak_rss.max(rss_kib(pid));

    let mut latencies = Vec::new();
    for round in 0..5 {
        let name = format!("PRPs/bench-{round}.md");
        let written = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after the epoch")
            .as_secs_f64();
        std::fs::write(
            path.join(&name),
            format!(
                "# Bench {round}\n\n## Goal\n\nPrint a greeting.\n\n## Success Criteria\n\n\
                 - [ ] `make hello` prints `hello {round}`\n"
            ),
        )
        .expect("write PRP");
        let prp = format!("\"prp\":\"{name}\"");
        let needles = ["\"starting a run\"", &prp];
        wait_for_log(&path, &needles, Duration::from_secs(30));
        latencies.push((logged_at(&path, &needles) - written) * 1000.0);
        // The next PRP is written to an idle daemon, not queued behind this run: each session
        // of a run ends with its own-time line (debug).
        let deadline = Instant::now() + Duration::from_secs(300);
        while log(&path)
            .matches("prpd's own time in this session")
            .count()
            <= round
        {
            assert!(Instant::now() < deadline, "run {round} did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(DEBOUNCE_MS * 2));
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "PRP write to the run's start (debounce {DEBOUNCE_MS} ms), 5 rounds: median {:.0} ms, max {:.0} ms",
        latencies[2], latencies[4]
    );
    println!(
        "peak RSS over the whole benchmark: {:.1} MiB",
        mib(peak_rss)
    );

    let _ = daemon.kill();
    let _ = daemon.wait();
}
