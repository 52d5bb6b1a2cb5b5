//! Test results prpd already has for the very tree it is about to judge. In a run, RED,
//! REFACTOR and QA's checklist would otherwise run a slow suite again on a tree that was
//! measured a moment ago (a RED iteration that changed nothing, a REFACTOR with nothing to
//! refactor, a QA agent that changed nothing); the result of a command depends only on the
//! tree and the measurement environment, both fixed, so the log of the earlier run is read
//! instead and the report says where it came from. GREEN's two runs never reuse one: a flaky
//! pass is no pass.
//!
//! Only the caller knows whether the trees are the same (it compares snapshot tree ids); this
//! module only turns an earlier run back into the outcome the command would have had.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::files;
use crate::base::process::{self, Termination};

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
}

impl EarlierRun {
    /// The outcome the command had, read back from its log; `None` when the log is gone, and
    /// the command must run again.
    pub fn outcome(&self) -> Option<process::Outcome> {
        let text = std::fs::read(&self.log).ok()?;
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
}
