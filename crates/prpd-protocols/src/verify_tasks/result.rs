//! What verifying one `[VERIFY]` task found, as plain data, and the verdict it comes to. The
//! verdict is computed here, in one place, from what prpd measured: a failed command, a failed
//! or untraced acceptance criterion, a remote CI prpd could not see or that did not pass, a task
//! with nothing to run — each fails the task. A skip never counts as a pass: a task whose every
//! command was skipped, or that ran nothing, fails.

use std::path::PathBuf;
use std::time::Duration;

use super::task::VerifyTask;
use prpd_ship::github::RemoteChecks;

/// One task and what verifying it found.
#[derive(Debug, Clone)]
pub struct TaskResult {
    pub task: VerifyTask,
    pub finding: Finding,
}

/// What prpd found, by kind of task.
#[derive(Debug, Clone)]
pub enum Finding {
    /// The commands of a commands task or a local CI, in order.
    Commands(Vec<CommandRun>),
    /// The acceptance criteria, each judged; `source` says where they were read.
    Acceptance {
        source: String,
        rows: Vec<AcceptanceRow>,
    },
    /// The remote CI of the current commit.
    Pipeline(PipelineFinding),
    /// In the loop: a remote CI is SHIP's to wait for; the text says what happens there.
    Deferred(String),
    /// The task names nothing prpd can run; the text says what to write.
    NothingToRun(String),
}

/// One command of a task.
#[derive(Debug, Clone)]
pub struct CommandRun {
    /// The command as it ran (or would have).
    pub command: String,
    pub outcome: CommandOutcome,
    /// The test figures its output reported, when it reported them.
    pub counts: Option<TestCounts>,
    /// The last lines of its output (at most 50).
    pub tail: String,
    /// Its full output.
    pub log: Option<PathBuf>,
    /// Set when it was not run again: where its result came from.
    pub reused_from: Option<String>,
    pub duration: Duration,
}

/// How one command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutcome {
    /// It exited 0 (and, as the test command, ran at least one test).
    Passed,
    /// Why it failed: `exit 1`, `command not found: eslint`, a timeout.
    Failed(String),
    /// Why it did not run: an earlier command failed, or it is a command prpd only guessed.
    Skipped(String),
}

/// Tests passed and failed, as a runner's output reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestCounts {
    pub passed: u32,
    pub failed: u32,
}

/// One acceptance criterion of an AC checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptanceRow {
    pub id: String,
    pub description: String,
    pub status: RowStatus,
    /// Why: which tests, which files, or why none.
    pub evidence: String,
}

/// An acceptance criterion's status, as the seed's table shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    Pass,
    Fail,
    /// Only for a criterion marked manual.
    Skip,
}

impl RowStatus {
    /// The word in the table.
    pub fn word(self) -> &'static str {
        match self {
            RowStatus::Pass => "PASS",
            RowStatus::Fail => "FAIL",
            RowStatus::Skip => "SKIP",
        }
    }
}

/// What the remote CI said, or why prpd could not ask.
#[derive(Debug, Clone)]
pub enum PipelineFinding {
    /// No token, no GitHub repository, no commit, or GitHub refused: what to fix.
    NotAsked(String),
    /// The checks of the commit and how the wait for them ended.
    Checked(RemoteChecks),
}

/// A task's verdict: the seed's `VERIFICATION_PASS` / `VERIFICATION_FAIL`, and, in the loop
/// only, a remote CI left to SHIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Deferred,
}

impl Verdict {
    /// The signal line that ends the task's output.
    pub fn signal(self) -> &'static str {
        match self {
            Verdict::Pass => "VERIFICATION_PASS",
            Verdict::Fail => "VERIFICATION_FAIL",
            Verdict::Deferred => "VERIFICATION_DEFERRED",
        }
    }
}

impl TaskResult {
    /// The task's verdict from what was found.
    pub fn verdict(&self) -> Verdict {
        let passed = match &self.finding {
            Finding::Commands(runs) => {
                runs.iter().any(|run| run.outcome == CommandOutcome::Passed)
                    && !runs
                        .iter()
                        .any(|run| matches!(run.outcome, CommandOutcome::Failed(_)))
            }
            Finding::Acceptance { rows, .. } => {
                !rows.is_empty() && rows.iter().all(|row| row.status != RowStatus::Fail)
            }
            Finding::Pipeline(PipelineFinding::Checked(checks)) => checks.passed(),
            Finding::Pipeline(PipelineFinding::NotAsked(_)) | Finding::NothingToRun(_) => false,
            Finding::Deferred(_) => return Verdict::Deferred,
        };
        if passed { Verdict::Pass } else { Verdict::Fail }
    }

    /// The commands that failed, with why (for a one-line summary).
    pub fn failures(&self) -> Vec<String> {
        match &self.finding {
            Finding::Commands(runs) => runs
                .iter()
                .filter_map(|run| match &run.outcome {
                    CommandOutcome::Failed(why) => Some(format!("`{}`: {why}", run.command)),
                    CommandOutcome::Passed | CommandOutcome::Skipped(_) => None,
                })
                .collect(),
            Finding::Acceptance { rows, source } if rows.is_empty() => {
                vec![format!("no acceptance criterion in {source}")]
            }
            Finding::Acceptance { rows, .. } => rows
                .iter()
                .filter(|row| row.status == RowStatus::Fail)
                .map(|row| format!("{}: {}", row.id, row.evidence))
                .collect(),
            Finding::Pipeline(PipelineFinding::NotAsked(why)) | Finding::NothingToRun(why) => {
                vec![why.clone()]
            }
            Finding::Pipeline(PipelineFinding::Checked(checks)) => {
                let mut failed: Vec<String> = checks
                    .failed()
                    .iter()
                    .map(|check| {
                        format!("remote check `{}`: {}", check.name, check.conclusion.word())
                    })
                    .collect();
                if failed.is_empty() && !checks.passed() {
                    failed.push(format!(
                        "the remote checks of {} did not all finish",
                        short_sha(&checks.sha)
                    ));
                }
                failed
            }
            Finding::Deferred(_) => Vec::new(),
        }
    }
}

/// The first 12 characters of a commit id.
pub fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify_tasks::task::parse;

    fn task() -> VerifyTask {
        parse("- [ ] V1 [VERIFY] Quality check: a && b")
            .pop()
            .expect("a task")
    }

    fn run(outcome: CommandOutcome) -> CommandRun {
        CommandRun {
            command: "a".to_owned(),
            outcome,
            counts: None,
            tail: String::new(),
            log: None,
            reused_from: None,
            duration: Duration::ZERO,
        }
    }

    fn row(status: RowStatus) -> AcceptanceRow {
        AcceptanceRow {
            id: "AC-1".to_owned(),
            description: "x".to_owned(),
            status,
            evidence: "e".to_owned(),
        }
    }

    #[test]
    fn verdicts_pass_only_on_what_ran_and_passed() {
        let pass = || run(CommandOutcome::Passed);
        let fail = || run(CommandOutcome::Failed("exit 1".to_owned()));
        let skip = || run(CommandOutcome::Skipped("a failed first".to_owned()));
        let cases = [
            (Finding::Commands(vec![pass(), pass()]), Verdict::Pass),
            (Finding::Commands(vec![pass(), skip()]), Verdict::Pass),
            (Finding::Commands(vec![fail(), skip()]), Verdict::Fail),
            (Finding::Commands(vec![skip()]), Verdict::Fail),
            (Finding::Commands(vec![]), Verdict::Fail),
            (
                Finding::Acceptance {
                    source: "PRP".to_owned(),
                    rows: vec![row(RowStatus::Pass), row(RowStatus::Skip)],
                },
                Verdict::Pass,
            ),
            (
                Finding::Acceptance {
                    source: "PRP".to_owned(),
                    rows: vec![row(RowStatus::Pass), row(RowStatus::Fail)],
                },
                Verdict::Fail,
            ),
            (
                Finding::Acceptance {
                    source: "PRP".to_owned(),
                    rows: vec![],
                },
                Verdict::Fail,
            ),
            (
                Finding::Pipeline(PipelineFinding::NotAsked("no token".to_owned())),
                Verdict::Fail,
            ),
            (Finding::NothingToRun("write one".to_owned()), Verdict::Fail),
            (
                Finding::Deferred("SHIP waits".to_owned()),
                Verdict::Deferred,
            ),
        ];
        for (finding, verdict) in cases {
            let result = TaskResult {
                task: task(),
                finding: finding.clone(),
            };
            assert_eq!(result.verdict(), verdict, "{finding:?}");
        }
    }
}
