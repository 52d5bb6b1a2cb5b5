//! QA reports: the Markdown report a person reads (seed 004, Appendix A), the JSON report a
//! program reads, and the QA `PRP_PHASE_STATUS` block.
//!
//! Everything here is a pure function of a [`QaOutcome`], so the report can be snapshot-tested
//! and rendered again from persisted outcomes.

use std::fmt::Write as _;

use serde::Serialize;

use crate::memory_context::MemorySection;
use crate::runner::MAX_QA_ATTEMPTS;
use crate::runner::{CheckResult, CheckStatus, QaOutcome};
use prpd_base::status_block::{StatusBlock, Value, Verdict};

mod memory;

/// How many output lines of a failed check the Markdown report quotes.
const QUOTED_LINES: usize = 20;

/// Who the report is for, which decides what it says to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The QA phase of a run: the attempt counts, a REJECT goes back to GREEN, an APPROVE
    /// ships (the seed's wording).
    Run,
    /// `prpd qa` on its own: no phases and no attempts; the reader fixes and runs it again.
    Standalone,
}

/// The Markdown report.
pub fn markdown(outcome: &QaOutcome, audience: Audience) -> String {
    let mut out = String::new();
    let timestamp = humantime::format_rfc3339_seconds(outcome.finished_at);
    let prp = outcome.prp_path.as_ref().map_or_else(
        || "(none given)".to_owned(),
        |path| path.display().to_string(),
    );
    let _ = writeln!(out, "# QA VALIDATION REPORT\n");
    let _ = writeln!(out, "**Feature:** {}", outcome.feature);
    let _ = writeln!(out, "**PRP:** {prp}");
    let _ = writeln!(out, "**Timestamp:** {timestamp}");
    match audience {
        Audience::Run => {
            let _ = writeln!(
                out,
                "**Attempt:** {} of {MAX_QA_ATTEMPTS}\n",
                outcome.attempt
            );
        }
        Audience::Standalone => {
            let _ = writeln!(out);
        }
    }
    let _ = writeln!(out, "---\n");
    let verdict = match outcome.verdict {
        Verdict::Approve => "✅ APPROVED",
        Verdict::Reject => "❌ REJECTED",
    };
    let _ = writeln!(out, "## Verdict: {verdict}\n");
    let _ = writeln!(
        out,
        "{} checks: {} passed, {} blocking failed, {} warnings, {} skipped.\n",
        outcome.checks.len(),
        outcome.passing(),
        outcome.blocking_failed(),
        outcome.warnings(),
        outcome
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Skip)
            .count()
    );
    let _ = writeln!(out, "---\n");
    memory::write(&mut out, outcome.memory.as_ref());
    write_stack(&mut out, outcome);
    write_checklist(&mut out, outcome);
    for section in &outcome.sections {
        let _ = writeln!(
            out,
            "## {}\n\n{}\n---\n",
            section.title,
            section.markdown.trim_end()
        );
    }
    write_issues(&mut out, outcome);
    write_next_action(&mut out, outcome, audience);
    out
}

fn write_stack(out: &mut String, outcome: &QaOutcome) {
    let _ = writeln!(out, "## Stack\n");
    if outcome.detection.stacks.is_empty() {
        let _ = writeln!(out, "No stack detected.\n");
    } else {
        for stack in &outcome.detection.stacks {
            let _ = writeln!(out, "- `{}` at `{}`", stack.id, stack.path.display());
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "---\n");
}

fn write_checklist(out: &mut String, outcome: &QaOutcome) {
    let _ = writeln!(out, "## Checklist Results\n");
    let mut categories: Vec<&str> = Vec::new();
    for check in &outcome.checks {
        if !categories.contains(&check.category.as_str()) {
            categories.push(&check.category);
        }
    }
    for category in categories {
        let _ = writeln!(out, "### {category}\n");
        let _ = writeln!(out, "| ID | Check | Status | Details |");
        let _ = writeln!(out, "|----|-------|--------|---------|");
        for check in outcome.checks.iter().filter(|c| c.category == category) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                check.id,
                cell(&check.criterion),
                status_icon(check),
                cell(&check.detail)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "---\n");
}

fn write_issues(out: &mut String, outcome: &QaOutcome) {
    let _ = writeln!(out, "## Issues Found\n");
    let blocking: Vec<&CheckResult> = outcome
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .collect();
    let warnings: Vec<&CheckResult> = outcome
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warn)
        .collect();
    let _ = writeln!(out, "### Blocking Issues ({})\n", blocking.len());
    write_issue_list(out, &blocking);
    let _ = writeln!(out, "### Warnings ({})\n", warnings.len());
    write_issue_list(out, &warnings);
    let skipped: Vec<&CheckResult> = outcome
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Skip)
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "### Skipped ({})\n", skipped.len());
        for check in skipped {
            let _ = writeln!(
                out,
                "- **[{}]** {}: {}",
                check.id, check.criterion, check.detail
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "---\n");
}

fn write_issue_list(out: &mut String, checks: &[&CheckResult]) {
    if checks.is_empty() {
        let _ = writeln!(out, "None.\n");
        return;
    }
    for (number, check) in checks.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. **[{}]** {}",
            number + 1,
            check.id,
            check.criterion
        );
        let _ = writeln!(out, "   - **Why:** {}", check.detail);
        if let Some(command) = &check.command {
            let source = check
                .source
                .as_ref()
                .map_or_else(String::new, |source| format!(" (from {source})"));
            let _ = writeln!(out, "   - **Command:** `{command}`{source}");
        }
        if let Some(log) = &check.log {
            let _ = writeln!(out, "   - **Log:** `{}`", log.display());
        }
        let tail = prpd_base::files::last_lines(&check.output_tail, QUOTED_LINES);
        if !tail.trim().is_empty() {
            let _ = writeln!(out, "   - **Output (last lines):**\n");
            let _ = writeln!(out, "     ```text");
            for line in tail.lines() {
                let _ = writeln!(out, "     {line}");
            }
            let _ = writeln!(out, "     ```");
        }
    }
    let _ = writeln!(out);
}

fn write_next_action(out: &mut String, outcome: &QaOutcome, audience: Audience) {
    let _ = writeln!(out, "## Next Action\n");
    let blocking = outcome.blocking_failed();
    match (audience, outcome.verdict) {
        (Audience::Run, Verdict::Approve) => {
            let _ = writeln!(
                out,
                "**✅ Ready for SHIP** - Proceeding to branch creation and PR."
            );
        }
        (Audience::Run, Verdict::Reject) => {
            let remaining = MAX_QA_ATTEMPTS.saturating_sub(outcome.attempt);
            let _ = writeln!(
                out,
                "**❌ Return to GREEN** - Fix {blocking} blocking issues."
            );
            let _ = writeln!(
                out,
                "Attempt {}/{MAX_QA_ATTEMPTS} - {remaining} attempts remaining before human escalation.",
                outcome.attempt
            );
        }
        (Audience::Standalone, Verdict::Approve) => {
            let _ = writeln!(
                out,
                "**✅ Approved** - No blocking issue. Look at the warnings and skipped checks above, if any."
            );
        }
        (Audience::Standalone, Verdict::Reject) => {
            let _ = writeln!(
                out,
                "**❌ Rejected** - Fix the {blocking} blocking {} above, then run `prpd qa` again.",
                if blocking == 1 { "issue" } else { "issues" }
            );
        }
    }
}

fn status_icon(check: &CheckResult) -> &'static str {
    match check.status {
        CheckStatus::Pass => "✅",
        CheckStatus::Fail => "❌",
        CheckStatus::Warn => "⚠️",
        CheckStatus::Skip => "⏭️ skipped",
    }
}

pub use crate::table_cell::cell;

/// The status block's `MEMORY_CONTEXT`: the queries answered and what two of them found.
pub fn memory_context(memory: Option<&MemorySection>) -> Value {
    let (executed, bugs, patterns) = memory.map_or((0, 0, 0), |memory| {
        (
            memory.queries_executed(),
            memory.historical_bugs.results,
            memory.stack_patterns.results,
        )
    });
    Value::Map(vec![
        ("QUERIES_EXECUTED".to_owned(), executed.to_string().into()),
        ("HISTORICAL_BUGS_FOUND".to_owned(), bugs.to_string().into()),
        (
            "PATTERNS_IDENTIFIED".to_owned(),
            patterns.to_string().into(),
        ),
    ])
}

/// The JSON report: `{"verdict","checks":[…],"blocking_failed","warnings","memory"}`.
#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    pub verdict: Verdict,
    pub checks: &'a [CheckResult],
    pub blocking_failed: usize,
    pub warnings: usize,
    /// What the memory answered before this QA (`null`: no memory configured).
    pub memory: Option<&'a MemorySection>,
}

/// The JSON report of `outcome`.
pub fn json(outcome: &QaOutcome) -> JsonReport<'_> {
    JsonReport {
        verdict: outcome.verdict,
        checks: &outcome.checks,
        blocking_failed: outcome.blocking_failed(),
        warnings: outcome.warnings(),
        memory: outcome.memory.as_ref(),
    }
}

/// The status block (seed 004, `PRP_PHASE_STATUS`) of a standalone `prpd qa` for `outcome` at
/// `iteration` (inside a run the driver writes its own blocks).
pub fn status_block(outcome: &QaOutcome, iteration: u32) -> StatusBlock {
    let approved = outcome.verdict == Verdict::Approve;
    let total = outcome.checks.len();
    let failing = outcome.blocking_failed() + outcome.warnings();
    let mut block = StatusBlock::new();
    block
        .set(
            "TIMESTAMP",
            humantime::format_rfc3339_seconds(outcome.finished_at).to_string(),
        )
        .set("PHASE", "QA")
        .set("STATUS", "COMPLETE")
        .set("ITERATION", iteration.to_string())
        .set("PROGRESS_PERCENT", "100")
        .set(
            "QA_METRICS",
            Value::Map(vec![
                ("CHECKS_TOTAL".to_owned(), total.to_string().into()),
                (
                    "CHECKS_PASSING".to_owned(),
                    outcome.passing().to_string().into(),
                ),
                ("CHECKS_FAILING".to_owned(), failing.to_string().into()),
                (
                    "BLOCKING_ISSUES".to_owned(),
                    outcome.blocking_failed().to_string().into(),
                ),
                (
                    "WARNING_ISSUES".to_owned(),
                    outcome.warnings().to_string().into(),
                ),
            ]),
        )
        .set("MEMORY_CONTEXT", memory_context(outcome.memory.as_ref()))
        .set("VERDICT", outcome.verdict.to_string())
        .set("ATTEMPT", outcome.attempt.to_string())
        .set(
            "DUAL_GATE",
            Value::Map(vec![
                ("GATE_1".to_owned(), approved.to_string().into()),
                ("GATE_2".to_owned(), approved.to_string().into()),
                ("CAN_EXIT".to_owned(), approved.to_string().into()),
            ]),
        )
        .set(
            "BLOCKERS",
            Value::List(
                outcome
                    .checks
                    .iter()
                    .filter(|c| c.status == CheckStatus::Fail)
                    .map(|c| format!("{}: {}", c.id, c.detail))
                    .collect(),
            ),
        )
        .set("EXIT_SIGNAL", approved.to_string())
        .set(
            "RECOMMENDATION",
            if approved {
                "No blocking issue".to_owned()
            } else {
                format!(
                    "Fix {} blocking issues, then run prpd qa again",
                    outcome.blocking_failed()
                )
            },
        );
    block
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    use crate::discover::Detection;
    use crate::metrics::Metrics;

    use super::*;

    fn outcome(status: CheckStatus, verdict: Verdict) -> QaOutcome {
        QaOutcome {
            verdict,
            checks: vec![CheckResult {
                id: "F1".to_owned(),
                category: "Functionality".to_owned(),
                criterion: "100% of the tests pass".to_owned(),
                blocking: true,
                status,
                command: Some("npm test".to_owned()),
                source: Some("package.json scripts.test".to_owned()),
                exit_code: Some(1),
                duration_ms: 12,
                metrics: Metrics::default(),
                detail: "1 failing test".to_owned(),
                failing_tests: Vec::new(),
                output_tail: "not ok 1 - adds".to_owned(),
                log: Some(PathBuf::from("checks/F1.log")),
                reused_from: None,
            }],
            detection: Detection {
                stacks: Vec::new(),
                package_manager: None,
                commands: BTreeMap::new(),
                skipped: Vec::new(),
                subprojects: Vec::new(),
            },
            feature: "Multiply".to_owned(),
            prp_path: None,
            attempt: 1,
            finished_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            memory: None,
            sections: Vec::new(),
        }
    }

    #[test]
    fn a_standalone_reject_asks_to_fix_and_run_again_and_a_run_reject_returns_to_green() {
        let reject = outcome(CheckStatus::Fail, Verdict::Reject);
        insta::assert_snapshot!("standalone_reject", markdown(&reject, Audience::Standalone));
        let run = markdown(&reject, Audience::Run);
        assert!(run.contains("**Attempt:** 1 of 3"), "{run}");
        assert!(
            run.contains("**❌ Return to GREEN** - Fix 1 blocking issues."),
            "{run}"
        );
        let approve = outcome(CheckStatus::Pass, Verdict::Approve);
        let standalone = markdown(&approve, Audience::Standalone);
        assert!(
            standalone.contains("**✅ Approved** - No blocking issue."),
            "{standalone}"
        );
        assert!(!standalone.contains("SHIP"), "{standalone}");
        assert!(markdown(&approve, Audience::Run).contains("**✅ Ready for SHIP**"));
    }
}
