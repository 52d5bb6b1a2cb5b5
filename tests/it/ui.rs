//! The dashboard over HTTP, against the real daemon (`prpd watch --ui`) and `prpd ui`: a run
//! that QA rejects once and then escalates on REFACTOR's breaker is listed, its page has the
//! timeline, the escalation and the buttons, what the agent printed is text, and a resume
//! without the token (or for another `Host`) is refused and changes nothing, while the same
//! request with the token resumes the run to SHIPPED. The browser's side of it is in
//! `ui_browser.rs`.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::run::{PRP, read};
use crate::verify::verify_loop_repo_with;
use crate::watch::{Daemon, PATIENCE, WATCH, state, status};

/// One HTTP/1.1 request to the dashboard at `base` (`http://127.0.0.1:PORT/`), with `headers`
/// (a `Host` among them replaces the right one); the status and the body.
pub(crate) fn http(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let (status, _, body) = http_with_head(base, method, path, headers);
    (status, body)
}

/// [`http`] with the answer's head (the status line and the headers, lowercase).
pub(crate) fn http_with_head(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let host = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut stream = TcpStream::connect(&host).expect("connect to the dashboard");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: 0\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        let _ = write!(request, "Host: {host}\r\n");
    }
    for (name, value) in headers {
        let _ = write!(request, "{name}: {value}\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read the answer");
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {text}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// The headers every answer of the dashboard carries, whatever it says.
fn assert_guarded(head: &str) {
    for expected in [
        "content-security-policy: default-src 'none'; script-src 'self';",
        "x-frame-options: deny",
        "x-content-type-options: nosniff",
        "cross-origin-resource-policy: same-origin",
        "referrer-policy: no-referrer",
        "x-prpd-dashboard: ",
    ] {
        assert!(head.contains(expected), "{expected} in\n{head}");
    }
}

/// The dashboard's URL (written by whoever serves it) and the repository's token.
pub(crate) fn dashboard(repo: &Path) -> (String, String) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(url) = std::fs::read_to_string(repo.join(".prp-session/ui.address")) {
            let token = read(&repo.join(".prp-session/ui.token"));
            return (url.trim().to_owned(), token.trim().to_owned());
        }
        assert!(Instant::now() < deadline, "no dashboard came up");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fixture: `calc` with a `[VERIFY]` task GREEN fails once (QA rejects), and a REFACTOR
/// agent that gets stuck when the run comes back to it (its breaker opens after two idle
/// iterations, with no cooldown probe), then works on the resume.
pub(crate) fn reject_then_escalate_repo() -> crate::util::TestRepo {
    verify_loop_repo_with(
        &[("green", "verify-late"), ("refactor", "stuck-on-return")],
        &format!("[breaker]\ncooldown = \"1h\"\n\n[breaker.refactor]\nno_progress = 2\n\n{WATCH}"),
    )
    .0
}

/// [`reject_then_escalate_repo`] under a daemon that serves the dashboard, its PRP queued and
/// escalated: the repository, the daemon, the dashboard's URL and token, and the run's id.
pub(crate) fn escalated_under_the_dashboard()
-> (crate::util::TestRepo, Daemon, String, String, String) {
    let repo = reject_then_escalate_repo();
    let daemon = Daemon::start_with(repo.path(), &["--ui", "127.0.0.1:0"]);
    let (base, token) = dashboard(repo.path());
    let output = repo.prpd().args(["queue", PRP]).output().expect("queue");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    daemon.wait_for("the escalation", || state(repo.path()) == "ESCALATED");
    let run = status(repo.path())["run_id"]
        .as_str()
        .expect("run id")
        .to_owned();
    (repo, daemon, base, token, run)
}

#[test]
fn the_dashboard_lists_an_escalated_run_and_resumes_it_only_with_the_token() {
    let (repo, daemon, base, token, run) = escalated_under_the_dashboard();
    let summary = status(repo.path());
    assert_eq!(summary["phase"], "REFACTOR", "{summary:#}");
    assert_eq!(summary["verdicts"][0]["verdict"], "REJECT", "{summary:#}");

    let (code, runs) = http(&base, "GET", "/", &[]);
    assert_eq!(code, 200, "{runs}");
    assert!(
        runs.contains(&format!(
            "<tr data-run=\"{run}\" data-state=\"escalated\" data-phase=\"REFACTOR\">"
        )),
        "{runs}"
    );
    assert!(runs.contains("Waiting for you"), "{runs}");

    let (code, head, page) = http_with_head(&base, "GET", &format!("/runs/{run}"), &[]);
    assert_eq!(code, 200, "{page}");
    assert_guarded(&head);
    assert!(!page.contains("<script>alert"), "{page}");
    for expected in [
        "<span id=\"run-state\" class=\"state escalated\">escalated</span>",
        "<dd id=\"run-phase\">REFACTOR</dd>",
        "<h2>Escalated in REFACTOR</h2>",
        "id=\"resume\"",
        "class=\"timeline\"",
        "data-phase=\"QA\"",
        "bar reject",
        "bar breaker",
        "<section id=\"receipt\">",
        "<section id=\"qa-report\">",
    ] {
        assert!(page.contains(expected), "{expected} in\n{page}");
    }
    assert!(
        repo.join(&format!(".prp-session/runs/{run}/timeline.svg"))
            .is_file(),
        "timeline.svg beside escalation.md"
    );
    agent_output_is_text(&base, &run, &page);
    refused_actions_change_nothing(repo.path(), &base, &token, &run);

    // `prpd ui` finds the daemon's dashboard instead of starting another.
    let output = repo.prpd().arg("ui").output().expect("prpd ui");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed.contains(&format!("{base}#token={token}")),
        "{printed}"
    );

    let resume = format!("/runs/{run}/resume");
    let (code, body) = http(&base, "POST", &resume, &[("X-Prpd-Token", &token)]);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"ok\":true"), "{body}");
    daemon.wait_for("the resumed run to ship", || {
        state(repo.path()) == "SHIPPED"
    });
    let (_, page) = http(&base, "GET", &format!("/runs/{run}"), &[]);
    assert!(page.contains("class=\"state shipped\">shipped<"), "{page}");
    assert!(!page.contains("id=\"resume\""), "{page}");
    drop(daemon);
}

/// What the agent printed is text: the stuck REFACTOR iteration's `<script>` is escaped.
fn agent_output_is_text(base: &str, run: &str, page: &str) {
    let sequences: Vec<u32> = page
        .split("data-iteration=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.parse().ok())
        .collect();
    assert!(sequences.len() >= 10, "{sequences:?}");
    let stuck = sequences
        .iter()
        .map(|sequence| {
            http(
                base,
                "GET",
                &format!("/runs/{run}/iterations/{sequence}"),
                &[],
            )
            .1
        })
        .find(|fragment| fragment.contains("stuck &lt;script&gt;"))
        .expect("the stuck iteration's output");
    assert!(
        stuck.contains("stuck &lt;script&gt;alert(&quot;agent&quot;)&lt;/script&gt;"),
        "{stuck}"
    );
    assert!(!stuck.contains("<script>alert"), "{stuck}");
    assert!(stuck.contains("<h3>What it changed</h3>"), "{stuck}");
}

/// No token, a wrong token, another `Host`: refused, and nothing moves.
fn refused_actions_change_nothing(repo: &Path, base: &str, token: &str, run: &str) {
    let record = repo.join(format!(".prp-session/runs/{run}/state.json"));
    let before = read(&record);
    let resume = format!("/runs/{run}/resume");
    let (code, head, body) = http_with_head(base, "POST", &resume, &[]);
    assert_eq!(code, 403, "{body}");
    assert_guarded(&head);
    assert!(body.contains("X-Prpd-Token"), "{body}");
    let wrong = "0".repeat(64);
    assert_eq!(
        http(base, "POST", &resume, &[("X-Prpd-Token", &wrong)]).0,
        403
    );
    let port = base.rsplit(':').next().expect("port").trim_end_matches('/');
    let rebound = format!("attacker.example:{port}");
    assert_eq!(
        http(
            base,
            "POST",
            &resume,
            &[("Host", &rebound), ("X-Prpd-Token", token)]
        )
        .0,
        403
    );
    assert_eq!(http(base, "GET", "/", &[("Host", &rebound)]).0, 403);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(read(&record), before, "a refused action changed the record");
    assert_eq!(state(repo), "ESCALATED");
}

/// `prpd ui` on its own, killed when dropped.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn prpd_ui_alone_shows_runs_streams_changes_and_says_that_actions_need_the_daemon() {
    let repo = crate::run::calc_repo(
        &crate::run::prp(""),
        &crate::run::prpd_toml("plain", &[("refactor", "stuck-on-return")], ""),
    );
    let stderr = crate::run::prpd_fails(&repo, &["ui", "--addr", "0.0.0.0:0"], 2);
    assert!(stderr.contains("--public"), "{stderr}");

    let (code, summary) = crate::run::run(&repo);
    assert_eq!(code, 0, "{summary:#}");
    let run = summary["run_id"].as_str().expect("run id").to_owned();
    #[expect(
        clippy::disallowed_methods,
        reason = "the test keeps `prpd ui` running while it talks to it, then kills it"
    )]
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("prpd"))
        .args(["ui", "--addr", "127.0.0.1:0", "--repo"])
        .arg(repo.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start prpd ui");
    let mut served = Served(child);
    let (base, token) = dashboard(repo.path());
    let mut first_line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(served.0.stdout.take().expect("stdout")),
        &mut first_line,
    )
    .expect("the printed URL");
    assert_eq!(first_line.trim(), format!("{base}#token={token}"));

    let (code, runs) = http(&base, "GET", "/", &[]);
    assert_eq!(code, 200);
    assert!(
        runs.contains(&format!("data-run=\"{run}\" data-state=\"shipped\"")),
        "{runs}"
    );
    let (code, body) = http(
        &base,
        "POST",
        &format!("/runs/{run}/abort"),
        &[("X-Prpd-Token", &token)],
    );
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("no daemon runs"), "{body}");
    // A run id is looked up, never joined to a path: an iteration folder outside the runs is
    // out of reach.
    let outside = repo.join(".prp-session/elsewhere/iterations/001-green-1");
    std::fs::create_dir_all(&outside).expect("a folder outside the runs");
    std::fs::write(outside.join("output.log"), "not a run's").expect("output");
    let (code, body) = http(&base, "GET", "/runs/..%2Felsewhere/iterations/1", &[]);
    assert_eq!(code, 404, "{body}");
    let (code, _) = http(&base, "GET", &format!("/runs/{run}/iterations/1"), &[]);
    assert_eq!(code, 200, "the same route answers for a run");
    let (code, body) = http(&base, "GET", "/runs/no-such-run", &[]);
    assert_eq!((code, body.contains("No run no-such-run")), (404, true));

    // The event stream names the state's version at once, and again when a record changes.
    let host = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut stream = TcpStream::connect(&host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
        .write_all(format!("GET /events HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
        .expect("send");
    let mut seen = String::new();
    let mut events = |count: usize| {
        let mut buffer = [0u8; 4096];
        while seen.matches("event: change").count() < count {
            let read = stream.read(&mut buffer).expect("an event");
            assert!(read > 0, "the stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    };
    events(1);
    let record = repo.join(&format!(".prp-session/runs/{run}/state.json"));
    let text = read(&record);
    std::fs::write(&record, format!("{text} ")).expect("touch the record");
    events(2);
    drop(served);
}
