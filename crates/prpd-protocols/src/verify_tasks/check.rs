//! A task's result as one blocking check of QA's outcome (`verify:V4`), so that in the loop a
//! failed `[VERIFY]` task is a REJECT like any failed check, and GREEN's feedback carries the
//! task's output: the check's detail is the verdict and each failure with the last lines of
//! its output, the whole rendering is the check's output in the QA report. A remote CI left to
//! SHIP is a visible skip, never a pass.

use std::fmt::Write as _;
use std::path::Path;

use super::render::{TERMINAL_TAIL_LINES, render};
use super::result::{CommandOutcome, Finding, TaskResult, Verdict};
use prpd_qa::metrics::Metrics;
use prpd_qa::runner::{CheckResult, CheckStatus};

/// The category of these checks in QA's report.
const CATEGORY: &str = "[VERIFY] tasks";

/// How many lines of a failed command's output the feedback quotes.
const FEEDBACK_TAIL_LINES: usize = 15;

/// `result` as a QA check; `tasks_file` is where the task was read (the PRP).
pub fn as_check(result: &TaskResult, tasks_file: &Path) -> CheckResult {
    let verdict = result.verdict();
    let status = match verdict {
        Verdict::Pass => CheckStatus::Pass,
        Verdict::Fail => CheckStatus::Fail,
        Verdict::Deferred => CheckStatus::Skip,
    };
    let commands: Vec<&str> = match &result.finding {
        Finding::Commands(runs) => runs.iter().map(|run| run.command.as_str()).collect(),
        Finding::Acceptance { .. }
        | Finding::Pipeline(_)
        | Finding::Deferred(_)
        | Finding::NothingToRun(_) => Vec::new(),
    };
    let duration: u128 = match &result.finding {
        Finding::Commands(runs) => runs
            .iter()
            .filter(|run| run.reused_from.is_none())
            .map(|run| run.duration.as_millis())
            .sum(),
        Finding::Acceptance { .. }
        | Finding::Pipeline(_)
        | Finding::Deferred(_)
        | Finding::NothingToRun(_) => 0,
    };
    let first_failed_log = match &result.finding {
        Finding::Commands(runs) => runs
            .iter()
            .find(|run| matches!(run.outcome, CommandOutcome::Failed(_)))
            .and_then(|run| run.log.clone()),
        Finding::Acceptance { .. }
        | Finding::Pipeline(_)
        | Finding::Deferred(_)
        | Finding::NothingToRun(_) => None,
    };
    CheckResult {
        id: format!("verify:{}", result.task.id.label()),
        category: CATEGORY.to_owned(),
        criterion: result.task.heading(),
        blocking: true,
        status,
        command: (!commands.is_empty()).then(|| commands.join(" && ")),
        source: Some(format!(
            "{} line {}",
            tasks_file.display(),
            result.task.line
        )),
        exit_code: None,
        duration_ms: u64::try_from(duration).unwrap_or(u64::MAX),
        metrics: Metrics::default(),
        detail: detail(result, verdict),
        failing_tests: Vec::new(),
        output_tail: render(result, TERMINAL_TAIL_LINES),
        log: first_failed_log,
        reused_from: None,
    }
}

/// The verdict, then (on a failure) the task's output with a few lines of each failure.
fn detail(result: &TaskResult, verdict: Verdict) -> String {
    match verdict {
        Verdict::Pass => format!("{}: {}", result.task.heading(), verdict.signal()),
        Verdict::Deferred => match &result.finding {
            Finding::Deferred(why) => format!("deferred to SHIP: {why}"),
            Finding::Commands(_)
            | Finding::Acceptance { .. }
            | Finding::Pipeline(_)
            | Finding::NothingToRun(_) => "deferred to SHIP".to_owned(),
        },
        Verdict::Fail => {
            let mut text = format!(
                "{}: {} — {}",
                result.task.heading(),
                verdict.signal(),
                result.failures().join("; ")
            );
            let _ = write!(text, "\n{}", render(result, FEEDBACK_TAIL_LINES).trim_end());
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::verify_tasks::result::CommandRun;
    use crate::verify_tasks::task::parse;

    fn result(outcomes: Vec<CommandOutcome>) -> TaskResult {
        TaskResult {
            task: parse("4. V1 [VERIFY] Negative numbers: node a.mjs && node b.mjs")
                .pop()
                .expect("a task"),
            finding: Finding::Commands(
                outcomes
                    .into_iter()
                    .zip(["node a.mjs", "node b.mjs"])
                    .map(|(outcome, command)| CommandRun {
                        command: command.to_owned(),
                        outcome,
                        counts: None,
                        tail: "multiply(-2, 3) is 6, expected -6".to_owned(),
                        log: Some(format!("/logs/{command}.log").into()),
                        reused_from: None,
                        duration: Duration::from_millis(40),
                    })
                    .collect(),
            ),
        }
    }

    #[test]
    fn a_failed_task_is_a_blocking_failure_whose_detail_carries_its_output() {
        let check = as_check(
            &result(vec![
                CommandOutcome::Failed("exit 1".to_owned()),
                CommandOutcome::Skipped("node a.mjs failed first".to_owned()),
            ]),
            Path::new("PRPs/multiply.md"),
        );
        assert_eq!(check.id, "verify:V1");
        assert_eq!(check.status, CheckStatus::Fail);
        assert!(check.blocking);
        assert_eq!(check.command.as_deref(), Some("node a.mjs && node b.mjs"));
        assert_eq!(check.source.as_deref(), Some("PRPs/multiply.md line 1"));
        assert_eq!(
            check.detail,
            "V1 [VERIFY] Negative numbers: VERIFICATION_FAIL — `node a.mjs`: exit 1\n\
             Verified V1 [VERIFY] Negative numbers\n- node a.mjs: FAIL\n  exit 1\n\
             \x20 multiply(-2, 3) is 6, expected -6\n\
             - node b.mjs: SKIPPED (node a.mjs failed first)\n\nVERIFICATION_FAIL"
        );
        assert_eq!(
            check.log.as_deref(),
            Some(Path::new("/logs/node a.mjs.log"))
        );
        assert_eq!(check.duration_ms, 80);
    }

    #[test]
    fn a_passed_task_passes_and_a_deferred_one_is_skipped() {
        let passed = as_check(
            &result(vec![CommandOutcome::Passed, CommandOutcome::Passed]),
            Path::new("PRPs/multiply.md"),
        );
        assert_eq!(passed.status, CheckStatus::Pass);
        assert_eq!(
            passed.detail,
            "V1 [VERIFY] Negative numbers: VERIFICATION_PASS"
        );
        let deferred = as_check(
            &TaskResult {
                task: parse("- [ ] V5 [VERIFY] CI pipeline passes")
                    .pop()
                    .expect("a task"),
                finding: Finding::Deferred("SHIP waits".to_owned()),
            },
            Path::new("PRPs/multiply.md"),
        );
        assert_eq!(deferred.status, CheckStatus::Skip);
        assert_eq!(deferred.detail, "deferred to SHIP: SHIP waits");
        assert!(deferred.output_tail.ends_with("VERIFICATION_DEFERRED\n"));
    }
}
