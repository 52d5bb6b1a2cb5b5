//! `prpd plan` signing in before it walks (`[plan.auth]` with `login_url`): against a small app
//! whose account pages need the session cookie of a successful sign-in
//! (`tests/fixtures/web/login_app.py`), the walk reaches them with the credentials set, never
//! follows "Log out", and keeps only placeholders; without the credentials it says so and the
//! account pages stay behind the login.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util::TestRepo;

const APP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/web/login_app.py"
);
const PASSWORD: &str = "open-sesame-42";

struct LoginApp {
    child: Child,
    url: String,
}

impl LoginApp {
    #[expect(
        clippy::disallowed_methods,
        reason = "the app under exploration is the test's own fixture, started outside prpd"
    )]
    fn start() -> LoginApp {
        let mut child = std::process::Command::new("python3")
            .arg(APP)
            .env("APP_USER", "tester@acme.test")
            .env("APP_PASSWORD", PASSWORD)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the login app");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its first line");
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .expect("the port")
            .to_owned();
        LoginApp {
            child,
            url: format!("http://127.0.0.1:{port}/"),
        }
    }
}

impl Drop for LoginApp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `prpd plan explore` with `[plan.auth]`, the credentials set when `signed`: the graph and the
/// transcript.
fn explore(app: &LoginApp, signed: bool) -> (Value, String, TestRepo) {
    let repo = TestRepo::new();
    repo.file(
        "prpd.toml",
        "[plan.auth]\nlogin_url = \"/login\"\nusername_var = \"APP_USER\"\npassword_var = \"APP_PASSWORD\"\n",
    )
    .commit("config");
    let mut command = repo.prpd();
    command
        .args(["plan", "explore", "-u", &app.url, "-d", "3"])
        .env_remove("APP_USER")
        .env_remove("APP_PASSWORD")
        .timeout(Duration::from_secs(120));
    if signed {
        command
            .env("APP_USER", "tester@acme.test")
            .env("APP_PASSWORD", PASSWORD);
    }
    let output = command.output().expect("run prpd plan explore");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = repo.only_run_dir();
    let graph = serde_json::from_str(&read(&run.join("plan-explore/graph.json"))).expect("graph");
    let transcript = read(&run.join("plan-explore/transcript.jsonl"));
    (graph, transcript, repo)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn titles(graph: &Value) -> Vec<String> {
    graph["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|page| page["title"].as_str().map(str::to_owned))
        .collect()
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn with_the_credentials_set_the_walk_signs_in_and_reaches_the_account_pages() {
    let app = LoginApp::start();
    let (graph, transcript, repo) = explore(&app, true);
    let titles = titles(&graph);
    assert!(titles.contains(&"Your account".to_owned()), "{titles:?}");
    assert!(titles.contains(&"Settings".to_owned()), "{titles:?}");
    let skipped = graph["skipped"].to_string();
    assert!(
        skipped.contains("/logout") && skipped.contains("excluded"),
        "{skipped}"
    );
    assert!(transcript.contains("\"action\":\"login\""), "{transcript}");
    assert!(transcript.contains("{{APP_PASSWORD}}"), "{transcript}");
    for entry in walk(&repo.path().join(".prp-session")) {
        let bytes = std::fs::read(&entry).expect("read");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(PASSWORD),
            "the password is in {}",
            entry.display()
        );
    }
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn without_the_credentials_the_account_pages_stay_behind_the_login() {
    let app = LoginApp::start();
    let (graph, transcript, _repo) = explore(&app, false);
    let titles = titles(&graph);
    assert!(!titles.contains(&"Your account".to_owned()), "{titles:?}");
    assert!(titles.contains(&"Log in".to_owned()), "{titles:?}");
    assert!(
        transcript.contains("APP_USER or APP_PASSWORD is not set"),
        "{transcript}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read dir").flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files
}
