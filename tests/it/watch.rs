//! `prpd watch` end to end: the real daemon on temporary repositories. A dropped PRP runs to
//! SHIPPED on its own; `prpd status`, `queue`, `resume` and `abort` reach the daemon through its
//! socket; a second daemon is refused; SIGTERM and kill -9 mid-run lose nothing; source changes
//! re-run QA only while idle and only when asked; ignored churn and the agents' own edits
//! trigger nothing; configuration changes reload (a broken file keeps the old one); an
//! escalation runs the notify command and an open breaker gets its probe after the cooldown.

use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{
    PRP, agent_calls, calc_repo, demo_repo, prp, prpd_json, prpd_toml, read, verdicts,
};
use crate::util::TestRepo;

/// How long a daemon test waits for one thing to happen before it fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(180);

/// The `[watch]` table of the tests: a short debounce keeps them quick.
pub(crate) const WATCH: &str = "[watch]\ndebounce = \"100ms\"\n";

/// A running `prpd watch` on a repository; killed when dropped.
pub(crate) struct Daemon {
    child: Child,
    repo: PathBuf,
}

impl Daemon {
    /// Starts `prpd watch` on `repo` and waits until it listens and watches.
    pub(crate) fn start(repo: &Path) -> Daemon {
        Daemon::start_with(repo, &[])
    }

    /// [`Daemon::start`] with more arguments to `prpd watch`.
    #[expect(
        clippy::disallowed_methods,
        reason = "the test signals the daemon (SIGTERM, SIGKILL), which needs the std child handle"
    )]
    pub(crate) fn start_with(repo: &Path, args: &[&str]) -> Daemon {
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("prpd"))
            .args(["watch", "--repo"])
            .arg(repo)
            .args(args)
            .env("PRPD_LOG", "prpd=info")
            .env_remove("GITHUB_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prpd watch");
        let daemon = Daemon {
            child,
            repo: repo.to_path_buf(),
        };
        daemon.wait_for("the daemon to listen", || {
            repo.join(".prp-session/prpd.sock").exists() && daemon.logged("\"watching\"")
        });
        daemon
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until `done` holds, failing the test after [`PATIENCE`] or when the daemon died.
    pub(crate) fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; .prp-session holds {:?}; the daemon's log:\n{}",
                std::fs::read_dir(self.repo.join(".prp-session"))
                    .map(|entries| entries
                        .flatten()
                        .map(|entry| entry.file_name())
                        .collect::<Vec<_>>())
                    .unwrap_or_default(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.repo.join(".prp-session/prpd.log")).unwrap_or_default()
    }

    pub(crate) fn logged(&self, needle: &str) -> bool {
        self.log().contains(needle)
    }

    /// Sends `signal` and waits for the exit; the exit code.
    pub(crate) fn stop(mut self, signal: nix::sys::signal::Signal) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, signal).expect("signal the daemon");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the daemon") {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "the daemon did not stop on {signal}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `prpd status --json` of `repo`.
pub(crate) fn status(repo: &Path) -> Value {
    let (code, status) = prpd_json(repo, &["status", "--json"]);
    assert_eq!(code, 0, "{status:#}");
    status
}

pub(crate) fn state(repo: &Path) -> String {
    status(repo)["state"].as_str().unwrap_or("").to_owned()
}

/// The directories of the QA runs the daemon started on source changes.
fn qa_runs(repo: &Path) -> usize {
    std::fs::read_dir(repo.join(".prp-session/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("qa-"))
        .count()
}

/// The `calc` fixture with its PRP not yet in the repository (the test drops it).
fn calc_without_prp(config: &str) -> (TestRepo, String) {
    let text = prp("");
    let repo = calc_repo(&text, config);
    repo.git(&["rm", "-q", PRP]);
    repo.commit("no PRP yet");
    (repo, text)
}

#[test]
fn a_dropped_prp_runs_to_shipped_and_the_cli_reaches_the_daemon() {
    let config = prpd_toml("plain", &[], &format!("{WATCH}qa_on_change = true\n"));
    let (repo, prp_text) = calc_without_prp(&config);
    let daemon = Daemon::start(repo.path());

    // The socket is the owner's only; `prpd status` asks the daemon through it.
    let mode = std::fs::metadata(repo.join(".prp-session/prpd.sock"))
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    let output = repo.prpd().arg("status").output().expect("status");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!("Daemon:       pid {}, idle", daemon.pid())),
        "{text}"
    );
    assert!(text.contains("Queue:        empty"), "{text}");

    // A second daemon on the same repository stops at once, naming the first.
    let second = repo
        .prpd()
        .args(["watch", "--repo"])
        .arg(repo.path())
        .timeout(Duration::from_secs(20))
        .output()
        .expect("second daemon");
    assert_eq!(second.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("another prpd (pid {})", daemon.pid())),
        "{stderr}"
    );

    repo.file(PRP, &prp_text);
    daemon.wait_for("the run to ship", || state(repo.path()) == "SHIPPED");
    let summary = status(repo.path());
    assert_eq!(
        verdicts(&summary),
        [(1, "APPROVE".to_owned())],
        "{summary:#}"
    );
    assert_eq!(summary["prp"], PRP);
    assert!(
        repo.git(&["branch", "--list", "prp/*"])
            .contains("prp/multiply-numbers"),
        "SHIP made the branch"
    );

    // The agents edited sources during the run, and qa_on_change is on: their edits re-run
    // nothing, and the PRP they ran from is not queued again.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(qa_runs(repo.path()), 0, "{}", daemon.log());
    let queue = prpd_json(repo.path(), &["queue", "--json"]).1;
    assert_eq!(queue["queue"], serde_json::json!([]), "{queue:#}");

    // Every line of the log file is a JSON object; the run's start is there.
    let log = daemon.log();
    for line in log.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|error| panic!("{error}: {line}"));
    }
    assert!(log.contains("PRP queued"), "{log}");
    assert!(log.contains("run started"), "{log}");

    let socket = repo.join(".prp-session/prpd.sock");
    assert_eq!(daemon.stop(nix::sys::signal::Signal::SIGTERM), Some(0));
    assert!(!socket.exists(), "the socket is removed on exit");
    let output = repo.prpd().arg("status").output().expect("status");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Daemon:       not running"), "{text}");
}

#[test]
fn sigterm_and_kill_9_mid_run_then_restart_ship_the_same_result() {
    let pause = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/agents/pause-once.mjs"
    );
    let repo = demo_repo(&format!(
        "[agents.green]\ncommand = [\"node\", \"{pause}\"]\n\n{WATCH}"
    ));
    let demo_prp = "PRPs/word-stats.md";
    let prp_text = read(&repo.join(demo_prp));
    repo.git(&["rm", "-q", demo_prp]);
    repo.commit("no PRP yet");

    let daemon = Daemon::start(repo.path());
    repo.file(demo_prp, &prp_text);
    let runs = repo.join(".prp-session/runs");
    let paused = || {
        std::fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("paused"))
            .find(|path| path.is_file() && read(path).lines().count() == 2)
    };
    daemon.wait_for("GREEN to pause", || paused().is_some());
    let pids: Vec<i32> = read(&paused().expect("marker"))
        .lines()
        .map(|line| line.trim().parse().expect("pid"))
        .collect();

    // SIGTERM: the agent's group and what escaped it are stopped; the daemon exits 0.
    assert_eq!(daemon.stop(nix::sys::signal::Signal::SIGTERM), Some(0));
    for pid in &pids {
        assert!(
            !crate::run::alive(*pid),
            "pid {pid} outlived the daemon's SIGTERM: {:?} {:?}; the daemon's log:\n{}",
            std::fs::read_to_string(format!("/proc/{pid}/stat")),
            std::fs::read_to_string(format!("/proc/{pid}/cmdline")),
            std::fs::read_to_string(repo.join(".prp-session/prpd.log")).unwrap_or_default()
        );
    }
    assert_eq!(state(repo.path()), "GREEN");

    // The next start resumes; kill -9 it once the run is past GREEN.
    let daemon = Daemon::start(repo.path());
    daemon.wait_for("the resumed run to reach REFACTOR", || {
        matches!(state(repo.path()).as_str(), "REFACTOR" | "DOCUMENT" | "QA")
    });
    assert_eq!(daemon.stop(nix::sys::signal::Signal::SIGKILL), None);

    let daemon = Daemon::start(repo.path());
    daemon.wait_for("the run to ship", || state(repo.path()) == "SHIPPED");
    let summary = status(repo.path());
    // The uninterrupted demo: one REJECT (AC-2 has no test), then APPROVE.
    assert_eq!(
        verdicts(&summary),
        [(1, "REJECT".to_owned()), (2, "APPROVE".to_owned())],
        "{summary:#}"
    );
    drop(daemon);
}

#[test]
fn source_changes_rerun_qa_only_when_asked_and_ignored_churn_triggers_nothing() {
    let config = prpd_toml("plain", &[], WATCH);
    let (repo, _) = calc_without_prp(&config);
    repo.file(".gitignore", "target/\nnode_modules/\n*.log\n");
    repo.commit("ignore build output");
    let daemon = Daemon::start(repo.path());
    let touch_source = |text: &str| {
        repo.file(
            "src/calc.js",
            &format!("/** The sum of two numbers. */\nexport function add(a, b) {{\n  return a + b; // {text}\n}}\n"),
        );
    };

    // qa_on_change is off by default: a source change runs nothing.
    touch_source("one");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(qa_runs(repo.path()), 0, "{}", daemon.log());

    // Turning it on reloads the configuration; the next change re-runs QA.
    repo.file("prpd.toml", &format!("{config}qa_on_change = true\n"));
    daemon.wait_for("the reload", || daemon.logged("configuration reloaded"));
    touch_source("two");
    daemon.wait_for("QA on change", || {
        daemon.logged("QA re-run after source changes")
    });
    assert_eq!(qa_runs(repo.path()), 1);
    let output = repo.prpd().arg("status").output().expect("status");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("Last report:  ") && text.contains("qa-report.md"),
        "{text}"
    );

    // Churn in ignored folders and files triggers nothing.
    for index in 0..500 {
        repo.file(&format!("target/debug/deps/f{index}.o"), "x");
        repo.file(
            &format!("node_modules/pkg{}/index.js", index % 20),
            &index.to_string(),
        );
    }
    repo.file("debug.log", "noise");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(qa_runs(repo.path()), 1, "{}", daemon.log());

    // A broken prpd.toml keeps the configuration the daemon has (qa_on_change stays on).
    repo.file("prpd.toml", &format!("{config}qa_on_change = maybe\n"));
    daemon.wait_for("the refused reload", || {
        daemon.logged("configuration not reloaded")
    });
    let log = daemon.log();
    assert!(
        log.contains("prpd.toml:"),
        "the error names the file and line: {log}"
    );
    touch_source("three");
    daemon.wait_for("QA on change with the old configuration", || {
        qa_runs(repo.path()) == 2
    });
    assert_eq!(daemon.stop(nix::sys::signal::Signal::SIGTERM), Some(0));
}

#[test]
fn an_escalation_tells_a_human_gets_a_probe_after_the_cooldown_and_obeys_resume_and_abort() {
    let told = tempfile::tempdir().expect("tempdir");
    let told_file = told.path().join("told.txt");
    let notify = format!(
        "[notify]\ncommand = [\"sh\", \"-c\", \"echo \\\"$1\\\" >> {}\", \"notify\"]\n",
        told_file.display()
    );
    let config = prpd_toml(
        "plain",
        &[("green", "idle")],
        &format!("[breaker]\ncooldown = \"2s\"\n\n{notify}\n{WATCH}"),
    );
    let (repo, prp_text) = calc_without_prp(&config);
    let daemon = Daemon::start(repo.path());
    repo.file(PRP, &prp_text);

    // The idle GREEN agent opens the breaker: the run escalates and the command is told the
    // report's path; after the cooldown the breaker gets one probe, which fails again.
    let lines = |path: &Path| -> Vec<String> {
        std::fs::File::open(path)
            .map(|file| BufReader::new(file).lines().map_while(Result::ok).collect())
            .unwrap_or_default()
    };
    daemon.wait_for("two escalations told", || lines(&told_file).len() >= 2);
    let told_lines = lines(&told_file);
    assert!(told_lines[0].ends_with("escalation.md"), "{told_lines:?}");
    assert!(Path::new(&told_lines[0]).is_file(), "{told_lines:?}");
    let breakers: Value = serde_json::from_str(&read(&crate::util::run_file(
        &repo.join(""),
        "circuit-breaker.json",
    )))
    .expect("breakers");
    let history = breakers["breakers"]["GREEN"]["history"].to_string();
    assert!(
        history.contains("HALF_OPEN"),
        "the cooldown gave a probe: {history}"
    );

    // `prpd abort` reaches the daemon: the run is aborted at once while it waits for a human,
    // or after its current step while a probe runs.
    let output = repo.prpd().arg("abort").output().expect("abort");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("abort") && stdout.contains(&format!("daemon pid {}", daemon.pid())),
        "{stdout}"
    );
    daemon.wait_for("the abort", || state(repo.path()) == "ABORTED");
    let output = repo.prpd().arg("resume").output().expect("resume");
    assert_eq!(output.status.code(), Some(2), "nothing to resume");
    assert!(String::from_utf8_lossy(&output.stderr).contains("there is no run to resume"));
    drop(daemon);
}

#[test]
fn an_escalated_run_resumes_on_prpd_resume_and_on_a_resume_file() {
    let config = prpd_toml(
        "plain",
        &[("green", "idle")],
        &format!("[breaker]\ncooldown = \"1h\"\n\n{WATCH}"),
    );
    let (repo, prp_text) = calc_without_prp(&config);
    let daemon = Daemon::start(repo.path());
    repo.file(PRP, &prp_text);
    daemon.wait_for("the escalation", || state(repo.path()) == "ESCALATED");
    let summary = status(repo.path());
    let green_calls = |summary: &Value| {
        agent_calls(repo.path(), summary)
            .iter()
            .filter(|call| call["phase"] == "GREEN")
            .count()
    };
    let first = green_calls(&summary);
    let output = repo.prpd().arg("status").output().expect("status");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("Cooldown:") && text.contains("Last report:"),
        "{text}"
    );

    let output = repo.prpd().arg("resume").output().expect("resume");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("resumes now"));
    daemon.wait_for("the resumed run to escalate again", || {
        let summary = status(repo.path());
        summary["state"] == "ESCALATED" && green_calls(&summary) > first
    });
    let second = green_calls(&status(repo.path()));

    let run_dir = repo
        .join(".prp-session/runs")
        .join(summary["run_id"].as_str().expect("run id"));
    std::fs::write(run_dir.join("resume"), "").expect("resume file");
    daemon.wait_for("the resume file to be taken", || {
        !run_dir.join("resume").exists()
    });
    daemon.wait_for("the run to escalate a third time", || {
        let summary = status(repo.path());
        summary["state"] == "ESCALATED" && green_calls(&summary) > second
    });
    drop(daemon);
}

#[test]
fn a_daemon_with_a_broken_configuration_does_not_start() {
    let config = format!(
        "{}[watch]\ndebounce = \"1ms\"\n",
        prpd_toml("plain", &[], "")
    );
    let (repo, _) = calc_without_prp(&config);
    let output = repo
        .prpd()
        .args(["watch", "--repo"])
        .arg(repo.path())
        .timeout(Duration::from_secs(30))
        .output()
        .expect("prpd watch");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("prpd.toml:") && stderr.contains("between 10ms and 60s"),
        "{stderr}"
    );
    assert!(!repo.join(".prp-session/prpd.sock").exists());
}

#[test]
fn a_run_record_that_cannot_be_read_blocks_that_run_only_and_says_why() {
    let (repo, prp_text) = calc_without_prp(&prpd_toml("plain", &[], WATCH));
    let broken = repo.join(".prp-session/runs/run-broken/state.json");
    std::fs::create_dir_all(broken.parent().expect("folder")).expect("run folder");
    std::fs::write(&broken, "{ not a record").expect("corrupt");
    let daemon = Daemon::start(repo.path());
    repo.file(PRP, &prp_text);
    // Runs have records of their own: a damaged one holds back nothing but its run.
    daemon.wait_for("the new run to ship", || daemon.logged("\"SHIPPED\""));
    let output = repo.prpd().arg("status").output().expect("status");
    let table = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        table.contains("run-broken  REFUSED") && table.contains("SHIPPED"),
        "{table}"
    );
    let output = repo
        .prpd()
        .args(["abort", "run-broken"])
        .output()
        .expect("abort");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("state.json"),
        "the refusal names the file: {output:?}"
    );
    drop(daemon);
}
