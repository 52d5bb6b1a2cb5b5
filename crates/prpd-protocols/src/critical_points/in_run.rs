//! A run's critical points judged at QA: the evidence is what prpd itself measured — each
//! check with how it ended (its id, command and criterion; not its detail, which quotes output
//! and would tie a point to whatever a failing command happened to print), each test the test
//! run named with its outcome, and what the run changed (the files, and the lines it added, the
//! PRP excluded so that it cannot vouch for itself). The verdict becomes one blocking check, `critical_points`,
//! whose failure is a REJECT, and a per-point table for the report. Pure: the driver gathers
//! the changes and hands them over as plain data.

use std::path::{Path, PathBuf};

use prpd_qa::metrics::Outcome;
use prpd_qa::runner::{CheckResult, CheckStatus};

use super::evidence::Evidence;
use super::table;
use super::verdict::PlanVerdict;

/// The id of the check the points become.
pub const CHECK_ID: &str = "critical_points";

/// How a file changed in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    Added,
    Modified,
    Deleted,
}

/// One row per check that ran and one per test a check's run named. A skipped check did not
/// run, so it is no evidence either way.
pub fn evidence_from_checks(checks: &[CheckResult]) -> Vec<Evidence> {
    let mut rows = Vec::new();
    for check in checks
        .iter()
        .filter(|check| check.status != CheckStatus::Skip)
    {
        let command = check
            .command
            .as_ref()
            .map_or_else(String::new, |command| format!(" `{command}`"));
        let status = match check.status {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Warn | CheckStatus::Skip => "warning",
        };
        rows.push(Evidence::judged(
            format!("check {}{command}: {status}: {}", check.id, check.criterion),
            format!("check {}", check.id),
            check.status == CheckStatus::Pass,
        ));
        for (name, outcome) in check.metrics.test_cases().iter() {
            rows.push(Evidence::judged(
                format!("test {name}: {}", outcome.as_str()),
                format!("check {}", check.id),
                outcome == Outcome::Passed,
            ));
        }
    }
    rows
}

/// One row per file the run changed and one per line it added (`patch` is the unified diff of
/// the run), leaving out `prp`.
pub fn evidence_from_changes(
    changes: &[(PathBuf, FileChange)],
    patch: &str,
    prp: &Path,
) -> Vec<Evidence> {
    let mut rows = Vec::new();
    for (path, change) in changes {
        if path == prp {
            continue;
        }
        let (word, kept) = match change {
            FileChange::Added => ("added", true),
            FileChange::Modified => ("modified", true),
            FileChange::Deleted => ("deleted", false),
        };
        rows.push(Evidence::judged(
            format!("file {} ({word})", path.display()),
            "the run's changes",
            kept,
        ));
    }
    let prp_header = format!("+++ b/{}", prp.display());
    let mut file: Option<String> = None;
    for line in patch.lines() {
        if let Some(header) = line.strip_prefix("+++ ") {
            file = (line != prp_header && header != "/dev/null")
                .then(|| header.strip_prefix("b/").unwrap_or(header).to_owned());
        } else if let (Some(file), Some(added)) = (&file, line.strip_prefix('+'))
            && !added.trim().is_empty()
        {
            rows.push(Evidence::file_line(
                format!("{file}: + {}", added.trim()),
                file.clone(),
            ));
        }
    }
    rows
}

/// The check the verdict becomes: blocking; it fails when a point failed, passes when at
/// least one point passed and none failed, and is a warning when no point could be judged.
pub fn check_result(verdict: &PlanVerdict) -> CheckResult {
    let table = table::markdown(verdict);
    let total = verdict.points.len();
    let (status, detail) = if verdict.failed > 0 {
        let failed: Vec<String> = verdict
            .failed_points()
            .map(|point| format!("{} ({})", point.id, point.reason))
            .collect();
        (
            CheckStatus::Fail,
            format!(
                "{} of {total} critical points failed: {}",
                verdict.failed,
                failed.join("; ")
            ),
        )
    } else if verdict.passed == 0 {
        (
            CheckStatus::Warn,
            format!(
                "none of the {total} critical points could be verified: give each success criterion a hint in backticks or `(verify: …)`"
            ),
        )
    } else {
        let unverified = if verdict.unverified > 0 {
            format!(", {} unverified (no hint)", verdict.unverified)
        } else {
            String::new()
        };
        (
            CheckStatus::Pass,
            format!(
                "{} of {total} critical points verified{unverified}",
                verdict.passed
            ),
        )
    };
    CheckResult {
        id: CHECK_ID.to_owned(),
        category: "PRP".to_owned(),
        criterion: "Every success criterion of the PRP is met (critical points)".to_owned(),
        blocking: true,
        status,
        command: None,
        source: None,
        exit_code: None,
        duration_ms: 0,
        metrics: prpd_qa::metrics::Metrics::default(),
        detail,
        failing_tests: Vec::new(),
        output_tail: if status == CheckStatus::Fail {
            table
        } else {
            String::new()
        },
        log: None,
        reused_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::critical_points::from_prp;
    use crate::critical_points::plan::Plan;
    use crate::critical_points::verdict;

    const PATCH: &str = "\
diff --git a/src/textkit.js b/src/textkit.js
--- a/src/textkit.js
+++ b/src/textkit.js
@@ -1,2 +1,5 @@
 export function wordCount(text) {}
+export function wordStats(text) {
+  return {};
+}
diff --git a/PRPs/word-stats.md b/PRPs/word-stats.md
--- a/PRPs/word-stats.md
+++ b/PRPs/word-stats.md
@@ -1 +1,2 @@
+- [ ] `README.md` documents it
";

    fn check(id: &str, command: &str, status: CheckStatus) -> CheckResult {
        let mut result = check_result(&verdict_of(&[], &[]));
        result.id = id.to_owned();
        result.command = Some(command.to_owned());
        result.status = status;
        result.detail = String::new();
        result
    }

    fn verdict_of(criteria: &[&str], rows: &[Evidence]) -> PlanVerdict {
        let mut text = String::from("# Word stats\n\n## Success Criteria\n\n");
        for criterion in criteria {
            text.push_str("- [ ] ");
            text.push_str(criterion);
            text.push('\n');
        }
        let prp = prpd_prp::parse(Path::new("PRPs/word-stats.md"), &text);
        let points = prp.map(|prp| from_prp::points(&prp)).unwrap_or_default();
        let plan = Plan {
            plan_id: "run".to_owned(),
            task: "Word stats".to_owned(),
            kind: None,
            critical_points: points.iter().map(|point| point.point.clone()).collect(),
            created_at: String::new(),
            expires_at: String::new(),
            persisted_to: None,
        };
        let hints: Vec<Vec<String>> = points.into_iter().map(|point| point.hints).collect();
        verdict::judge_with_hints(&plan, &hints, rows)
    }

    #[test]
    fn the_run_own_measurements_are_the_evidence_and_the_prp_is_not() {
        let changes = [
            (PathBuf::from("src/textkit.js"), FileChange::Modified),
            (PathBuf::from("PRPs/word-stats.md"), FileChange::Modified),
            (PathBuf::from("old.js"), FileChange::Deleted),
        ];
        let mut rows = evidence_from_changes(&changes, PATCH, Path::new("PRPs/word-stats.md"));
        let texts: Vec<&str> = rows.iter().map(|row| row.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "file src/textkit.js (modified)",
                "file old.js (deleted)",
                "src/textkit.js: + export function wordStats(text) {",
                "src/textkit.js: + return {};",
                "src/textkit.js: + }",
            ]
        );
        rows.extend(evidence_from_checks(&[
            check("lint", "npm run lint", CheckStatus::Pass),
            check("test", "npm test", CheckStatus::Fail),
        ]));
        let verdict = verdict_of(
            &[
                "`wordStats` is exported from `src/textkit.js`",
                "`README.md` documents it",
                "`npm run lint` and `npm test` pass",
                "It reads well",
            ],
            &rows,
        );
        let statuses: Vec<&str> = verdict
            .points
            .iter()
            .map(|point| match point.verdict {
                verdict::PointStatus::Pass => "pass",
                verdict::PointStatus::Fail => "fail",
                verdict::PointStatus::Unverified => "unverified",
            })
            .collect();
        assert_eq!(statuses, ["pass", "fail", "fail", "unverified"]);
        let result = check_result(&verdict);
        assert_eq!(result.status, CheckStatus::Fail);
        assert!(result.detail.starts_with("2 of 4 critical points failed: CP2 (no evidence contains \"README.md\"); CP3 (evidence says \"npm test\" failed)"), "{}", result.detail);
        assert!(result.output_tail.contains("| CP1 |"));
    }

    #[test]
    fn passing_points_pass_and_points_without_hints_alone_only_warn() {
        let rows = [Evidence::judged(
            "check test `npm test`: pass",
            "check test",
            true,
        )];
        let passed = check_result(&verdict_of(&["`npm test` passes", "It reads well"], &rows));
        assert_eq!(passed.status, CheckStatus::Pass);
        assert_eq!(
            passed.detail,
            "1 of 2 critical points verified, 1 unverified (no hint)"
        );
        let unjudged = check_result(&verdict_of(&["It reads well"], &rows));
        assert_eq!(unjudged.status, CheckStatus::Warn);
    }

    #[test]
    fn tests_named_by_a_run_are_rows_with_their_outcome() {
        let mut test = check("test", "npm test", CheckStatus::Pass);
        // Real runner output (cargo's), read as QA reads it.
        test.metrics = prpd_qa::metrics::parse_output(
            "test ac_1_word_stats_counts_words ... ok\ntest ac_2_word_stats_averages ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n".as_bytes(),
        );
        let rows = evidence_from_checks(&[test]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].text, "test ac_2_word_stats_averages: failed");
        assert_eq!(rows[2].passed, Some(false));
    }

    #[test]
    fn a_test_the_run_skipped_fails_the_point_that_names_it() {
        let mut test = check("test", "cargo test", CheckStatus::Pass);
        test.metrics = prpd_qa::metrics::parse_output(
            "test word_stats_counts ... ok\ntest word_stats_averages ... ignored\n\ntest result: ok. 1 passed; 0 failed; 1 ignored\n".as_bytes(),
        );
        let rows = evidence_from_checks(&[test]);
        let verdict = verdict_of(
            &["`word_stats_counts` passes", "`word_stats_averages` passes"],
            &rows,
        );
        let statuses: Vec<verdict::PointStatus> =
            verdict.points.iter().map(|point| point.verdict).collect();
        assert_eq!(
            statuses,
            [verdict::PointStatus::Pass, verdict::PointStatus::Fail]
        );
        assert!(
            verdict.points[1].reason.contains("did not run"),
            "{}",
            verdict.points[1].reason
        );
    }
}
