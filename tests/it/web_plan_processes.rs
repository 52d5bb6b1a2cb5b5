//! `prpd plan` as a process: mistakes exit 2 with a message before anything is explored; a start
//! page nobody serves, or one that answers 404, exits 2 naming it; SIGTERM mid-exploration
//! stops prpd at once; `[plan] serve` starts the app, waits for its port and stops it. After
//! each, no process of the browser is left (`Workspace::assert_browser_gone`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::web_plan::{page, page_ids};
use crate::web_site::{Page, Site};
use crate::web_workspace::{PATIENCE, Workspace, assert_exit, example, files_under, text};

/// A port on 127.0.0.1 nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn mistakes_exit_2_with_a_message_before_anything_is_explored() {
    let workspace = Workspace::new();
    for (args, config, words) in [
        (vec!["plan"], None, vec!["-u URL", "base_url"]),
        (
            vec!["plan", "explore", "-u", "not-a-url"],
            None,
            vec!["not-a-url"],
        ),
        (
            vec!["plan", "-u", "ftp://127.0.0.1/"],
            None,
            vec!["only http and https"],
        ),
        (
            vec!["plan", "--test-types", "smoke", "-u", "http://127.0.0.1:9/"],
            None,
            vec!["\"smoke\""],
        ),
        (
            vec!["plan"],
            Some("[plan]\nmax_depth = 2\nmax_page = 3\n"),
            vec!["prpd.toml:3", "max_page"],
        ),
        (
            vec!["plan"],
            Some("[plan]\nbase_url = \"http://127.0.0.1:9/\"\nmax_depth = \"deep\"\n"),
            vec!["prpd.toml:3", "expected u32"],
        ),
        (
            vec!["plan"],
            Some("[plan]\nbase_url = \"localhost:3000\"\n"),
            vec!["prpd.toml:2", "http(s)"],
        ),
    ] {
        match config {
            Some(text) => workspace.repo.file("prpd.toml", text),
            None => workspace.repo.file("prpd.toml", ""),
        };
        let output = workspace.plan(&args);
        assert_exit(&output, 2, &format!("{args:?} with {config:?}"));
        let stderr = text(&output.stderr);
        for word in words {
            assert!(
                stderr.contains(word),
                "{args:?} {config:?}: {word} in\n{stderr}"
            );
        }
        assert!(
            output.stdout.is_empty(),
            "{args:?}: {}",
            text(&output.stdout)
        );
    }
    assert!(
        !workspace.repo.join(".prp-session/runs").exists()
            || files_under(&workspace.repo.join(".prp-session/runs")).is_empty(),
        "nothing explored"
    );

    workspace.repo.file("prpd.toml", "");
    let output = workspace
        .command(&["plan", "-u", "http://127.0.0.1:9/"])
        .env("PRPD_CHROMIUM", "/nonexistent/chromium")
        .output()
        .expect("run prpd plan");
    assert_exit(&output, 2, "PRPD_CHROMIUM=/nonexistent");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("PRPD_CHROMIUM") && stderr.contains("/nonexistent/chromium"),
        "{stderr}"
    );
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn a_start_page_that_cannot_be_opened_exits_2_and_the_browser_is_gone() {
    let port = free_port();
    let nobody = Workspace::new();
    let output = nobody.plan(&[
        "plan",
        "explore",
        "-u",
        &format!("http://127.0.0.1:{port}/"),
    ]);
    assert_exit(&output, 2, "nobody listens");
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    nobody.assert_closed_cleanly("after an unreachable start page");

    let (site, _external) = example();
    let missing = Workspace::new();
    let output = missing.plan(&["plan", "-u", &site.url("/missing")]);
    assert_exit(&output, 2, "a start page that answers 404");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&site.url("/missing")) && stderr.contains("404"),
        "{stderr}"
    );
    assert!(!missing.run_dir().join("plan/test-plan.json").exists());
    missing.assert_closed_cleanly("after a start page that answers 404");
}

/// `prpd` started as a child this test can signal.
#[expect(
    clippy::disallowed_methods,
    reason = "the test sends SIGTERM to prpd, which needs the std child handle"
)]
fn spawn_prpd(workspace: &Workspace, args: &[&str]) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("prpd"))
        .args(args)
        .current_dir(workspace.repo.path())
        .env("PRPD_LOG", "warn")
        .env("TMPDIR", workspace.scratch.path())
        .env("HOME", workspace.scratch.path().join("home"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start prpd plan")
}

/// Polls `condition` every 20 ms until it holds or `PATIENCE` ends.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn sigterm_mid_exploration_stops_prpd_and_its_browser_at_once() {
    let site = Site::serve(HashMap::from([
        (
            "/".to_owned(),
            Page::new("Home", "<h1>Home</h1><a href=\"/slow\">Slow</a>"),
        ),
        (
            "/slow".to_owned(),
            Page::new("Slow", "<h1>Slow</h1>").slow(Duration::from_secs(30)),
        ),
    ]));
    let workspace = Workspace::new();
    let mut prpd = spawn_prpd(&workspace, &["plan", "explore", "-u", &site.url("/")]);
    let pid = prpd.id();
    eventually("the browser asking for /slow", || {
        site.requests("/slow") > 0
    });
    assert!(
        !workspace.browser_processes(Some(pid)).is_empty(),
        "the browser runs while the page loads"
    );
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let mut status = None;
    eventually("prpd exiting after SIGTERM", || {
        status = prpd.try_wait().expect("wait");
        status.is_some()
    });
    let took = signalled.elapsed();
    assert!(took < Duration::from_secs(5), "prpd took {took:?} to stop");
    let output = prpd.wait_with_output().expect("output");
    assert_ne!(
        status.and_then(|status| status.code()),
        Some(0),
        "a stopped run is no success"
    );
    assert!(
        text(&output.stderr).contains("stopped"),
        "{}",
        text(&output.stderr)
    );
    // Killed at once, Chromium cannot remove its own `org.chromium.Chromium.*` folder from
    // TMPDIR: only the processes and the profile are checked here.
    workspace.assert_browser_gone("after SIGTERM");
    let graph = workspace.graph();
    assert_eq!(
        page_ids(&graph),
        ["home".to_owned()].into(),
        "what was explored is kept"
    );
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn serve_starts_the_app_waits_for_its_port_and_stops_it() {
    let port = free_port();
    let workspace = Workspace::with_config(&format!(
        "[plan]\nbase_url = \"http://127.0.0.1:{port}/\"\n\
         serve = \"sleep 1; python3 -m http.server {port} --bind 127.0.0.1 --directory site\"\n\
         serve_timeout = \"30s\"\n"
    ));
    workspace
        .repo
        .file(
            "site/index.html",
            "<html><head><title>Served</title></head><body><h1>Served home</h1>\
             <a href=\"about.html\">About</a></body></html>",
        )
        .file(
            "site/about.html",
            "<html><head><title>Served about</title></head><body><h1>About</h1></body></html>",
        );
    let output = workspace.plan(&["plan", "explore"]);
    assert_exit(&output, 0, "[plan] serve");
    let graph = workspace.graph();
    assert_eq!(
        page_ids(&graph),
        ["about".to_owned(), "home".to_owned()].into()
    );
    assert_eq!(page(&graph, "home")["title"], "Served");
    assert!(
        std::fs::read_to_string(workspace.run_dir().join("serve.log"))
            .expect("the app's log")
            .contains("GET /about.html"),
        "the app's own log shows the visit"
    );
    eventually("the app's port closing", || {
        std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            Duration::from_millis(200),
        )
        .is_err()
    });
    workspace.assert_closed_cleanly("after [plan] serve");
}
