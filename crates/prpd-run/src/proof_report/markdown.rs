//! The proof in words: `proof.md` and the check run's text (the same Markdown; the file also
//! says where the verdict was published), the check run's title and summary, and the short
//! section the pull request's body carries. Pure functions of a [`ProofReport`], snapshot-tested.

use std::fmt::Write as _;
use std::path::Path;

use super::{FileChange, Judged, ProofReport, Publication, TestOutcomes};
use crate::machine::QaVerdict;
use prpd_qa::metrics::Outcome;
use prpd_qa::report::cell;

/// How many test names a one-line summary lists.
const NAMES_IN_A_LINE: usize = 5;

/// Which text of the proof is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// `proof.md`: the proof, and where the verdict was published.
    File,
    /// The check run's text: the proof (the check run is where it is published).
    CheckRun,
}

/// The proof as Markdown.
pub fn render(report: &ProofReport, rendering: Rendering) -> String {
    let mut out = format!("# Proof: {}\n\n", report.feature.trim());
    let verdict = report.verdict.map_or("no QA verdict", word);
    let _ = writeln!(
        out,
        "prpd run `{}` of `{}` shipped commit `{}`. Verdict: **{verdict}**.\n",
        report.run_id,
        report.prp.display(),
        report.commit
    );
    match rendering {
        Rendering::File => {
            let _ = writeln!(out, "{}\n", publication_line(&report.published));
        }
        Rendering::CheckRun => {}
    }
    write_fail_to_pass(&mut out, report);
    write_held_out(&mut out, report);
    write_harness(&mut out, report);
    write_test_audit(&mut out, report);
    write_checks(&mut out, report);
    write_attempts(&mut out, report);
    out
}

/// The check run's title (and a commit status's description): the verdict and the proof in a
/// few words.
pub fn verdict_title(report: &ProofReport) -> String {
    let verdict = report.verdict.map_or("no QA verdict", word);
    let proof = if report.fail_to_pass.holds {
        format!(
            "{} test(s) fail without the feature and pass with it",
            report.fail_to_pass.tests.len()
        )
    } else {
        "the fail-to-pass proof does not hold".to_owned()
    };
    let mut title = format!("{verdict}: {proof}");
    if !report.held_out.is_empty() {
        let _ = write!(
            title,
            "; {} of {} hold-out test(s) hold",
            report.held_out.iter().filter(|test| test.holds()).count(),
            report.held_out.len()
        );
    }
    title
}

/// The check run's summary: the proof's main lines, one each.
pub fn summary(report: &ProofReport) -> String {
    let fail_to_pass = &report.fail_to_pass;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "- Fail-to-pass: {}{}",
        if fail_to_pass.holds {
            "holds"
        } else {
            "DOES NOT HOLD"
        },
        names(&fail_to_pass.tests)
    );
    let held_out = &report.held_out;
    if held_out.is_empty() {
        let _ = writeln!(out, "- Hold-out tests: none in this run");
    } else {
        let _ = writeln!(
            out,
            "- Hold-out tests: {} of {} fail without the feature and pass with it",
            held_out.iter().filter(|test| test.holds()).count(),
            held_out.len()
        );
    }
    let audit = &report.test_audit;
    let _ = writeln!(
        out,
        "- Tests since the base: {} test file(s) added, {} deleted, {} renamed; assertions {} → {}",
        audit.count(FileChange::Added),
        audit.count(FileChange::Deleted),
        audit.count(FileChange::Renamed),
        audit.assertions.before,
        audit.assertions.after
    );
    let rejects = report
        .attempts
        .iter()
        .filter(|attempt| attempt.verdict == QaVerdict::Reject)
        .count();
    let _ = writeln!(
        out,
        "- QA: {} verdict(s), {rejects} REJECT(s); {} check(s) on the last",
        report.attempts.len(),
        report.checks.len()
    );
    out
}

/// The pull request's section: where the verdict is, the summary, and where the whole proof is.
pub fn pull_request_section(report: &ProofReport, proof_file: &Path) -> String {
    let mut out = String::from("## Proof\n\n");
    let _ = writeln!(out, "{}\n", publication_line(&report.published));
    out.push_str(&summary(report));
    let _ = writeln!(
        out,
        "\nThe whole proof (fail-to-pass table, hold-out results, test audit, checks, attempts): `{}` and `proof.json` beside it.\n",
        proof_file.display()
    );
    out
}

fn publication_line(published: &Publication) -> String {
    match published {
        Publication::CheckRun { html_url } => {
            format!("**`prpd / verdict`:** published as a check run on the commit: {html_url}")
        }
        Publication::CommitStatus { why } => format!(
            "**`prpd / verdict`:** published as a commit status on the commit, not as a check run: {why}"
        ),
        Publication::NotPublished { why } => {
            format!("**`prpd / verdict`:** not published: {why}")
        }
    }
}

fn word(verdict: QaVerdict) -> &'static str {
    match verdict {
        QaVerdict::Approve => "APPROVE",
        QaVerdict::Reject => "REJECT",
    }
}

fn outcome(outcome: Option<Outcome>) -> &'static str {
    outcome.map_or("not named", Outcome::as_str)
}

/// ` (`a`, `b`, …)`, or nothing for no test.
fn names(tests: &[TestOutcomes]) -> String {
    if tests.is_empty() {
        return String::new();
    }
    let mut shown: Vec<String> = tests
        .iter()
        .take(NAMES_IN_A_LINE)
        .map(|test| format!("`{}`", test.name))
        .collect();
    if tests.len() > NAMES_IN_A_LINE {
        shown.push(format!("and {} more", tests.len() - NAMES_IN_A_LINE));
    }
    format!(" ({})", shown.join(", "))
}

fn write_fail_to_pass(out: &mut String, report: &ProofReport) {
    let fail_to_pass = &report.fail_to_pass;
    let _ = writeln!(out, "## Fail-to-pass\n");
    let how = match fail_to_pass.judged {
        Judged::ByName => "by test name, RED's tests told apart by their files",
        Judged::EveryTest => {
            "by test name, every test held to the rule (the names do not say their files)"
        }
        Judged::ByCounts => "by counts (the test output does not name its tests)",
        Judged::DidNotBuild => {
            "without the feature the tests did not build, so every test had to pass with it"
        }
        Judged::NotJudged => "not judged",
    };
    let _ = writeln!(
        out,
        "The tests were run on the run's base with the frozen tests (without the feature) and on the approved tree (with it), and compared {how}.\n"
    );
    if fail_to_pass.holds {
        let _ = writeln!(
            out,
            "The proof holds: each test below fails without the feature and passes with it, and no test that passed without it fails, is skipped or is gone with it.\n"
        );
    } else {
        let _ = writeln!(out, "**The proof does not hold.**\n");
        for problem in &fail_to_pass.problems {
            let _ = writeln!(out, "- {problem}");
        }
        out.push('\n');
    }
    if !fail_to_pass.tests.is_empty() {
        let _ = writeln!(out, "| Test | Without the feature | With the feature |");
        let _ = writeln!(out, "| --- | --- | --- |");
        for test in &fail_to_pass.tests {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                cell(&test.name),
                outcome(test.without_feature),
                outcome(test.with_feature)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} test(s) that passed without the feature still pass.\n",
        fail_to_pass.pass_to_pass
    );
}

fn write_held_out(out: &mut String, report: &ProofReport) {
    let _ = writeln!(out, "## Hold-out tests\n");
    if report.held_out.is_empty() {
        let _ = writeln!(out, "No test was held out of GREEN's sight in this run.\n");
        return;
    }
    let _ = writeln!(
        out,
        "Tests kept from GREEN, REFACTOR and DOCUMENT and put back at QA. Each must fail without the feature and pass with it.\n"
    );
    let _ = writeln!(
        out,
        "| Test | Requirement | Without the feature | With the feature | Holds |"
    );
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for test in &report.held_out {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&test.name),
            test.requirement.as_deref().map_or("—".to_owned(), cell),
            outcome(test.without_feature),
            outcome(test.with_feature),
            if test.holds() { "yes" } else { "**no**" }
        );
    }
    out.push('\n');
}

fn write_harness(out: &mut String, report: &ProofReport) {
    let _ = writeln!(out, "## Frozen test harness\n");
    match &report.harness {
        Some(harness) => {
            let _ = writeln!(
                out,
                "The harness ({} file(s)) froze at the end of RED in snapshot `{}`, tree `{}`; no agent could change it after.",
                harness.files, harness.frozen_in_commit, harness.frozen_in_tree
            );
            if let Some(tree) = &harness.without_feature_tree {
                let _ = writeln!(
                    out,
                    "The tree without the feature (the run's base with the harness laid over it) is `{tree}`."
                );
            }
            out.push('\n');
        }
        None => {
            let _ = writeln!(out, "The test harness never froze in this run.\n");
        }
    }
}

fn write_test_audit(out: &mut String, report: &ProofReport) {
    let audit = &report.test_audit;
    let _ = writeln!(out, "## Tests since the base\n");
    let _ = writeln!(out, "| | At the base | Shipped |");
    let _ = writeln!(out, "| --- | --- | --- |");
    for (what, figure) in [
        ("Assertions in the test files", audit.assertions),
        ("Skip markers in the test files", audit.skip_markers),
        ("Expected-failure (xfail) markers", audit.xfail_markers),
    ] {
        let _ = writeln!(out, "| {what} | {} | {} |", figure.before, figure.after);
    }
    if let Some(skipped) = audit.skipped {
        let _ = writeln!(
            out,
            "| Tests skipped or expected to fail (measured: without / with the feature) | {} | {} |",
            skipped.before, skipped.after
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "Test files: {} added, {} deleted, {} renamed, {} modified.",
        audit.count(FileChange::Added),
        audit.count(FileChange::Deleted),
        audit.count(FileChange::Renamed),
        audit.count(FileChange::Modified)
    );
    for file in &audit.files {
        match &file.from {
            Some(from) => {
                let _ = writeln!(
                    out,
                    "- {} `{}` → `{}`",
                    file.change.as_str(),
                    from.display(),
                    file.path.display()
                );
            }
            None => {
                let _ = writeln!(out, "- {} `{}`", file.change.as_str(), file.path.display());
            }
        }
    }
    out.push('\n');
    for (what, tests) in [
        ("Tests named only with the feature", &audit.tests_added),
        ("Tests named only without the feature", &audit.tests_gone),
    ] {
        if tests.is_empty() {
            let _ = writeln!(out, "{what}: none.");
        } else {
            let listed: Vec<String> = tests.iter().map(|name| format!("`{name}`")).collect();
            let _ = writeln!(out, "{what}: {}.", listed.join(", "));
        }
    }
    out.push('\n');
}

fn write_checks(out: &mut String, report: &ProofReport) {
    let _ = writeln!(out, "## Checks\n");
    if report.checks.is_empty() {
        let _ = writeln!(out, "prpd has no QA checklist for this run.\n");
        return;
    }
    let _ = writeln!(out, "| ID | Check | Result | Details |");
    let _ = writeln!(out, "| --- | --- | --- | --- |");
    for check in &report.checks {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&check.id),
            cell(&check.criterion),
            check.outcome.as_str(),
            cell(&check.detail)
        );
    }
    out.push('\n');
}

fn write_attempts(out: &mut String, report: &ProofReport) {
    let _ = writeln!(out, "## Attempts\n");
    if report.attempts.is_empty() {
        let _ = writeln!(out, "No QA verdict was recorded.");
        return;
    }
    let _ = writeln!(out, "| Attempt | Verdict | REJECT reasons |");
    let _ = writeln!(out, "| --- | --- | --- |");
    for attempt in &report.attempts {
        let reasons = if attempt.reasons.is_empty() {
            "—".to_owned()
        } else {
            cell(&attempt.reasons.join("; "))
        };
        let _ = writeln!(
            out,
            "| {} | {} | {reasons} |",
            attempt.attempt,
            word(attempt.verdict)
        );
    }
}
