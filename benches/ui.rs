//! Figures for the dashboard (`prpd watch --ui`, the release binary as a user runs it) on a real
//! run of 200 iterations: what its pages weigh, how long the server takes to answer the run's
//! page (the median of LOADS requests, each timed from connecting to the last byte), how long
//! Chromium takes from the navigation to `DOMContentLoaded` and to the first contentful paint
//! (when a Chromium is found: `PRPD_CHROMIUM`, else `chromium` and the usual names on `PATH`),
//! and the daemon's resident memory (`VmRSS`) idle without the dashboard, idle with it, and
//! after LOADS loads of the run page. Run with `cargo bench --bench ui` (optionally
//! `-- ITERATIONS LOADS`, default `200 20`). Needs git and Python 3, no network.
//!
//! The run is made cheaply, but by prpd for real (`prpd run --in-place`): every phase's agent is
//! a shell one-liner that changes nothing and says it is not done, RED's breaker is raised out
//! of reach, and the guardrail on agent calls stops the run, escalated in RED after ITERATIONS
//! iterations, each with its prompt, output, snapshot and measurement (the fixture's tests run
//! once; the same tree's result is reused after that, as in any run).

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod calc;
    pub mod daemon;
    pub mod git;
    pub mod repo;
    pub mod rss;
    pub mod stop;
}

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fixture::rss::{mib, status_kib};
use fixture::stop::stop;
use prpd_web::browser::Browser;

/// The agent of every phase: reads the prompt, changes nothing, says it is not done.
const AGENT: &str = "cat >/dev/null; printf 'Looked around, changed nothing.\\n\
---PRP_PHASE_STATUS---\\nPHASE: %s\\nSTATUS: IN_PROGRESS\\nITERATION: %s\\nEXIT_SIGNAL: false\\n\
RECOMMENDATION: keep looking\\n---END_PRP_PHASE_STATUS---\\n' \"$PRPD_PHASE\" \"$PRPD_ITERATION\"";

const PRP: &str = "PRPs/subtract.md";

/// How long the daemon is left alone before its idle memory is read.
const IDLE: Duration = Duration::from_secs(5);

/// How many times Chromium opens the run page.
const BROWSER_LOADS: usize = 10;

/// prpd.toml: the idle agent in every phase, a guardrail at `iterations` agent calls, RED's
/// breaker out of reach.
fn prpd_toml(iterations: usize) -> String {
    let mut toml = fixture::calc::agents_toml(&format!("[\"sh\", \"-c\", {AGENT:?}]"), "60s");
    write!(
        toml,
        "[guardrails]\nmax_agent_invocations = {iterations}\nmax_calls_per_hour = {}\n\n\
         [breaker.red]\nno_progress = {}\nsame_error = {}\n",
        iterations * 10,
        iterations * 10,
        iterations * 10
    )
    .expect("write to a String");
    toml
}

/// The committed Python `calc` repository with a PRP that asks for `subtract`.
fn calc_repo(config: &str) -> tempfile::TempDir {
    fixture::calc::repo(&[
        (
            PRP,
            "# Subtract numbers\n\n## Goal\n\nAdd `subtract(a, b)` to calc.\n\n\
             ## Success Criteria\n\n- [ ] `subtract` is defined in `calc.py`\n\n\
             ## Acceptance Criteria\n\n- AC-1: `subtract(a, b)` is `a` minus `b`.\n",
        ),
        ("prpd.toml", config),
    ])
}

/// `prpd run --in-place` of the PRP until it escalates; the run's id and its iterations.
#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark makes its run with the real binary, as a user does"
)]
fn make_run(repo: &Path) -> (String, u64) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_prpd"))
        .args(["run", "--in-place", PRP, "--json"])
        .current_dir(repo)
        .env("PRPD_LOG", "warn")
        .env_remove("GITHUB_TOKEN")
        .stderr(Stdio::inherit())
        .output()
        .expect("run prpd run");
    let summary: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("prpd run --json prints JSON");
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert!(summary["guardrail"].is_string(), "{summary:#}");
    let run = summary["run_id"].as_str().expect("a run id").to_owned();
    let iterations = summary["iterations_per_phase"]["RED"]
        .as_u64()
        .unwrap_or_default();
    (run, iterations)
}

/// `prpd watch` on `repo`, with `args`; returns once it watches (and, with `--ui`, serves).
fn start_daemon(repo: &Path, args: &[&str]) -> Child {
    let _ = std::fs::remove_file(repo.join(".prp-session/prpd.log"));
    let child = fixture::daemon::start(repo, args);
    wait_for_start(repo, !args.is_empty());
    child
}

/// Waits until the daemon watches `repo` and, with `ui`, serves the dashboard.
fn wait_for_start(repo: &Path, ui: bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = std::fs::read_to_string(repo.join(".prp-session/prpd.log")).unwrap_or_default();
        if log.contains("\"watching\"")
            && repo.join(".prp-session/prpd.sock").exists()
            && (!ui || repo.join(".prp-session/ui.address").exists())
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not start:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
fn memory_kib(pid: u32, field: &str) -> u64 {
    status_kib(pid, field).unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// One `GET path` to the dashboard at `host` (`127.0.0.1:PORT`): the status, the body's
/// length, and the time from connecting to the last byte.
fn get(host: &str, path: &str) -> (u16, usize, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(host).expect("connect to the dashboard");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read the answer");
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_default();
    let body = text
        .find("\r\n\r\n")
        .map_or(0, |head| response.len() - head - 4);
    (status, body, took)
}

/// The middle of `values` (the mean of the two middle ones for an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        f64::midpoint(values[middle - 1], values[middle])
    } else {
        values[middle]
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "figures printed for a person: bytes stay far below 2^52"
)]
fn kb(bytes: usize) -> String {
    format!("{:.1} KB ({bytes} bytes)", bytes as f64 / 1000.0)
}

/// What Chromium measured over `loads` navigations to `url`: the medians (ms) of
/// `DOMContentLoaded`'s end, the first contentful paint, and the load event's end, each from
/// the navigation's start. `None` when no Chromium is found.
fn in_chromium(url: &str, loads: usize) -> Option<[f64; 3]> {
    let cwd = std::env::current_dir().expect("cwd");
    if let Err(missing) = prpd_web::browser::program(&cwd) {
        println!("(no browser figures: {missing})");
        return None;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    Some(runtime.block_on(async {
        let mut browser = Browser::start(&scratch.path().join("chromium.log"))
            .await
            .expect("start Chromium");
        let mut tab = browser.new_tab().await.expect("a tab");
        let mut figures: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..loads {
            tab.open("about:blank").await.expect("blank");
            tab.open(url).await.expect("open the run page");
            let timing = tab
                .evaluate(
                    "new Promise(done => { const read = () => { \
                     const paint = performance.getEntriesByName('first-contentful-paint')[0]; \
                     const navigation = performance.getEntriesByType('navigation')[0]; \
                     if (paint && navigation.loadEventEnd > 0) done([ \
                       navigation.domContentLoadedEventEnd, paint.startTime, \
                       navigation.loadEventEnd]); \
                     else setTimeout(read, 20); }; read(); })",
                )
                .await
                .expect("the page's timing");
            for (slot, value) in figures.iter_mut().zip(timing.as_array().expect("three")) {
                slot.push(value.as_f64().expect("a number"));
            }
        }
        browser.close().await;
        figures.map(median)
    }))
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with('-'));
    let iterations: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(200);
    let loads: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(20);

    let repo_dir = calc_repo(&prpd_toml(iterations));
    let repo = repo_dir.path().canonicalize().expect("canonical");
    let started = Instant::now();
    let (run, made) = make_run(&repo);
    println!(
        "a run of {made} RED iterations (escalated by the guardrail), made in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let mut daemon = start_daemon(&repo, &[]);
    std::thread::sleep(IDLE);
    let idle_without = memory_kib(daemon.id(), "VmRSS");
    stop(&mut daemon);

    let mut daemon = start_daemon(&repo, &["--ui", "127.0.0.1:0"]);
    std::thread::sleep(IDLE);
    let pid = daemon.id();
    let idle_with = memory_kib(pid, "VmRSS");
    let base = std::fs::read_to_string(repo.join(".prp-session/ui.address")).expect("ui.address");
    let host = base
        .trim()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();

    let page = format!("/runs/{run}");
    let mut weights = Vec::new();
    for path in ["/", page.as_str(), "/assets/app.js", "/assets/app.css"] {
        let (status, bytes, _) = get(&host, path);
        assert_eq!(status, 200, "GET {path}");
        weights.push(bytes);
    }
    let mut answers = Vec::new();
    for _ in 0..loads {
        let (status, _, took) = get(&host, &page);
        assert_eq!(status, 200);
        answers.push(took.as_secs_f64() * 1000.0);
    }
    std::thread::sleep(Duration::from_secs(1));
    let after_loads = memory_kib(pid, "VmRSS");
    let peak = memory_kib(pid, "VmHWM");
    let browser = in_chromium(&format!("http://{host}{page}"), BROWSER_LOADS);
    stop(&mut daemon);

    println!();
    println!("| what | figure |");
    println!("| --- | --- |");
    println!("| the runs page (one run) | {} |", kb(weights[0]));
    println!("| the run page, {made} iterations | {} |", kb(weights[1]));
    println!(
        "| app.js + app.css | {} + {} = {} |",
        kb(weights[2]),
        kb(weights[3]),
        kb(weights[2] + weights[3])
    );
    println!(
        "| the server's answer to the run page (connect to last byte) | {:.1} ms median of {loads} (min {:.1}, max {:.1}) |",
        median(answers.clone()),
        answers.iter().copied().fold(f64::INFINITY, f64::min),
        answers.iter().copied().fold(0.0, f64::max)
    );
    if let Some([loaded, painted, load]) = browser {
        println!(
            "| Chromium: navigation to DOMContentLoaded / first contentful paint / load | {loaded:.0} / {painted:.0} / {load:.0} ms (median of {BROWSER_LOADS}) |"
        );
    }
    println!(
        "| the daemon idle, without / with the dashboard (VmRSS) | {:.1} / {:.1} MiB |",
        mib(idle_without),
        mib(idle_with)
    );
    println!(
        "| the same after {loads} loads of the run page (VmRSS, peak VmHWM) | {:.1} MiB, peak {:.1} MiB |",
        mib(after_loads),
        mib(peak)
    );
}
