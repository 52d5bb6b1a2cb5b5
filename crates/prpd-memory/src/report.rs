//! The memory's answers as the rest of prpd shows them: the QA report's "Memory Context"
//! section (plain data `qa` defines, so QA does not depend on the memory), and the past
//! failures a GREEN prompt recalls ("a similar REJECT in run X: …").

use crate::context::MemoryContext;
use crate::finding::Finding;
use crate::query::Capability;
use prpd_qa::memory_context::{MemoryRow, MemorySection};

/// How many findings a row quotes.
const KEY_FINDINGS: usize = 3;

/// How many characters of a finding's excerpt a line quotes.
const EXCERPT_IN_LINE: usize = 160;

/// The report's section for `context`, asked of `backend` (as [`Memory::describe`] says it),
/// with `warnings` from opening the memory before the context's own; each key finding names
/// its run (`this run` for `this_run`'s own).
///
/// [`Memory::describe`]: crate::backend::Memory::describe
pub fn section(
    context: &MemoryContext,
    backend: String,
    warnings: &[String],
    this_run: &str,
) -> MemorySection {
    let row = |capability: Capability| MemoryRow {
        answered: context
            .answers
            .iter()
            .any(|answer| answer.capability == capability),
        results: context.count(capability),
        key_findings: context
            .findings(capability)
            .take(KEY_FINDINGS)
            .map(|finding| match finding.run_id.as_deref() {
                Some(run) if run == this_run => format!("{} (this run)", line(finding)),
                Some(run) => format!("{} ({run})", line(finding)),
                None => line(finding),
            })
            .collect(),
    };
    MemorySection {
        backend,
        historical_bugs: row(Capability::Bugs),
        stack_patterns: row(Capability::Patterns),
        architecture_decisions: row(Capability::Decisions),
        file_history: row(Capability::File),
        warnings: warnings.iter().chain(&context.warnings).cloned().collect(),
    }
}

/// The past failures among `findings` (REJECTs, breaker trips, escalations, lessons, flaky tests), one
/// sentence each, for a prompt: `a similar REJECT in run-…: QA REJECT (attempt 1) of …: F2: …`
/// (`earlier in this run` for `this_run`'s own).
pub fn recalled_failures(findings: &[Finding], this_run: &str) -> Vec<String> {
    findings
        .iter()
        .filter(|finding| {
            matches!(
                finding.kind.as_str(),
                "reject" | "breaker_trip" | "escalation" | "lesson" | "flaky_test"
            ) || finding.kind.starts_with("csr_")
        })
        .map(|finding| {
            let what = match finding.kind.as_str() {
                "reject" => "a similar REJECT",
                "breaker_trip" => "a similar breaker trip",
                "escalation" => "a similar escalation",
                "lesson" => "a lesson a human recorded",
                "flaky_test" => "flaky tests seen",
                _ => "a similar past failure",
            };
            let from = match finding.run_id.as_deref() {
                Some(run) if run == this_run => " earlier in this run".to_owned(),
                Some(run) => format!(" in {run}"),
                None => String::new(),
            };
            format!("{what}{from}: {}", line(finding))
        })
        .collect()
}

/// One finding on one line: its title, then the start of its excerpt.
fn line(finding: &Finding) -> String {
    let excerpt: String = finding
        .excerpt
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut short: String = excerpt.chars().take(EXCERPT_IN_LINE).collect();
    if short.len() < excerpt.len() {
        short.push('…');
    }
    if short.is_empty() {
        finding.title.clone()
    } else {
        format!("{}: {short}", finding.title)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Question;

    fn finding(kind: &str, title: &str, excerpt: &str) -> Finding {
        Finding {
            score: 1.0,
            created_at: Some(1),
            run_id: Some("run-7".to_owned()),
            kind: kind.to_owned(),
            title: title.to_owned(),
            excerpt: excerpt.to_owned(),
            files: Vec::new(),
        }
    }

    #[test]
    fn the_section_counts_each_capability_and_quotes_its_best_findings() {
        let mut context = MemoryContext::default();
        context.answered(
            &Question::Bugs("x".to_owned()),
            vec![finding(
                "reject",
                "QA REJECT (attempt 1) of Stats",
                "F2: AC-2\nhas no test",
            )],
        );
        context.answered(&Question::Patterns("x".to_owned()), Vec::new());
        context
            .warnings
            .push("decisions: timed out after 2s".to_owned());
        let section = section(
            &context,
            "the embedded store x.db".to_owned(),
            &["opened late".to_owned()],
            "run-8",
        );
        assert_eq!(section.queries_executed(), 2);
        assert!(section.historical_bugs.answered);
        assert_eq!(section.historical_bugs.results, 1);
        assert_eq!(
            section.historical_bugs.key_findings,
            ["QA REJECT (attempt 1) of Stats: F2: AC-2 has no test (run-7)"]
        );
        assert!(section.stack_patterns.answered && section.stack_patterns.results == 0);
        assert!(!section.architecture_decisions.answered);
        assert_eq!(
            section.warnings,
            ["opened late", "decisions: timed out after 2s"]
        );
    }

    #[test]
    fn only_failures_are_recalled_for_a_prompt_with_their_run() {
        let findings = [
            finding(
                "reject",
                "QA REJECT (attempt 1) of Stats",
                "F2: AC-2 has no test",
            ),
            finding("approve", "QA APPROVE of Stats", "all passed"),
            finding("lesson", "Mind the locale", ""),
        ];
        assert_eq!(
            recalled_failures(&findings, "run-8"),
            [
                "a similar REJECT in run-7: QA REJECT (attempt 1) of Stats: F2: AC-2 has no test",
                "a lesson a human recorded in run-7: Mind the locale",
            ]
        );
        assert_eq!(
            recalled_failures(&findings[..1], "run-7"),
            [
                "a similar REJECT earlier in this run: QA REJECT (attempt 1) of Stats: F2: AC-2 has no test"
            ]
        );
    }
}
