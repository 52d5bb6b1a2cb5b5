//! The checks of the approving QA and their results, for the proof. The run record keeps the
//! QA report as prpd rendered it (`last_qa_markdown`, sealed with the record) rather than the
//! checks themselves, so they are read back from its "Checklist Results" tables, which
//! `prpd_qa::report` writes one row per check: `| ID | Check | Status | Details |`. Never from
//! a file: a report on disk is a file an agent could have rewritten.

use serde::Serialize;

/// How a check ended, as the QA report shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    Passed,
    /// A blocking check failed.
    Failed,
    /// A warning check failed.
    Warning,
    Skipped,
}

impl CheckOutcome {
    /// The word the proof's Markdown uses.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "FAILED",
            CheckOutcome::Warning => "warning",
            CheckOutcome::Skipped => "skipped",
        }
    }
}

/// One check of the QA report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    pub id: String,
    pub criterion: String,
    pub outcome: CheckOutcome,
    pub detail: String,
}

/// The checks of the QA report `markdown`, in the report's order.
pub fn checks_of_qa_report(markdown: &str) -> Vec<CheckLine> {
    let Some((_, results)) = markdown.split_once("\n## Checklist Results\n") else {
        return Vec::new();
    };
    results
        .lines()
        .take_while(|line| *line != "---")
        .filter_map(row)
        .collect()
}

/// A check's row: four cells, the third a status the report writes.
fn row(line: &str) -> Option<CheckLine> {
    let inner = line.strip_prefix("| ")?.strip_suffix(" |")?;
    let cells = cells(inner);
    let [id, criterion, status, detail] = <[String; 4]>::try_from(cells).ok()?;
    let outcome = match status.as_str() {
        "✅" => CheckOutcome::Passed,
        "❌" => CheckOutcome::Failed,
        "⚠️" => CheckOutcome::Warning,
        "⏭️ skipped" => CheckOutcome::Skipped,
        _ => return None,
    };
    Some(CheckLine {
        id,
        criterion,
        outcome,
        detail,
    })
}

/// The cells of a row's inside, split at the pipes a cell does not escape (`\|`), unescaped.
fn cells(inner: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut characters = inner.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\\' if characters.peek() == Some(&'|') => {
                characters.next();
                cell.push('|');
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            other => cell.push(other),
        }
    }
    cells.push(cell);
    cells.iter().map(|cell| cell.trim().to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::SystemTime;

    use prpd_base::status_block::Verdict;
    use prpd_qa::discover::Detection;
    use prpd_qa::metrics::Metrics;
    use prpd_qa::report::{self, Audience};
    use prpd_qa::runner::{CheckResult, CheckStatus, QaOutcome};

    use super::*;

    fn check(id: &str, category: &str, criterion: &str, status: CheckStatus) -> CheckResult {
        CheckResult {
            id: id.to_owned(),
            category: category.to_owned(),
            criterion: criterion.to_owned(),
            blocking: status != CheckStatus::Warn,
            status,
            command: None,
            source: None,
            exit_code: None,
            duration_ms: 0,
            metrics: Metrics::default(),
            detail: format!("{id}: a | in the detail"),
            failing_tests: Vec::new(),
            output_tail: String::new(),
            log: None,
            reused_from: None,
        }
    }

    #[test]
    fn the_checks_are_read_back_from_the_report_prpd_rendered() {
        let outcome = QaOutcome {
            verdict: Verdict::Approve,
            checks: vec![
                check(
                    "F1",
                    "Functionality",
                    "100% of the tests pass",
                    CheckStatus::Pass,
                ),
                check("C1", "Code quality", "Lint is clean", CheckStatus::Warn),
                check("D2", "Documentation", "ADR | decisions", CheckStatus::Skip),
                check("F2P", "Functionality", "Fail-to-pass", CheckStatus::Fail),
            ],
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
            finished_at: SystemTime::UNIX_EPOCH,
            memory: None,
            sections: Vec::new(),
        };
        let checks = checks_of_qa_report(&report::markdown(&outcome, Audience::Run));
        let read: Vec<(&str, &str, CheckOutcome)> = checks
            .iter()
            .map(|line| (line.id.as_str(), line.criterion.as_str(), line.outcome))
            .collect();
        assert_eq!(
            read,
            [
                ("F1", "100% of the tests pass", CheckOutcome::Passed),
                ("F2P", "Fail-to-pass", CheckOutcome::Failed),
                ("C1", "Lint is clean", CheckOutcome::Warning),
                ("D2", "ADR | decisions", CheckOutcome::Skipped),
            ]
        );
        assert_eq!(checks[0].detail, "F1: a | in the detail");
    }

    #[test]
    fn a_text_without_the_checklist_has_no_checks() {
        assert!(checks_of_qa_report("# QA VALIDATION REPORT\n\nnothing\n").is_empty());
    }
}
