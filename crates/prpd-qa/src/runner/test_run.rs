//! How a check that runs the test command is judged once the command ended: it must have run
//! at least one test, its figures must hold the check's validation, and a failure names the
//! failing tests. With `[qa] junit` the figures and names come from the JUnit report the run
//! wrote (`junit.rs`); a report that was not written, or cannot be read, fails the check and
//! says so, whatever the console printed.

use crate::checklist::CheckSpec;
use crate::failures::FailingTests;
use crate::junit::{ReportProblem, Reports};

use super::{CheckResult, Finding, Resolved, evaluation_finding, one_line_tail};

/// The finding of a command check that exited with `exit_code`; `report` is what the run's
/// JUnit report gave, when `[qa] junit` is set and the command runs the tests.
pub(super) fn judge(
    spec: &CheckSpec,
    resolved: &Resolved,
    exit_code: i32,
    report: Option<Result<Reports, ReportProblem>>,
    result: &mut CheckResult,
) -> Finding {
    let note = match report {
        Some(Ok(report)) => {
            result.metrics.replace_tests(report.metrics);
            Some(report.note)
        }
        Some(Err(problem)) => {
            result.metrics.drop_tests();
            return Finding::Fail(format!(
                "{problem}; `{}` exited {exit_code}; last output: {}",
                resolved.command,
                one_line_tail(&result.output_tail, 3)
            ));
        }
        None => None,
    };
    if !resolved.runs_tests {
        return evaluation_finding(spec, &result.metrics);
    }
    let failing = FailingTests::named(result.metrics.test_cases());
    let finding = tests_finding(spec, &resolved.command, exit_code, &failing, result);
    match (note, finding) {
        (Some(note), Finding::Pass(detail)) => Finding::Pass(format!("{detail}; {note}")),
        (Some(note), Finding::Fail(detail)) => Finding::Fail(format!("{detail}; {note}")),
        (_, finding) => finding,
    }
}

/// A test check's finding: the run must have run tests, and its figures hold the validation;
/// a failure names the failing tests.
fn tests_finding(
    spec: &CheckSpec,
    command: &str,
    exit_code: i32,
    failing: &FailingTests,
    result: &mut CheckResult,
) -> Finding {
    match result.metrics.tests_ran() {
        None if exit_code != 0 => {
            return Finding::Fail(format!(
                "`{command}` failed (exit {exit_code}) before reporting any test result; last output: {}",
                one_line_tail(&result.output_tail, 3)
            ));
        }
        None => {
            return Finding::Fail(format!(
                "`{command}` printed no test count prpd recognises, so it cannot tell that any test ran; make the runner print a summary such as `3 passed, 0 failed`, or name the JUnit report it writes in prpd.toml `[qa] junit`"
            ));
        }
        Some(0) => {
            return Finding::Fail(format!(
                "`{command}` ran no test (exit {exit_code}); a test run that executes nothing proves nothing"
            ));
        }
        Some(_) => {}
    }
    result.failing_tests.clone_from(&failing.names);
    match evaluation_finding(spec, &result.metrics) {
        Finding::Fail(reason) if !failing.names.is_empty() => {
            Finding::Fail(format!("{reason}; failing: {}", failing.summary()))
        }
        finding => finding,
    }
}
