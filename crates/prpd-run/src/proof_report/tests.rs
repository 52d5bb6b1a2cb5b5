//! The proof as a reviewer reads it (`proof.md`, an insta snapshot) and as a program does
//! (`proof.json`'s field names), built from plain data.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;
use crate::cache::CacheKey;
use crate::proof::tests::run;
use crate::proof::{TestFiles, WithoutFeature, judge};

const AC1: &str = "test/multiply.test.js > AC-1: multiply returns the product of two numbers";
const AC2: &str = "test/multiply.test.js > AC-2: multiply by zero is zero";
const ADDS: &str = "test/calc.test.js > adds";

#[expect(clippy::too_many_lines, reason = "one report, every section filled")]
fn report(published: Publication) -> ProofReport {
    let without = WithoutFeature {
        key: CacheKey {
            tree: "t".to_owned(),
            command: "npm test".to_owned(),
            settings: "s".to_owned(),
        },
        run: run(
            1,
            &[
                (AC1, Outcome::Failed),
                (AC2, Outcome::Failed),
                (ADDS, Outcome::Passed),
            ],
        ),
        log: PathBuf::from("tests-without-feature.log"),
        flaky: BTreeSet::new(),
    };
    let with = run(
        0,
        &[
            (AC1, Outcome::Passed),
            (AC2, Outcome::Passed),
            (ADDS, Outcome::Passed),
        ],
    );
    let mut files = TestFiles::default();
    files.red.insert(PathBuf::from("test/multiply.test.js"));
    files.other.insert(PathBuf::from("test/calc.test.js"));
    let proof = judge(&without, &with, &files, &BTreeSet::new(), &BTreeSet::new());
    let runs = Runs {
        without_feature: &without.run,
        with_feature: &with,
    };
    let prp = prpd_prp::parse(
        Path::new("PRPs/multiply.md"),
        "# Multiply numbers\n\n## Acceptance Criteria\n\n- AC-1: `multiply(a, b)` returns the product.\n- AC-2: `multiply` of any number and zero is zero.\n",
    )
    .expect("a PRP");
    let held_out: BTreeSet<String> = [AC2.to_owned()].into();
    ProofReport {
        version: PROOF_VERSION,
        run_id: "20260101-120000-multiply".to_owned(),
        prp: PathBuf::from("PRPs/multiply.md"),
        feature: "Multiply numbers".to_owned(),
        commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
        verdict: Some(QaVerdict::Approve),
        fail_to_pass: FailToPass::new(Some(&proof), Some(runs), "unused"),
        held_out: held_out_results(&held_out, Some(runs), &prp.requirements),
        harness: Some(Harness {
            frozen_in_commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".to_owned(),
            frozen_in_tree: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb".to_owned(),
            files: 3,
            without_feature_tree: Some("cccccccccccccccccccccccccccccccccccccccc".to_owned()),
        }),
        test_audit: TestAudit::new(
            vec![
                TestFileChange {
                    change: FileChange::Added,
                    path: PathBuf::from("test/multiply.test.js"),
                    from: None,
                },
                TestFileChange {
                    change: FileChange::Renamed,
                    path: PathBuf::from("test/calc.test.js"),
                    from: Some(PathBuf::from("test/add.test.js")),
                },
            ],
            TextCounts {
                assertions: 1,
                skip_markers: 0,
                xfail_markers: 0,
            },
            TextCounts {
                assertions: 3,
                skip_markers: 0,
                xfail_markers: 0,
            },
            Some(runs),
        ),
        checks: vec![
            CheckLine {
                id: "F1".to_owned(),
                criterion: "100% of the tests pass".to_owned(),
                outcome: CheckOutcome::Passed,
                detail: "3 passed".to_owned(),
            },
            CheckLine {
                id: "F2P".to_owned(),
                criterion: "The tests fail without the feature and pass with it (fail-to-pass)"
                    .to_owned(),
                outcome: CheckOutcome::Passed,
                detail: proof.summary(),
            },
        ],
        attempts: vec![
            Attempt {
                attempt: 1,
                verdict: QaVerdict::Reject,
                reasons: vec![
                    "F1: 1 failing test".to_owned(),
                    "AC-2 | multiply(6, 0): expected 0, got 6".to_owned(),
                ],
            },
            Attempt {
                attempt: 2,
                verdict: QaVerdict::Approve,
                reasons: Vec::new(),
            },
        ],
        published,
    }
}

#[test]
fn proof_md() {
    let report = report(Publication::CheckRun {
        html_url: "https://github.com/acme/calc/runs/4".to_owned(),
    });
    insta::assert_snapshot!("proof_md", render(&report, Rendering::File));
}

#[test]
fn the_check_runs_text_is_the_proof_without_the_publication_line() {
    let report = report(Publication::NotPublished {
        why: "dry run (--dry-run)".to_owned(),
    });
    let file = render(&report, Rendering::File);
    let text = render(&report, Rendering::CheckRun);
    assert!(file.contains("**`prpd / verdict`:** not published: dry run (--dry-run)"));
    assert!(!text.contains("prpd / verdict"), "{text}");
    assert_eq!(
        file.replace(
            "**`prpd / verdict`:** not published: dry run (--dry-run)\n\n",
            ""
        ),
        text
    );
}

#[test]
fn the_title_and_the_pull_requests_section_say_the_proof_in_a_few_lines() {
    let report = report(Publication::CommitStatus {
        why: "GitHub creates check runs only for a GitHub App".to_owned(),
    });
    assert_eq!(
        verdict_title(&report),
        "APPROVE: 2 test(s) fail without the feature and pass with it; 1 of 1 hold-out test(s) hold"
    );
    assert!(report.passes());
    let mut failing_hold_out = report.clone();
    failing_hold_out.held_out[0].with_feature = Some(Outcome::Failed);
    assert!(
        !failing_hold_out.passes(),
        "a hold-out test that fails is no pass on GitHub"
    );
    let section = pull_request_section(&report, Path::new(".prp-session/runs/r/proof.md"));
    for expected in [
        "## Proof\n\n**`prpd / verdict`:** published as a commit status on the commit, not as a check run: GitHub creates check runs only for a GitHub App",
        "- Fail-to-pass: holds (`test/multiply.test.js > AC-1: multiply returns the product of two numbers`, ",
        "- Hold-out tests: 1 of 1 fail without the feature and pass with it",
        "- Tests since the base: 1 test file(s) added, 0 deleted, 1 renamed; assertions 1 → 3",
        "- QA: 2 verdict(s), 1 REJECT(s); 2 check(s) on the last",
        "`.prp-session/runs/r/proof.md` and `proof.json` beside it",
    ] {
        assert!(section.contains(expected), "no {expected:?} in:\n{section}");
    }
}

#[test]
fn a_run_with_nothing_to_compare_says_the_proof_does_not_hold_and_why() {
    let fail_to_pass = FailToPass::new(None, None, "no test harness froze");
    assert!(!fail_to_pass.holds);
    assert_eq!(fail_to_pass.judged, Judged::NotJudged);
    let mut report = report(Publication::NotPublished {
        why: "no token in $GITHUB_TOKEN".to_owned(),
    });
    report.fail_to_pass = fail_to_pass;
    report.held_out.clear();
    assert_eq!(
        verdict_title(&report),
        "APPROVE: the fail-to-pass proof does not hold"
    );
    assert!(
        !report.passes(),
        "a proof that does not hold is no pass on GitHub"
    );
    let text = render(&report, Rendering::File);
    assert!(
        text.contains("**The proof does not hold.**\n\n- no test harness froze\n"),
        "{text}"
    );
    assert!(text.contains("No test was held out of GREEN's sight in this run."));
}

#[test]
fn proof_json_keeps_its_field_names() {
    let report = report(Publication::CheckRun {
        html_url: "https://github.com/acme/calc/runs/4".to_owned(),
    });
    let json = serde_json::to_value(&report).expect("JSON");
    let mut keys: Vec<&str> = json
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "attempts",
            "checks",
            "commit",
            "fail_to_pass",
            "feature",
            "harness",
            "held_out",
            "prp",
            "published",
            "run_id",
            "test_audit",
            "verdict",
            "version"
        ]
    );
    assert_eq!(json["fail_to_pass"]["tests"][0]["name"], AC1);
    assert_eq!(
        json["fail_to_pass"]["tests"][0]["without_feature"],
        "failed"
    );
    assert_eq!(json["fail_to_pass"]["tests"][0]["with_feature"], "passed");
    assert_eq!(json["held_out"][0]["requirement"], "AC-2");
    assert_eq!(json["published"]["as"], "check_run");
    assert_eq!(json["verdict"], "APPROVE");
    assert_eq!(json["test_audit"]["files"][1]["from"], "test/add.test.js");
}

#[test]
fn a_test_file_that_could_not_load_without_the_feature_shows_how_it_failed() {
    let without = run(1, &[("test/ac2.test.js", Outcome::Failed)]);
    let with = run(0, &[("AC-2: averages", Outcome::Passed)]);
    let runs = Runs {
        without_feature: &without,
        with_feature: &with,
    };
    let proof = crate::proof::Proof {
        fail_to_pass: vec!["test/ac2.test.js (failed before its tests could run)".to_owned()],
        ..crate::proof::Proof::default()
    };
    let fail_to_pass = FailToPass::new(Some(&proof), Some(runs), "unused");
    assert_eq!(
        fail_to_pass.tests,
        [TestOutcomes {
            name: "test/ac2.test.js (failed before its tests could run)".to_owned(),
            without_feature: Some(Outcome::Failed),
            with_feature: None,
        }]
    );
}
