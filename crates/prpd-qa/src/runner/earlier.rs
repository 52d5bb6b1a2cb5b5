//! Test results prpd already has for the very tree it is about to judge. In a run, RED,
//! REFACTOR and QA's checklist would otherwise run a slow suite again on a tree that was
//! measured a moment ago (a RED iteration that changed nothing, a REFACTOR with nothing to
//! refactor, a QA agent that changed nothing); the result of a command depends only on the
//! tree and the measurement environment, both fixed, so the log of the earlier run is read
//! instead and the report says where it came from. GREEN's two runs never reuse one: a flaky
//! pass is no pass.
//!
//! Only the caller knows whether the runs measured the same thing (it compares the tree, the
//! command and the measurement settings); this module only turns an earlier run back into the
//! outcome the command would have had. The log lives under `.prp-session/`, which an agent can
//! write: rewritten to say everything passed, it would pass a tree nobody ran again. So the run
//! keeps the [`log_fingerprint`] of what a reuse reads — the log and the JUnit reports kept beside
//! it — in prpd's sealed run record, and a log whose content no longer matches is not read: the
//! command runs again.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::junit;
use prpd_base::files;
use prpd_base::process::{self, Termination};

/// How many lines of an earlier log stand for the tail a fresh run would have kept.
const TAIL_LINES: usize = 40;

/// A command prpd ran on a tree, kept so the same command on the same tree is not run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlierRun {
    /// The command as it ran.
    pub command: String,
    /// Its exit code (a killed or timed-out run is never kept).
    pub exit_code: i32,
    /// Its full output.
    pub log: PathBuf,
    /// Where it ran, for the report: `GREEN iteration 2`.
    pub measured_in: String,
    /// The [`log_fingerprint`] of its log and kept reports when prpd wrote them.
    pub fingerprint: String,
}

/// The hash of what reusing the run logged to `log` reads: the log and the JUnit reports kept
/// beside it (`<log>.junit/`); `None` when the log cannot be read.
pub fn log_fingerprint(log: &Path) -> Option<String> {
    let bytes = std::fs::read(log).ok()?;
    Some(fingerprint_of(&bytes, log))
}

/// [`log_fingerprint`] with the log's content already read.
fn fingerprint_of(log_bytes: &[u8], log: &Path) -> String {
    let mut text = format!("log {}\n", files::content_hash(log_bytes));
    let mut kept: Vec<PathBuf> = std::fs::read_dir(junit::kept_folder(log))
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    kept.sort();
    for path in kept {
        let hash = std::fs::read(&path).map_or_else(
            |error| format!("unreadable ({error})"),
            |bytes| files::content_hash(&bytes),
        );
        let _ = writeln!(text, "report {} {hash}", path.display());
    }
    files::content_hash(text.as_bytes())
}

impl EarlierRun {
    /// The outcome the command had, read back from its log; `None` when the log is gone or is
    /// no longer what prpd wrote (its fingerprint differs), and the command must run again.
    pub fn outcome(&self) -> Option<process::Outcome> {
        let text = std::fs::read(&self.log).ok()?;
        if fingerprint_of(&text, &self.log) != self.fingerprint {
            tracing::warn!(
                log = %self.log.display(),
                "the log of an earlier test run (or a JUnit report kept beside it) changed since \
                 prpd wrote it, perhaps by an agent: it is not read, the tests run again"
            );
            return None;
        }
        let output_bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
        Some(process::Outcome {
            termination: Termination::Exited(self.exit_code),
            tail: files::last_lines(&String::from_utf8_lossy(&text), TAIL_LINES),
            duration: std::time::Duration::ZERO,
            output_bytes,
            log_truncated: false,
            log_path: self.log.clone(),
        })
    }

    /// The sentence a reused result carries in the report.
    pub fn note(&self) -> String {
        format!(
            "not run again: the same tree was measured in {} ({})",
            self.measured_in,
            self.log.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_run_is_read_back_from_its_log_and_a_lost_log_means_run_again() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let log = directory.path().join("tests-2.log");
        std::fs::write(&log, "building\nRan 3 tests\nOK\n").expect("test fixture");
        let earlier = EarlierRun {
            command: "make test".to_owned(),
            exit_code: 0,
            log: log.clone(),
            measured_in: "GREEN iteration 2".to_owned(),
            fingerprint: log_fingerprint(&log).expect("the log is there"),
        };
        let outcome = earlier.outcome().expect("the log is there");
        assert_eq!(outcome.exit_code(), Some(0));
        assert!(
            outcome.tail.ends_with("Ran 3 tests\nOK"),
            "{}",
            outcome.tail
        );
        assert_eq!(outcome.log_path, log);
        assert!(earlier.note().contains("GREEN iteration 2"));
        std::fs::remove_file(&log).expect("test fixture");
        assert!(earlier.outcome().is_none());
    }

    #[test]
    fn regression_a_log_or_kept_report_rewritten_after_the_run_is_not_read() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let log = directory.path().join("tests-2.log");
        std::fs::write(&log, "Ran 3 tests\nFAILED (failures=1)\n").expect("test fixture");
        let kept = junit::kept_folder(&log);
        std::fs::create_dir_all(&kept).expect("test fixture");
        std::fs::write(
            kept.join("000-junit.xml"),
            "<testsuite tests=\"3\" failures=\"1\"/>",
        )
        .expect("test fixture");
        let earlier = EarlierRun {
            command: "make test".to_owned(),
            exit_code: 1,
            log: log.clone(),
            measured_in: "REFACTOR iteration 1".to_owned(),
            fingerprint: log_fingerprint(&log).expect("the log is there"),
        };
        assert!(earlier.outcome().is_some(), "as prpd wrote it");
        std::fs::write(&log, "Ran 3 tests\nOK\n").expect("an agent rewrites the log");
        assert!(earlier.outcome().is_none(), "a rewritten log is not read");
        std::fs::write(&log, "Ran 3 tests\nFAILED (failures=1)\n").expect("put back");
        assert!(earlier.outcome().is_some());
        std::fs::write(kept.join("000-junit.xml"), "<testsuite tests=\"3\"/>")
            .expect("an agent rewrites the kept report");
        assert!(
            earlier.outcome().is_none(),
            "a rewritten report is not read"
        );
        std::fs::write(kept.join("001-extra.xml"), "<testsuite tests=\"9\"/>")
            .expect("an agent adds a report");
        assert!(earlier.outcome().is_none());
    }
}
