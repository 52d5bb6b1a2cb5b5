//! `prpd qa` end to end: real commands in fixture repositories, the verdict, the exit code and
//! the reports.

use crate::util::{TestRepo, check, qa_json};

/// The bundled example project copied into a fresh repository: tests, lint and docs all pass.
fn demo_repo() -> TestRepo {
    let repo = TestRepo::new();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    copy_dir(&demo, repo.path());
    repo.commit("demo project");
    repo
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).expect("read example dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_name() == ".prp-session" {
            continue;
        }
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A checklist with the given checks under `funcionalidade`.
fn checklist(items: &str) -> String {
    format!(
        "qa_checklist:\n  version: \"1.0.0\"\n  replace_builtin: true\n  funcionalidade:\n{items}"
    )
}

#[test]
fn demo_project_is_approved() {
    let repo = demo_repo();
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(report["verdict"], "APPROVE", "{report:#}");
    assert_eq!(code, 0);
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "pass");
    assert_eq!(tests["command"], "npm test");
    assert_eq!(tests["metrics"]["tests_passed"], 4.0);
    assert_eq!(report["blocking_failed"], 0);
}

#[test]
fn acceptance_criteria_of_the_prp_must_be_covered_by_tests() {
    let repo = demo_repo();
    repo.file(
        "PRPs/titles.md",
        "# Title case\n\n## Goal\n\nA `titleCase` helper.\n\n## Success Criteria\n\n- [ ] titles are capitalised\n\n\
         ## Acceptance Criteria\n\n- AC-1: each word starts with a capital\n- AC-2: small words stay lower case\n",
    );
    // A comment that quotes AC-2, and a skipped test named after it, cover nothing: only a
    // test that ran and passed carries an id.
    repo.file(
        "test/title.test.js",
        "import { test } from 'node:test';\n// AC-2: small words stay lower case\n\
         test('AC-1: capitals', () => {});\ntest.skip('AC-2: small words', () => {});\n",
    );
    let (code, report) = qa_json(&repo, &["--prp", "PRPs/titles.md"]);
    assert_eq!(code, 1);
    let coverage = check(&report, "F2");
    assert_eq!(coverage["status"], "fail");
    assert_eq!(coverage["metrics"]["criteria_coverage"], 50.0);
    assert!(
        coverage["detail"]
            .as_str()
            .expect("detail")
            .contains("AC-2"),
        "{coverage:#}"
    );

    repo.file(
        "test/title.test.js",
        "import { test } from 'node:test';\ntest('AC-1: capitals', () => {});\ntest('AC-2: small words', () => {});\n",
    );
    let (_, report) = qa_json(&repo, &["--prp", "PRPs/titles.md"]);
    assert_eq!(check(&report, "F2")["status"], "pass", "{report:#}");
}

#[test]
fn failing_test_is_rejected_with_its_output() {
    let repo = demo_repo();
    repo.file(
        "test/broken.test.js",
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\
         test('counts to three', () => { assert.equal(1 + 1, 3); });\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "REJECT");
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "fail");
    assert_eq!(tests["metrics"]["tests_failed"], 1.0);
    assert_eq!(
        tests["failing_tests"],
        serde_json::json!(["counts to three"])
    );
    assert!(
        tests["detail"]
            .as_str()
            .expect("detail")
            .contains("failing: counts to three"),
        "{tests:#}"
    );
}

#[test]
fn markdown_report_names_the_blocking_check() {
    let repo = demo_repo();
    repo.file("src/extra.js", "var answer = 42;\nexport default answer;\n");
    let output = repo.prpd().arg("qa").output().expect("run prpd");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("## Verdict: ❌ REJECTED"), "{stdout}");
    assert!(stdout.contains("**[C1]**"), "{stdout}");
    assert!(
        stdout.contains("use let or const instead of var"),
        "{stdout}"
    );
    assert!(
        stdout.contains("or this is `prpd qa` outside a run, which does not ask it"),
        "{stdout}"
    );
    assert!(stdout.contains("---PRP_PHASE_STATUS---"), "{stdout}");
    assert!(stdout.contains("VERDICT: REJECT"), "{stdout}");
    assert!(
        stdout.contains("Fix the 1 blocking issue above, then run `prpd qa` again."),
        "{stdout}"
    );
    assert!(!stdout.contains("attempts remaining"), "{stdout}");
}

#[test]
fn repository_without_a_test_command_is_rejected() {
    let repo = TestRepo::new();
    repo.file("README.md", "# notes\n\nJust some notes.\n")
        .commit("notes");
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1);
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "fail");
    assert!(
        tests["detail"]
            .as_str()
            .expect("detail")
            .contains("no test command found"),
        "{tests:#}"
    );
}

#[test]
fn test_command_that_runs_no_test_is_rejected() {
    let repo = demo_repo();
    std::fs::remove_dir_all(repo.join("test")).expect("remove tests");
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1);
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "fail");
    assert!(
        tests["detail"]
            .as_str()
            .expect("detail")
            .contains("ran no test"),
        "{tests:#}"
    );
}

#[test]
fn missing_tool_fails_a_blocking_check_and_skips_an_optional_one() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        &checklist(
            "    - id: T1\n      criterio: needs a tool\n      validacao: exit_code == 0\n      comando: prpd-no-such-tool --check\n      blocking: true\n\
             \x20   - id: T2\n      criterio: optional tool\n      validacao: exit_code == 0\n      comando: prpd-no-such-tool --check\n      blocking: true\n      optional: true\n",
        ),
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1);
    let required = check(&report, "T1");
    assert_eq!(required["status"], "fail");
    assert!(
        required["detail"]
            .as_str()
            .expect("detail")
            .contains("the tool is missing"),
        "{required:#}"
    );
    assert_eq!(check(&report, "T2")["status"], "skip");
}

#[test]
fn warning_check_does_not_block_approval() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        &checklist(
            "    - id: T1\n      criterio: passes\n      validacao: exit_code == 0\n      comando: \"true\"\n      blocking: true\n\
             \x20   - id: W1\n      criterio: fails, but only a warning\n      validacao: exit_code == 0\n      comando: \"false\"\n      blocking: false\n",
        ),
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(check(&report, "W1")["status"], "warn");
    assert_eq!(report["warnings"], 1);
}

#[test]
fn report_file_and_run_artifacts_are_written() {
    let repo = demo_repo();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let report_path = elsewhere.path().join("out/qa.md");
    repo.prpd()
        .args(["qa", "--report"])
        .arg(&report_path)
        .assert()
        .success();
    let report = std::fs::read_to_string(&report_path).expect("report written");
    assert!(report.contains("# QA VALIDATION REPORT"));
    let runs: Vec<_> = std::fs::read_dir(repo.join(".prp-session/runs"))
        .expect("runs dir")
        .collect();
    assert_eq!(runs.len(), 1);
    let run_dir = runs[0].as_ref().expect("entry").path();
    assert!(run_dir.join("qa-report.json").is_file());
    assert!(run_dir.join("checks/F1.log").is_file());
    let status_log =
        std::fs::read_to_string(repo.join(".prp-session/phase-status.log")).expect("log");
    assert!(status_log.contains("VERDICT: APPROVE"));
    let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).expect("exclude");
    assert!(exclude.contains("/.prp-session/"));
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "prpd dirtied the tree"
    );
}

#[test]
fn regression_test_command_that_dies_before_any_test_names_the_failure() {
    let repo = TestRepo::new();
    repo.file(
        "Makefile",
        "test:\n\t@echo 'ImportError while loading conftest'\n\t@exit 4\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1);
    let tests = check(&report, "F1");
    assert_eq!(tests["command"], "make test");
    let detail = tests["detail"].as_str().expect("detail");
    assert!(
        detail.contains("`make test` failed (exit 2) before reporting any test result"),
        "{detail}"
    );
    assert!(
        detail.contains("ImportError while loading conftest"),
        "{detail}"
    );
}

#[test]
fn tokens_in_prpds_environment_never_reach_check_output() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        &checklist(
            "    - id: E1\n      criterio: prints its environment\n      validacao: exit_code == 0\n      comando: env\n      blocking: true\n",
        ),
    );
    let secret = "ghp_prpd_test_secret_value_1234567890";
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .env("GITHUB_TOKEN", secret)
        .env("PRPD_VISIBLE_SETTING", "shown")
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains(secret), "the token reached the report");
    let logs = std::fs::read_dir(repo.join(".prp-session/runs"))
        .expect("runs")
        .flatten()
        .map(|run| run.path().join("checks/E1.log"))
        .map(|log| std::fs::read_to_string(log).expect("check log"))
        .collect::<String>();
    assert!(logs.contains("PRPD_VISIBLE_SETTING=shown"), "{logs}");
    assert!(!logs.contains(secret), "the token reached the check log");
}
