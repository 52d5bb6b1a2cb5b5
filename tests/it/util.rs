//! `TestRepo`: a temporary git repository built file by file, and the `prpd` command pointed at it;
//! the `prpd detect --json` and `prpd qa --json` runs every test file reads, and the values they
//! are compared with.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A temporary git repository with an initial commit made on demand.
pub struct TestRepo {
    dir: TempDir,
}

impl TestRepo {
    /// An empty git repository on branch `main` with a committer identity set.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("prpd-it-")
            .tempdir()
            .expect("create temp dir");
        let repo = TestRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "user.name", "prpd test"]);
        repo
    }

    /// Writes `contents` to `relative`, creating parent directories.
    pub fn file(&self, relative: &str, contents: &str) -> &Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("file has a parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write fixture file");
        self
    }

    /// Stages everything and commits it.
    pub fn commit(&self, message: &str) -> &Self {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self
    }

    /// Runs git in the repository and panics with its output when it fails.
    #[expect(
        clippy::disallowed_methods,
        reason = "tests build fixture repositories with git directly, outside prpd"
    )]
    pub fn git(&self, args: &[&str]) -> String {
        let output = StdCommand::new("git")
            .args(args)
            .current_dir(self.path())
            .output()
            .expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The repository's root directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the repository.
    /// The one run directory under `.prp-session/runs/` (a `prpd plan` or a `prpd run`).
    pub fn only_run_dir(&self) -> PathBuf {
        let runs: Vec<PathBuf> = std::fs::read_dir(self.path().join(".prp-session/runs"))
            .expect("the runs folder")
            .flatten()
            .map(|entry| entry.path())
            .collect();
        let [run] = runs.as_slice() else {
            panic!("one run directory: {runs:?}");
        };
        run.clone()
    }

    pub fn join(&self, relative: &str) -> PathBuf {
        self.path().join(relative)
    }

    /// `prpd detect --json --repo <this repository>`, not yet run.
    pub fn detect_json_command(&self) -> Command {
        let mut command = self.prpd();
        command
            .args(["detect", "--json", "--repo"])
            .arg(self.path());
        command
    }

    /// The real `prpd` binary with `--repo` not yet given, run from the repository root, with
    /// a quiet log so that stderr holds only what the test looks for, and without a token.
    pub fn prpd(&self) -> Command {
        let mut command = Command::cargo_bin("prpd").expect("prpd binary is built");
        // SHIP reads a token from GITHUB_TOKEN: the developer's own never takes part in a test.
        command
            .current_dir(self.path())
            .env("PRPD_LOG", "warn")
            .env_remove("GITHUB_TOKEN");
        command
    }
}

/// `prpd detect --json` on `repo`, which must succeed.
pub fn detect_json(repo: &TestRepo) -> Value {
    let output = repo
        .detect_json_command()
        .output()
        .expect("run prpd detect");
    assert!(
        output.status.success(),
        "prpd detect failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("prpd detect --json prints one JSON object")
}

/// A command `prpd detect --json` reports as the project's own, found at `source`.
pub fn declared(command: &str, source: &str) -> Value {
    json!({"command": command, "source": source, "fallback": false})
}

/// The command `prpd detect --json` reports as the tools mapping's default for `stack`.
pub fn fallback(stack: &str, command: &str) -> Value {
    json!({
        "command": command,
        "source": format!("qa-tools-mapping.yml default ({stack})"),
        "fallback": true,
    })
}

/// `prpd qa --json` on `repo` with `extra` arguments: the exit code and the report.
pub fn qa_json(repo: &TestRepo, extra: &[&str]) -> (i32, Value) {
    crate::run::prpd_json(repo.path(), &[&["qa", "--json"], extra].concat())
}

/// The check `id` of a `prpd qa --json` report.
pub fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .expect("checks array")
        .iter()
        .find(|check| check["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report:#}"))
}

/// The record of the latest run of the repository at `root` (`.prp-session/runs/<id>/state.json`,
/// ids sort by time), if any run has one.
pub fn run_record(root: &Path) -> Option<PathBuf> {
    let mut records: Vec<PathBuf> = std::fs::read_dir(root.join(".prp-session/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("state.json"))
        .filter(|path| path.is_file())
        .collect();
    records.sort();
    records.pop()
}

/// File `name` in the folder of the latest run of the repository at `root`.
pub fn run_file(root: &Path, name: &str) -> PathBuf {
    let record = run_record(root).expect("a run record");
    record.with_file_name(name)
}
