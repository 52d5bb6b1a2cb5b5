//! The layout of prpd's state directory `.prp-session/` inside a target repository (DESIGN §2),
//! in one place so that no module spells a state path by hand.

use std::path::{Path, PathBuf};

/// The name of prpd's state directory at the root of the target repository.
pub const SESSION_DIR: &str = ".prp-session";

/// Paths of prpd's state files for one target repository.
#[derive(Debug, Clone)]
pub struct SessionPaths {
    root: PathBuf,
}

impl SessionPaths {
    /// The state layout of the repository at `repo`.
    pub fn new(repo: &Path) -> Self {
        SessionPaths {
            root: repo.join(SESSION_DIR),
        }
    }

    /// `.prp-session/` itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every status block a standalone `prpd qa` printed, appended (a run keeps its own:
    /// [`RunPaths::phase_status_log`]).
    pub fn phase_status_log(&self) -> PathBuf {
        self.root.join("phase-status.log")
    }

    /// Held (with `flock`) by the daemon of this repository for its whole life: a second
    /// `prpd watch` is refused. Each run has its own lock besides ([`RunPaths::lock`]).
    pub fn lock(&self) -> PathBuf {
        self.root.join("prpd.lock")
    }

    /// The PRPs waiting for a run of the daemon (`prpd queue`), oldest first.
    pub fn queue(&self) -> PathBuf {
        self.root.join("queue.json")
    }

    /// The running daemon's control socket (`prpd status`, `resume`, `abort`, `queue`).
    pub fn socket(&self) -> PathBuf {
        self.root.join("prpd.sock")
    }

    /// The dashboard's token (`prpd ui`): what a browser must send, in a header, to resume or
    /// abort a run. Owner-only (mode 0600), made once and kept.
    pub fn ui_token(&self) -> PathBuf {
        self.root.join("ui.token")
    }

    /// Where a running dashboard listens (its URL without the token), while it runs.
    pub fn ui_address(&self) -> PathBuf {
        self.root.join("ui.address")
    }

    /// The daemon's log, one JSON object per line (rotated to `prpd.log.1`, `.2`, …).
    pub fn daemon_log(&self) -> PathBuf {
        self.root.join("prpd.log")
    }

    /// The output of the `[notify] command` runs.
    pub fn notify_log(&self) -> PathBuf {
        self.root.join("notify.log")
    }

    /// The reports of the QA runs the daemon starts when sources change while it is idle.
    pub fn qa_on_change(&self) -> PathBuf {
        self.root.join("qa-on-change")
    }

    /// The embedded memory store (SQLite): what earlier runs and humans taught prpd.
    pub fn memory_db(&self) -> PathBuf {
        self.root.join("memory.db")
    }

    /// The standard error of the MCP memory server, when `[memory] backend = "mcp"`.
    pub fn memory_server_log(&self) -> PathBuf {
        self.root.join("memory-server.log")
    }

    /// The directory of all runs' artifacts.
    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// The artifact directory of one run (or one standalone QA invocation).
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs().join(run_id)
    }

    /// The state files of one run.
    pub fn run(&self, run_id: &str) -> RunPaths {
        RunPaths {
            dir: self.run_dir(run_id),
        }
    }

    /// The ids of every run that has a record, oldest first (ids sort by time).
    pub fn run_ids(&self) -> std::io::Result<Vec<String>> {
        let entries = match std::fs::read_dir(self.runs()) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry?;
            if entry.path().join(RECORD_FILE).is_file()
                && let Some(id) = entry.file_name().to_str()
            {
                ids.push(id.to_owned());
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Creates `.prp-session/` and keeps it out of git through `.git/info/exclude`, so that
    /// prpd's own files never show up as changes of the target repository.
    pub fn ensure(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.root)?;
        self.exclude(&format!("/{SESSION_DIR}/"))
    }

    /// Adds `pattern` to the repository's `.git/info/exclude` unless a line already says it:
    /// files git should not see, without touching the project's `.gitignore`.
    pub fn exclude(&self, pattern: &str) -> std::io::Result<()> {
        let Some(repo) = self.root.parent() else {
            return Ok(());
        };
        let Some(git_dir) = git_dir(repo) else {
            return Ok(());
        };
        let exclude = git_dir.join("info").join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if current.lines().any(|existing| existing.trim() == pattern) {
            return Ok(());
        }
        std::fs::create_dir_all(git_dir.join("info"))?;
        let separator = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        std::fs::write(&exclude, format!("{current}{separator}{pattern}\n"))
    }
}

/// The name of a run's record in its folder.
const RECORD_FILE: &str = "state.json";

/// The state files of one run, in its folder `.prp-session/runs/<id>/`: each run has its own
/// record, breakers, lock and abort request, so several runs of one repository never share one.
#[derive(Debug, Clone)]
pub struct RunPaths {
    dir: PathBuf,
}

impl RunPaths {
    /// The run's folder: its record, reports and iterations.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run's record (`prpd-run/src/record.rs`).
    pub fn record(&self) -> PathBuf {
        self.dir.join(RECORD_FILE)
    }

    /// `{attempt, last_verdict, report_path}` as in the seed.
    pub fn qa_state(&self) -> PathBuf {
        self.dir.join("qa-state.json")
    }

    /// Breaker states and their transition history.
    pub fn circuit_breaker(&self) -> PathBuf {
        self.dir.join("circuit-breaker.json")
    }

    /// Every status block prpd printed or read in this run, appended.
    pub fn phase_status_log(&self) -> PathBuf {
        self.dir.join("phase-status.log")
    }

    /// Present while a human asked the prpd driving this run to abort it.
    pub fn abort_request(&self) -> PathBuf {
        self.dir.join("abort-requested")
    }

    /// Held (with `flock`) by the one prpd process that drives this run.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("run.lock")
    }

    /// The process group of the run's agent, recorded so that a prpd started after a kill -9
    /// can stop an agent its predecessor left running.
    pub fn agent_group(&self) -> PathBuf {
        self.dir.join("agent.pgid")
    }

    /// The run's own git index, through which its snapshots are built.
    pub fn snapshot_index(&self) -> PathBuf {
        self.dir.join("snapshot.index")
    }
}

/// The git directory of `repo`: `.git` itself, or the directory a `.git` file points to
/// (worktrees and submodules).
fn git_dir(repo: &Path) -> Option<PathBuf> {
    let dot_git = repo.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(repo.join(target))
}

/// An id that sorts by time: `<kind>-<UTC timestamp>-<pid>` (`run-…`, `qa-…`), with a counter
/// (zero-padded, so ids still sort) after the first of the process: a daemon starts several
/// runs in one second.
pub fn new_run_id(kind: &str) -> String {
    static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace([':', '-'], "");
    let pid = std::process::id();
    match MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        0 => format!("{kind}-{stamp}-{pid}"),
        made => format!("{kind}-{stamp}-{pid}-{made:04}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ensure_adds_the_exclude_line_once() {
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(repo.path().join(".git/info")).expect("mkdir");
        std::fs::write(
            repo.path().join(".git/info/exclude"),
            "# git ls-files --others",
        )
        .expect("write");
        let paths = SessionPaths::new(repo.path());
        paths.ensure().expect("first");
        paths.ensure().expect("second");
        let exclude = std::fs::read_to_string(repo.path().join(".git/info/exclude")).expect("read");
        assert_eq!(exclude, "# git ls-files --others\n/.prp-session/\n");
        paths.exclude("/.aider*").expect("aider");
        paths.exclude("/.aider*").expect("aider again");
        let exclude = std::fs::read_to_string(repo.path().join(".git/info/exclude")).expect("read");
        assert_eq!(
            exclude,
            "# git ls-files --others\n/.prp-session/\n/.aider*\n"
        );
        assert!(paths.root().is_dir());
    }
}
