//! SHIP when the base branch moved on the remote while a run worked in its worktree: the user
//! pushed, or another run's pull request was merged. A run's GREEN agent is held half way (the
//! feature agent's block folder) while the test moves `main` on the remote; then the run goes
//! on. A change of other files is replayed under the run's commit, QA's checklist runs again on
//! the result, and the branch ships on the remote's new tip (never on a commit the user kept
//! local); a change of the same lines stops SHIP with the files named and the run's worktree
//! kept for the human.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::python::calc_python_repo;
use crate::run::{PRP, every_phase_toml, prpd_json, read};
use crate::ship::bare_remote;
use crate::util::TestRepo;
use crate::worktrees::{FEATURE_AGENT, feature_prp, on_branch};

/// How long the test waits for the held run to reach GREEN, or to end.
const PATIENCE: Duration = Duration::from_secs(180);

/// The Python `calc` repository with the PRPs of `subtract` and `divide` committed; two
/// configurations outside it: one whose GREEN agent waits in `hold/` until released, one that
/// does not; SHIP to a local bare remote.
struct Fixture {
    repo: TestRepo,
    scratch: tempfile::TempDir,
    remote: PathBuf,
    held: PathBuf,
    free: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let (scratch, remote) = bare_remote();
        let hold_dir = scratch.path().join("hold");
        std::fs::create_dir_all(&hold_dir).expect("hold folder");
        let log = scratch.path().join("agent-calls.log");
        let config = |extra: &[&Path]| {
            let argv = [Path::new("python3"), Path::new(FEATURE_AGENT), &log]
                .iter()
                .chain(extra)
                .map(|arg| format!("{:?}", arg.display().to_string()))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{}[ship]\nremote = {:?}\n",
                every_phase_toml(&argv, "120s"),
                remote.display().to_string()
            )
        };
        let held = scratch.path().join("held.toml");
        std::fs::write(&held, config(&[&hold_dir])).expect("held config");
        let free = scratch.path().join("free.toml");
        std::fs::write(&free, config(&[])).expect("free config");
        let repo = calc_python_repo("", &config(&[]));
        repo.git(&["rm", "-q", PRP]);
        repo.file(
            "PRPs/subtract.md",
            &feature_prp("subtract", "Subtract numbers"),
        )
        .file("PRPs/divide.md", &feature_prp("divide", "Divide numbers"))
        .commit("two PRPs");
        let fixture = Fixture {
            repo,
            scratch,
            remote,
            held,
            free,
        };
        fixture.push_main();
        fixture
    }

    /// Pushes `main` to the remote, as the user (or a merged pull request) does.
    fn push_main(&self) {
        let remote = self.remote.to_str().expect("utf-8");
        self.repo.git(&["push", "-q", remote, "main"]);
    }

    /// Starts `prpd run PRPs/divide.md` with the held configuration, and waits until its GREEN
    /// agent is held.
    #[expect(
        clippy::disallowed_methods,
        reason = "the held run goes on in the background while the test moves the base"
    )]
    fn start_held_run(&self) -> Child {
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("prpd"))
            .args(["run", "PRPs/divide.md", "--json", "--config"])
            .arg(&self.held)
            .current_dir(self.repo.path())
            .env("PRPD_LOG", "warn")
            .env_remove("GITHUB_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start prpd run");
        let hold = self.scratch.path().join("hold");
        let deadline = Instant::now() + PATIENCE;
        while !std::fs::read_dir(&hold).is_ok_and(|mut entries| {
            entries.any(|entry| {
                entry.is_ok_and(|entry| entry.file_name().to_string_lossy().starts_with("blocked-"))
            })
        }) {
            assert!(
                Instant::now() < deadline,
                "the run's GREEN agent never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        child
    }

    /// Lets the held run go on and returns its exit code and summary.
    fn release(&self, child: Child) -> (i32, Value) {
        std::fs::write(self.scratch.path().join("hold/release"), "").expect("release");
        let output = child.wait_with_output().expect("the held run ends");
        let summary = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
            panic!(
                "not a JSON summary ({error}): {}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (output.status.code().unwrap_or(-1), summary)
    }
}

#[test]
fn a_run_whose_base_moved_ships_rebased_onto_it_after_qa_ran_again() {
    let fixture = Fixture::new();
    let repo = &fixture.repo;
    let held = fixture.start_held_run();
    // Meanwhile the user pushes a change of other files on main, then commits something they
    // keep to themselves.
    repo.file("docs/usage.md", "# Usage\n\nImport calc.\n")
        .commit("usage notes");
    fixture.push_main();
    let tip = repo.git(&["rev-parse", "main"]).trim().to_owned();
    repo.file("scratch.md", "not pushed\n").commit("local only");
    let (code, summary) = fixture.release(held);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);

    let branch = "prp/divide-numbers";
    assert_eq!(
        repo.git(&["rev-parse", &format!("{branch}^")]).trim(),
        tip,
        "the shipped commit sits on the remote's main as it is now"
    );
    assert_eq!(
        on_branch(repo, branch, "scratch.md"),
        None,
        "a commit the user did not push is not part of the base"
    );
    let calc = on_branch(repo, branch, "calc.py").expect("calc.py");
    assert!(calc.contains("def divide(a, b):"), "{calc}");
    assert_eq!(
        on_branch(repo, branch, "docs/usage.md").as_deref(),
        Some("# Usage\n\nImport calc.\n")
    );
    assert_eq!(
        repo.git(&["diff", "--name-only", &format!("{tip}...{branch}")])
            .lines()
            .collect::<Vec<_>>(),
        [
            "CHANGELOG.md",
            "README.md",
            "calc.py",
            "tests/test_divide.py"
        ],
        "the pull request holds the run's work only"
    );
    let run_dir = repo
        .join(".prp-session/runs")
        .join(summary["run_id"].as_str().expect("id"));
    let rejudged = std::fs::read_dir(run_dir.join("on-base/checks")).map_or(0, Iterator::count);
    assert!(
        rejudged > 0,
        "QA's checklist ran on the rebased tree: {}",
        run_dir.join("on-base").display()
    );
}

#[test]
fn a_run_whose_lines_another_run_changed_first_escalates_at_ship_naming_the_file() {
    let fixture = Fixture::new();
    let repo = &fixture.repo;
    let held = fixture.start_held_run();
    // Another run ships `subtract`, and its branch is merged into main (as a pull request
    // merged and pulled): it appended to calc.py where `divide` goes too.
    let free = fixture.free.to_str().expect("utf-8");
    let (code, other) = prpd_json(
        repo.path(),
        &["run", "PRPs/subtract.md", "--json", "--config", free],
    );
    assert_eq!(other["state"], "SHIPPED", "{other:#}");
    assert_eq!(code, 0);
    repo.git(&["merge", "-q", "--ff-only", "prp/subtract-numbers"]);
    fixture.push_main();

    let (code, summary) = fixture.release(held);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("the base branch main moved") && reason.contains("calc.py"),
        "{reason}"
    );
    let record_worktree = repo
        .path()
        .canonicalize()
        .expect("canonical")
        .join(".git/prpd/worktrees")
        .join(summary["run_id"].as_str().expect("id"));
    assert!(
        record_worktree.join("calc.py").is_file(),
        "the run's worktree is kept for the human"
    );
    assert!(read(&record_worktree.join("calc.py")).contains("def divide("));
    let report = read(Path::new(
        summary["escalation_report"].as_str().expect("a report"),
    ));
    assert!(
        report.contains(&record_worktree.display().to_string()),
        "the report says where the work is:\n{report}"
    );
}
