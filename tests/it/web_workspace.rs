//! `Workspace`: where one `prpd plan` of a test runs — a git repository, and a scratch folder
//! that is prpd's `TMPDIR` and `HOME` — and how the test finds what that run left behind: the
//! browser's processes (their command lines name the scratch folder: the profile lives in it,
//! and Chromium's crash handler names the home), its profile and Chromium's own temporary
//! files. Also the example app the tests explore, and the small readers of prpd's output.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::util::TestRepo;
use crate::web_site::{Site, example_app};

/// How long one `prpd plan` may take before the test fails (a busy CI machine is slow).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a process may take to disappear once it should.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// Where one `prpd plan` runs: a git repository, and a folder that is prpd's `TMPDIR` and
/// `HOME`, so the browser's profile (and anything Chromium starts with its `HOME` on its
/// command line) names it: the processes of this test are told from any other's by it.
pub(crate) struct Workspace {
    pub(crate) repo: TestRepo,
    pub(crate) scratch: TempDir,
}

impl Workspace {
    pub(crate) fn new() -> Workspace {
        let scratch = tempfile::Builder::new()
            .prefix("prpd-it-plan-")
            .tempdir()
            .expect("scratch dir");
        std::fs::create_dir_all(scratch.path().join("home")).expect("home");
        Workspace {
            repo: TestRepo::new(),
            scratch,
        }
    }

    pub(crate) fn with_config(text: &str) -> Workspace {
        let workspace = Workspace::new();
        workspace.repo.file("prpd.toml", text);
        workspace
    }

    /// `prpd` with `args`, from the repository, its temporary files and home in the scratch
    /// folder.
    pub(crate) fn command(&self, args: &[&str]) -> assert_cmd::Command {
        let mut command = self.repo.prpd();
        command
            .args(args)
            .env("TMPDIR", self.scratch.path())
            .env("HOME", self.scratch.path().join("home"))
            .timeout(COMMAND_TIMEOUT);
        command
    }

    pub(crate) fn plan(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run prpd plan")
    }

    /// The one run directory `prpd plan` made.
    pub(crate) fn run_dir(&self) -> PathBuf {
        let runs = self.repo.join(".prp-session/runs");
        let dirs: Vec<PathBuf> = std::fs::read_dir(&runs)
            .unwrap_or_else(|error| panic!("{}: {error}", runs.display()))
            .map(|entry| entry.expect("entry").path())
            .collect();
        assert_eq!(dirs.len(), 1, "one run directory: {dirs:?}");
        let name = dirs[0].file_name().expect("name").to_string_lossy();
        assert!(name.starts_with("plan-"), "{name}");
        dirs[0].clone()
    }

    pub(crate) fn json(&self, relative: &str) -> Value {
        let path = self.run_dir().join(relative);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    pub(crate) fn graph(&self) -> Value {
        self.json("plan-explore/graph.json")
    }

    /// Every live process whose command line names the scratch folder, but `except`.
    pub(crate) fn browser_processes(&self, except: Option<u32>) -> Vec<String> {
        let needle = self.scratch.path().to_string_lossy().into_owned();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(pid) = name.parse::<u32>() else {
                continue;
            };
            if Some(pid) == except || pid == std::process::id() {
                continue;
            }
            let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let command_line = String::from_utf8_lossy(&bytes).replace('\0', " ");
            if command_line.contains(&needle) {
                found.push(format!("{pid}: {command_line}"));
            }
        }
        found
    }

    /// Waits (bounded) until no process of this workspace is left, and says which are.
    pub(crate) fn assert_browser_gone(&self, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = self.browser_processes(None);
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: browser processes outlived prpd:\n{}",
                left.join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profiles: Vec<String> = self
            .temporary_files()
            .into_iter()
            .filter(|name| name.starts_with("prpd-chromium-"))
            .collect();
        assert!(profiles.is_empty(), "{what}: profiles left: {profiles:?}");
    }

    /// What is left in prpd's `TMPDIR` (its `HOME` aside).
    fn temporary_files(&self) -> Vec<String> {
        std::fs::read_dir(self.scratch.path())
            .expect("scratch")
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name != "home")
            .collect()
    }

    /// After a run that closed its browser: processes, profile and Chromium's own temporary
    /// files are all gone.
    pub(crate) fn assert_closed_cleanly(&self, what: &str) {
        self.assert_browser_gone(what);
        let left = self.temporary_files();
        assert!(left.is_empty(), "{what}: left in TMPDIR: {left:?}");
    }
}

/// The example app and the external site it links to.
pub(crate) fn example() -> (Site, Site) {
    let external = Site::serve(HashMap::new());
    let site = Site::serve(example_app(&external));
    (site, external)
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(crate) fn assert_exit(output: &Output, code: i32, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    assert!(
        !text(&output.stderr).contains("panicked"),
        "{what}: {}",
        text(&output.stderr)
    );
}

/// Every file under `dir`, recursively.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}
