//! A plan's verdict as a Markdown table, one row per point: what the QA report of a run shows
//! and `prpd plan verify --markdown` prints.

use std::fmt::Write as _;

use super::verdict::{PlanVerdict, PointStatus};
use prpd_qa::report;

/// A cell shows at most this many characters of an evidence row.
const CELL_CHARS: usize = 120;

/// `| Point | Criterion | Hint | Verdict | Evidence |` and a line per point.
pub fn markdown(verdict: &PlanVerdict) -> String {
    let mut out =
        String::from("| Point | Criterion | Hint | Verdict | Evidence |\n|---|---|---|---|---|\n");
    for point in &verdict.points {
        let (status, evidence) = match point.verdict {
            PointStatus::Pass => ("PASS", point.matched.first().cloned().unwrap_or_default()),
            PointStatus::Fail => (
                "FAIL",
                match point.contradicted.first() {
                    Some(row) => format!("{}: {row}", point.reason),
                    None => point.reason.clone(),
                },
            ),
            PointStatus::Unverified => ("UNVERIFIED", point.reason.clone()),
        };
        // A PRP criterion's several hints are joined with ` + `; each is shown as code.
        let hint = if point.verification_hint.is_empty() {
            "—".to_owned()
        } else {
            point
                .verification_hint
                .split(" + ")
                .map(|hint| format!("`{}`", cell(hint).replace('`', "'")))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        let _ = writeln!(
            out,
            "| {} | {} | {hint} | {status} | {} |",
            point.id,
            cell(&point.description),
            cell(&evidence),
        );
    }
    out
}

/// Text fit for one table cell (`qa::report::cell`), runs of spaces made one, long rows cut.
fn cell(text: &str) -> String {
    let line = report::cell(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    if line.chars().count() > CELL_CHARS {
        let cut: String = line.chars().take(CELL_CHARS).collect();
        format!("{cut}…")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::critical_points::evidence::Evidence;
    use crate::critical_points::{plan, verdict};
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    #[test]
    fn one_row_per_point_with_its_evidence() {
        let plan = plan::create(
            &json!({"task": "t", "critical_points": [
                {"description": "login | passes", "verification_hint": "test_login"},
                {"description": "logout passes", "verification_hint": "test_logout"},
            ]}),
            "abcdefabcdef".to_owned(),
            SystemTime::UNIX_EPOCH,
            Duration::from_secs(1),
        )
        .expect("plan");
        let rows = [
            Evidence::line("test_login ... ok"),
            Evidence::line("test_logout ... FAILED"),
        ];
        let table = markdown(&verdict::judge(&plan, &rows));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[2],
            "| CP1 | login \\| passes | `test_login` | PASS | test_login ... ok |"
        );
        assert_eq!(
            lines[3],
            "| CP2 | logout passes | `test_logout` | FAIL | evidence says \"test_logout\" failed: test_logout ... FAILED |"
        );
    }
}
