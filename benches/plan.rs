//! Figures for `prpd plan explore` (the release binary, as a user runs it, with the real
//! headless Chromium) on a generated site of 50 pages served by the benchmark itself: each page
//! links to three others and home, every fifth page has a form. It prints the pages explored,
//! the wall time, pages per second (overall, and after the first page, which waits for the
//! browser to start), and the peak memory of prpd and of the browser, sampled
//! every 50 ms: the resident set (`VmRSS`) of prpd, the sum of the resident sets of every process
//! in Chromium's process group (which counts the pages they share once per process), and the
//! same group's proportional set size (PSS, shared pages divided among their users: what the
//! group really costs). Run with `cargo bench --bench plan` (optionally `-- PAGES`, default 50).
//! Needs git and Chromium, no network.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod git;
}

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fixture::git::git;

/// How often memory is sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// Page `index` of a site of `count` pages: links to three others spread over the site (so
/// breadth first reaches every page within a few levels) and home; every fifth page a form.
fn page(index: usize, count: usize) -> String {
    let path = |target: usize| {
        if target == 0 {
            "/".to_owned()
        } else {
            format!("/p/{target}")
        }
    };
    let mut body = format!("<h1>Page {index}</h1>\n<nav>\n");
    for target in [
        (index + 1) % count,
        (index * 2 + 1) % count,
        (index * 7 + 3) % count,
        0,
    ] {
        let _ = writeln!(body, "<a href=\"{}\">Go to page {target}</a>", path(target));
    }
    body.push_str(
        "</nav>\n<p>Some text about this page, long enough to be a paragraph of it.</p>\n",
    );
    if index.is_multiple_of(5) {
        body.push_str(
            "<form action=\"/signup\" method=\"post\">\n\
             <label for=\"name\">Name</label> <input id=\"name\" name=\"name\" required maxlength=\"40\">\n\
             <label for=\"age\">Age</label> <input id=\"age\" type=\"number\" name=\"age\" min=\"18\" max=\"120\">\n\
             <label for=\"email\">Email</label> <input id=\"email\" type=\"email\" name=\"email\">\n\
             <button type=\"submit\">Send</button>\n</form>\n",
        );
    }
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Page {index}</title></head>\
         <body>\n{body}</body></html>\n"
    )
}

/// Serves `pages` (path → HTML) on 127.0.0.1 from a thread per connection; returns the port.
/// The server lives as long as the benchmark.
fn serve(pages: HashMap<String, String>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let pages = Arc::new(pages);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let pages = Arc::clone(&pages);
            std::thread::spawn(move || {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut request = Vec::new();
                let mut buffer = [0_u8; 4096];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let request = String::from_utf8_lossy(&request);
                let target = request.split(' ').nth(1).unwrap_or("/");
                let path = target.split('?').next().unwrap_or("/");
                let (status, html) = match pages.get(path) {
                    Some(html) => ("200 OK", html.as_str()),
                    None => ("404 Not Found", "<title>Not found</title>"),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
            });
        }
    });
    port
}

#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark measures the real binary, started as a user starts it"
)]
fn start_prpd(repo: &Path, scratch: &Path, url: &str, pages: usize) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_prpd"))
        .args(["plan", "explore", "-u", url, "-d", "10", "--max-pages"])
        .arg(pages.to_string())
        .current_dir(repo)
        .env("PRPD_LOG", "warn")
        .env("TMPDIR", scratch)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start prpd plan explore")
}

/// A field of `/proc/<pid>/status` or `smaps_rollup` in KiB (`VmRSS:`, `Pss:`).
fn kib(pid: u32, file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Fields 4 and 5 of `/proc/<pid>/stat`: the parent and the process group.
fn parent_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let mut fields = rest.split_whitespace().skip(1);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect()
}

/// The `snapshot` lines of the run's transcript so far (0 before it exists).
fn snapshots_taken(repo: &Path) -> usize {
    let Ok(runs) = std::fs::read_dir(repo.join(".prp-session/runs")) else {
        return 0;
    };
    runs.flatten()
        .filter_map(|run| {
            std::fs::read_to_string(run.path().join("plan-explore/transcript.jsonl")).ok()
        })
        .map(|transcript| transcript.matches("\"action\":\"snapshot\"").count())
        .sum()
}

/// Peak memory, in KiB.
#[derive(Debug, Default)]
struct Peaks {
    prpd_rss: u64,
    browser_rss: u64,
    browser_pss: u64,
    browser_processes: usize,
}

impl Peaks {
    /// One sample: prpd, and every process in the group of prpd's browser child (its group
    /// leader is a child of prpd; renderers, GPU and utility processes are in its group).
    fn sample(&mut self, prpd: u32) {
        self.prpd_rss = self.prpd_rss.max(kib(prpd, "status", "VmRSS:"));
        let all: Vec<(u32, u32, u32)> = pids()
            .into_iter()
            .filter_map(|pid| parent_and_group(pid).map(|(parent, group)| (pid, parent, group)))
            .collect();
        let groups: Vec<u32> = all
            .iter()
            .filter(|(pid, parent, group)| *parent == prpd && pid == group)
            .map(|(pid, _, _)| *pid)
            .collect();
        let members: Vec<u32> = all
            .iter()
            .filter(|(_, _, group)| groups.contains(group))
            .map(|(pid, _, _)| *pid)
            .collect();
        let rss = members
            .iter()
            .map(|pid| kib(*pid, "status", "VmRSS:"))
            .sum();
        let pss = members
            .iter()
            .map(|pid| kib(*pid, "smaps_rollup", "Pss:"))
            .sum();
        self.browser_rss = self.browser_rss.max(rss);
        self.browser_pss = self.browser_pss.max(pss);
        self.browser_processes = self.browser_processes.max(members.len());
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "figures printed for a person: page counts and KiB stay far below 2^52"
)]
fn main() {
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(50);
    let pages: HashMap<String, String> = (0..count)
        .map(|index| {
            let path = if index == 0 {
                "/".to_owned()
            } else {
                format!("/p/{index}")
            };
            (path, page(index, count))
        })
        .collect();
    let port = serve(pages);
    let url = format!("http://127.0.0.1:{port}/");
    let repo = tempfile::tempdir().expect("repository");
    let scratch = tempfile::tempdir().expect("TMPDIR");
    git(repo.path(), &["init", "-q"]);

    let started = Instant::now();
    let mut prpd = start_prpd(repo.path(), scratch.path(), &url, count);
    let mut peaks = Peaks::default();
    let mut first_page = None;
    while prpd.try_wait().expect("wait").is_none() {
        peaks.sample(prpd.id());
        if first_page.is_none() && snapshots_taken(repo.path()) > 0 {
            first_page = Some(started.elapsed());
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    let wall = started.elapsed();
    let first_page = first_page.unwrap_or(wall);
    let output = prpd.wait_with_output().expect("output");
    assert!(
        output.status.success(),
        "prpd plan explore failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let runs = repo.path().join(".prp-session/runs");
    let run = std::fs::read_dir(&runs)
        .expect("runs")
        .flatten()
        .next()
        .expect("a run directory")
        .path();
    let graph: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("plan-explore/graph.json")).expect("graph.json"),
    )
    .expect("graph JSON");
    let explored = graph["pages"].as_array().map_or(0, Vec::len);
    let elements: usize = graph["pages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|page| page["elementSummary"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(explored, count, "every page of the site is explored");

    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "site of {count} pages on 127.0.0.1: explored {explored} pages ({elements} elements, {} links) \
         in {:.2} s, {:.1} pages/s (browser start included)",
        graph["edges"].as_array().map_or(0, Vec::len),
        wall.as_secs_f64(),
        explored as f64 / wall.as_secs_f64()
    );
    println!(
        "first page recorded after {:.2} s (prpd and Chromium starting); the other {} pages at {:.1} pages/s",
        first_page.as_secs_f64(),
        explored - 1,
        (explored - 1) as f64 / wall.saturating_sub(first_page).as_secs_f64()
    );
    println!("peak RSS of prpd: {:.1} MiB", mib(peaks.prpd_rss));
    println!(
        "peak of Chromium's process group ({} processes at most): RSS summed {:.0} MiB, PSS summed {:.0} MiB",
        peaks.browser_processes,
        mib(peaks.browser_rss),
        mib(peaks.browser_pss)
    );
}
