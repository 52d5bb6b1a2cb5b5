//! `TestRepo`: a temporary git repository built file by file, and the `prpd` command pointed at it.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
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
    pub fn join(&self, relative: &str) -> PathBuf {
        self.path().join(relative)
    }

    /// The real `prpd` binary with `--repo` not yet given, run from the repository root and with
    /// a quiet log so that stderr holds only what the test looks for.
    pub fn prpd(&self) -> Command {
        let mut command = Command::cargo_bin("prpd").expect("prpd binary is built");
        command.current_dir(self.path()).env("PRPD_LOG", "warn");
        command
    }
}
