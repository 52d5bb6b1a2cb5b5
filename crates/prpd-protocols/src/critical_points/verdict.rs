//! Judging a plan against evidence, point by point. A point passes when at least one row
//! contains its hint and no row that contains it says it failed or did not run (skipped,
//! ignored, pending, todo, xfail, not written: `reading.rs`); a point whose hint no row
//! contains fails ("no evidence"), so evidence that says nothing never passes anything. A row
//! that says the test did not run fails the point even next to one that supports it: a runner
//! names a test it skips (TAP's `# Subtest: test_login` before `ok 1 - test_login # SKIP`), and
//! a point that names a test wants it run. The plan
//! passes when every point does. A point with several hints (a PRP criterion naming several
//! things) needs each of them; a point with none cannot be judged and is reported as
//! unverified, which neither passes nor fails the plan.

use serde::Serialize;

use super::evidence::Evidence;
use super::plan::{CriticalPoint, Kind, Plan};
use super::reading::{Reading, reading};

/// At most this many matching rows are quoted per point.
const QUOTED_ROWS: usize = 5;

/// How one point came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PointStatus {
    Pass,
    Fail,
    /// No hint to look for: nobody can say.
    Unverified,
}

/// One point's verdict with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointVerdict {
    pub id: String,
    pub description: String,
    pub verification_hint: String,
    pub verdict: PointStatus,
    /// Rows that contain a hint and support it (the first few).
    pub matched: Vec<String>,
    /// Rows that contain a hint and say it failed or did not run (the first few).
    pub contradicted: Vec<String>,
    /// Why, in one line.
    pub reason: String,
}

/// The whole plan's verdict, as `verify_plan` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanVerdict {
    pub plan_id: String,
    pub task: String,
    pub kind: Option<Kind>,
    /// `pass` when no point failed and at least one passed.
    pub verdict: PlanStatus,
    pub passed: usize,
    pub failed: usize,
    pub unverified: usize,
    pub points: Vec<PointVerdict>,
}

/// The plan's overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanStatus {
    Pass,
    Fail,
}

impl PlanVerdict {
    /// The points that failed.
    pub fn failed_points(&self) -> impl Iterator<Item = &PointVerdict> {
        self.points
            .iter()
            .filter(|point| point.verdict == PointStatus::Fail)
    }
}

/// `verify_plan`: each point judged by its one hint.
pub fn judge(plan: &Plan, rows: &[Evidence]) -> PlanVerdict {
    let points = plan
        .critical_points
        .iter()
        .map(|point| judge_point(point, std::slice::from_ref(&point.verification_hint), rows))
        .collect();
    tally(plan, points)
}

/// A plan whose points carry their own hints (a PRP's criteria: none, one or several each).
pub fn judge_with_hints(plan: &Plan, hints: &[Vec<String>], rows: &[Evidence]) -> PlanVerdict {
    let points = plan
        .critical_points
        .iter()
        .zip(hints)
        .map(|(point, hints)| judge_point(point, hints, rows))
        .collect();
    tally(plan, points)
}

fn tally(plan: &Plan, points: Vec<PointVerdict>) -> PlanVerdict {
    let count = |status| {
        points
            .iter()
            .filter(|point: &&PointVerdict| point.verdict == status)
            .count()
    };
    let (passed, failed, unverified) = (
        count(PointStatus::Pass),
        count(PointStatus::Fail),
        count(PointStatus::Unverified),
    );
    PlanVerdict {
        plan_id: plan.plan_id.clone(),
        task: plan.task.clone(),
        kind: plan.kind,
        verdict: if failed == 0 && passed > 0 {
            PlanStatus::Pass
        } else {
            PlanStatus::Fail
        },
        passed,
        failed,
        unverified,
        points,
    }
}

fn judge_point(point: &CriticalPoint, hints: &[String], rows: &[Evidence]) -> PointVerdict {
    let mut verdict = PointVerdict {
        id: point.id.clone(),
        description: point.description.clone(),
        verification_hint: point.verification_hint.clone(),
        verdict: PointStatus::Pass,
        matched: Vec::new(),
        contradicted: Vec::new(),
        reason: String::new(),
    };
    if hints.is_empty() {
        verdict.verdict = PointStatus::Unverified;
        "no hint to look for in the evidence".clone_into(&mut verdict.reason);
        return verdict;
    }
    let mut missing = Vec::new();
    let mut contradicted = Vec::new();
    let mut not_run = Vec::new();
    for hint in hints {
        let mut found = false;
        for row in rows {
            match reading(row, hint) {
                Some(Reading::Supports) => {
                    found = true;
                    push_quoted(&mut verdict.matched, row);
                }
                Some(Reading::Contradicts) => {
                    if !contradicted.contains(hint) {
                        contradicted.push(hint.clone());
                    }
                    push_quoted(&mut verdict.contradicted, row);
                }
                Some(Reading::NotRun) => {
                    if !not_run.contains(hint) {
                        not_run.push(hint.clone());
                    }
                    push_quoted(&mut verdict.contradicted, row);
                }
                None => {}
            }
        }
        if !found && !contradicted.contains(hint) && !not_run.contains(hint) {
            missing.push(hint.clone());
        }
    }
    let quote = |hints: &[String]| {
        hints
            .iter()
            .map(|hint| format!("\"{hint}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !contradicted.is_empty() {
        verdict.verdict = PointStatus::Fail;
        verdict.reason = format!("evidence says {} failed", quote(&contradicted));
    } else if !not_run.is_empty() {
        verdict.verdict = PointStatus::Fail;
        verdict.reason = format!("evidence says {} did not run", quote(&not_run));
    } else if !missing.is_empty() {
        verdict.verdict = PointStatus::Fail;
        verdict.reason = format!("no evidence contains {}", quote(&missing));
    } else {
        verdict.reason = format!("{} row(s) support it", verdict.matched.len());
    }
    verdict
}

fn push_quoted(quoted: &mut Vec<String>, row: &Evidence) {
    if quoted.len() < QUOTED_ROWS && !quoted.contains(&row.text) {
        quoted.push(row.text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::critical_points::plan;
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    fn plan_of(points: &serde_json::Value) -> Plan {
        plan::create(
            &json!({"task": "login", "critical_points": points}),
            "abcdefabcdef".to_owned(),
            SystemTime::UNIX_EPOCH,
            Duration::from_secs(60),
        )
        .expect("valid plan")
    }

    #[test]
    fn each_point_needs_supporting_evidence_and_no_contradiction() {
        let plan = plan_of(&json!([
            {"description": "login test passes", "verification_hint": "test_login"},
            {"description": "logout test passes", "verification_hint": "test_logout"},
            {"description": "no lint findings", "verification_hint": "0 problems"},
            {"description": "signup works", "verification_hint": "test_signup"},
        ]));
        let rows = [
            Evidence::line("PASSED tests/test_auth.py::test_login"),
            Evidence::line("FAILED tests/test_auth.py::test_logout - assert 302 == 200"),
            Evidence::line("PASSED tests/test_auth.py::test_logout_twice"),
            Evidence::judged("eslint: 0 problems", "lint", true),
        ];
        let verdict = judge(&plan, &rows);
        let statuses: Vec<PointStatus> = verdict.points.iter().map(|p| p.verdict).collect();
        assert_eq!(
            statuses,
            [
                PointStatus::Pass,
                PointStatus::Fail,
                PointStatus::Pass,
                PointStatus::Fail
            ]
        );
        assert_eq!(verdict.verdict, PlanStatus::Fail);
        assert_eq!((verdict.passed, verdict.failed), (2, 2));
        assert_eq!(
            verdict.points[0].matched,
            ["PASSED tests/test_auth.py::test_login"]
        );
        assert!(
            verdict.points[1]
                .reason
                .contains("evidence says \"test_logout\" failed")
        );
        assert_eq!(verdict.points[1].contradicted.len(), 1);
        assert!(
            verdict.points[3]
                .reason
                .contains("no evidence contains \"test_signup\"")
        );
        let ids: Vec<&str> = verdict.failed_points().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["CP2", "CP4"]);
    }

    #[test]
    fn all_points_supported_pass_and_empty_evidence_fails_everything() {
        let plan = plan_of(&json!(["screenshot saved", "0 errors"]));
        let pass = judge(
            &plan,
            &[
                Evidence::line("screenshot saved to shots/home.png"),
                Evidence::line("build: 0 errors"),
            ],
        );
        assert_eq!(pass.verdict, PlanStatus::Pass);
        let nothing = judge(&plan, &[]);
        assert_eq!(nothing.verdict, PlanStatus::Fail);
        assert_eq!(nothing.failed, 2);
    }

    #[test]
    fn several_hints_each_needed_and_none_is_unverified() {
        let plan = plan_of(&json!([
            "exported and documented",
            "reads well",
            "tests pass"
        ]));
        let hints = vec![
            vec!["wordStats".to_owned(), "README.md".to_owned()],
            Vec::new(),
            vec!["npm test".to_owned()],
        ];
        let rows = [
            Evidence::judged(
                "src/textkit.js: + export function wordStats(text) {",
                "file",
                true,
            ),
            Evidence::judged("check test `npm test`: pass", "check", true),
        ];
        let verdict = judge_with_hints(&plan, &hints, &rows);
        assert_eq!(verdict.points[0].verdict, PointStatus::Fail);
        assert!(verdict.points[0].reason.contains("\"README.md\""));
        assert_eq!(verdict.points[1].verdict, PointStatus::Unverified);
        assert_eq!(verdict.points[2].verdict, PointStatus::Pass);
        assert_eq!(
            (verdict.passed, verdict.failed, verdict.unverified),
            (1, 1, 1)
        );
        let only_unverified = judge_with_hints(&plan_of(&json!(["a"])), &[Vec::new()], &rows);
        assert_eq!(
            only_unverified.verdict,
            PlanStatus::Fail,
            "nothing verified is no pass"
        );
    }

    /// One point, `test_login`, against the rows each runner prints: an honest run passes it;
    /// a skipped, ignored, pending, todo, xfail or not-yet-written test, or a longer name that
    /// starts with the hint, does not.
    #[test]
    fn a_point_passes_on_a_test_that_ran_and_never_on_one_that_did_not() {
        let plan =
            plan_of(&json!([{"description": "login works", "verification_hint": "test_login"}]));
        let passes: &[&[&str]] = &[
            &["tests/test_auth.py::test_login PASSED [100%]"],
            &[
                "test auth::tests::test_login ... ok",
                "test result: ok. 1 passed; 0 failed; 1 ignored",
            ],
            &["=== RUN   test_login", "--- PASS: test_login (0.00s)"],
            &[
                "TAP version 13",
                "# Subtest: test_login",
                "ok 1 - test_login",
                "# skipped 0",
            ],
            &[r#"<testcase classname="tests.test_auth" name="test_login" time="0.01"/>"#],
        ];
        for rows in passes {
            let rows: Vec<Evidence> = rows.iter().copied().map(Evidence::line).collect();
            let verdict = judge(&plan, &rows);
            assert_eq!(
                verdict.verdict,
                PlanStatus::Pass,
                "{rows:?}: {:?}",
                verdict.points[0]
            );
        }
        let fails: &[(&[&str], &str)] = &[
            (
                &["tests/test_auth.py::test_login SKIPPED (not written yet)"],
                "did not run",
            ),
            (&["test test_login ... ignored"], "did not run"),
            (
                &["# Subtest: test_login", "ok 1 - test_login # SKIP"],
                "did not run",
            ),
            (
                &["# Subtest: test_login", "ok 1 - test_login # TODO"],
                "did not run",
            ),
            (&["tests/test_auth.py::test_login XFAIL"], "did not run"),
            (
                &["test_login (PENDING: Not yet implemented)"],
                "did not run",
            ),
            (
                &["tests/test_auth.py::test_login_is_not_written_yet PASSED"],
                "no evidence contains",
            ),
            (&["test test_login_page ... ok"], "no evidence contains"),
            (
                &[
                    "test_login[a] PASSED",
                    "FAILED test_login[b] - skipped before",
                ],
                "failed",
            ),
        ];
        for (rows, reason) in fails {
            let rows: Vec<Evidence> = rows.iter().copied().map(Evidence::line).collect();
            let verdict = judge(&plan, &rows);
            assert_eq!(verdict.verdict, PlanStatus::Fail, "{rows:?}");
            assert!(
                verdict.points[0].reason.contains(reason),
                "{rows:?}: {}",
                verdict.points[0].reason
            );
        }
    }
}
