//! `[qa] junit = "<glob>"` end to end: the real binary runs a real test runner (Node's own, with
//! its `dot` reporter on the console, which prpd does not read, and its `junit` reporter into a
//! file) and takes the figures and names from the report that run wrote. A healthy project
//! APPROVEs, a failing one REJECTs with the failing test named, and a report the run did not
//! write — a stale one left from before, none at all, a broken one — fails the check by name.
//! The loop reads the same report: a run with that runner ships. Node's built-in `junit`
//! reporter needs Node 20 or later (the machine's Node is 20.x).

use serde_json::Value;

use crate::run::{calc_repo, prp, prpd_toml, run};
use crate::util::{TestRepo, check, qa_json};

/// Node's runner with the `dot` reporter on the console and the `junit` reporter into
/// `reports/junit.xml` (Node does not create the folder: the fixtures commit it).
const TEST_COMMAND: &str = "node --test --test-reporter=dot --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=reports/junit.xml";

/// A committed npm package whose `npm test` runs `test` (a command) and whose prpd.toml says
/// `config`; `second` is the body of its second test.
fn package(test: &str, config: &str, second: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        &format!(
            "{{\n  \"name\": \"pad\",\n  \"type\": \"module\",\n  \"scripts\": {{\n    \"test\": \"{test}\"\n  }}\n}}\n"
        ),
    )
    .file(
        "test/pad.test.js",
        &format!(
            "import {{ test }} from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
             test(\"trims\", () => assert.equal(\" a \".trim(), \"a\"));\n\
             test(\"pads\", () => {{ {second} }});\n"
        ),
    )
    .file("README.md", "# pad\n\nPads strings.\n")
    .file(".gitignore", "reports/*.xml\n")
    .file("reports/README", "Test reports land here.\n")
    .file("prpd.toml", config)
    .commit("pad");
    repo
}

const JUNIT: &str = "[qa]\njunit = \"reports/*.xml\"\n";
const PASSES: &str = "assert.equal(\"a\".padStart(3), \"  a\");";

fn detail(check: &Value) -> &str {
    check["detail"].as_str().expect("a detail")
}

#[test]
fn a_healthy_project_approves_from_its_junit_report() {
    let repo = package(TEST_COMMAND, JUNIT, PASSES);
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "pass", "{tests:#}");
    assert_eq!(tests["metrics"]["tests_passed"], 2);
    assert_eq!(tests["metrics"]["tests_failed"], 0);
    assert!(
        detail(tests)
            .contains("test figures from the JUnit report(s) this run wrote: reports/junit.xml"),
        "{tests:#}"
    );
    let log = tests["log"].as_str().expect("a log");
    let kept = std::path::Path::new(log).with_extension("junit");
    assert_eq!(
        std::fs::read_dir(&kept)
            .expect("the report is kept")
            .count(),
        1
    );

    let without = package(TEST_COMMAND, "", PASSES);
    let (code, report) = qa_json(&without, &[]);
    assert_eq!(code, 1, "the dot reporter alone counts nothing: {report:#}");
    assert!(
        detail(check(&report, "F1"))
            .contains("or name the JUnit report it writes in prpd.toml `[qa] junit`"),
        "{report:#}"
    );
}

#[test]
fn a_failing_project_rejects_with_the_failing_test_named_from_the_report() {
    let repo = package(
        TEST_COMMAND,
        JUNIT,
        "assert.equal(\"a\".padStart(3), \"a\");",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1, "{report:#}");
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "fail");
    assert_eq!(tests["metrics"]["tests_passed"], 1);
    assert_eq!(tests["metrics"]["tests_failed"], 1);
    assert_eq!(tests["failing_tests"], serde_json::json!(["test.pads"]));
    assert!(detail(tests).contains("failing: test.pads"), "{tests:#}");
}

#[test]
fn a_stale_report_from_before_the_run_is_not_read() {
    let stale = "<testsuites><testcase classname=\"test\" name=\"trims\"/>\
                 <testcase classname=\"test\" name=\"pads\"/></testsuites>\n";
    let repo = package("node --test --test-reporter=dot", JUNIT, PASSES);
    repo.file("reports/junit.xml", stale);
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1, "the tests pass, but no report says so: {report:#}");
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "fail");
    assert_eq!(tests["exit_code"], 0);
    let detail = detail(tests);
    assert!(
        detail.starts_with("no JUnit report written by this run: `[qa] junit = \"reports/*.xml\"` matched no file the test command wrote (1 older file(s) it matches were left by an earlier run and are not read)"),
        "{detail}"
    );
    assert!(tests["metrics"].get("tests_passed").is_none(), "{tests:#}");
    assert!(
        tests["output_tail"].as_str().expect("tail").contains(".."),
        "the console output is still shown: {tests:#}"
    );
}

#[test]
fn a_malformed_report_fails_the_check_and_names_the_file() {
    let repo = package(
        "node --test --test-reporter=dot && mkdir -p reports && echo '<testsuites><testcase' > reports/junit.xml",
        JUNIT,
        PASSES,
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1, "{report:#}");
    let detail = detail(check(&report, "F1"));
    assert!(
        detail.starts_with("the JUnit report reports/junit.xml written by this run is malformed: it is not well-formed XML"),
        "{detail}"
    );
}

#[test]
fn a_junit_glob_outside_the_repository_is_a_configuration_error() {
    let repo = package(TEST_COMMAND, "[qa]\njunit = \"../reports/*.xml\"\n", PASSES);
    let output = repo.prpd().arg("qa").output().expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("prpd.toml:2:"), "{stderr}");
    assert!(
        stderr.contains("must be a glob relative to the repository root"),
        "{stderr}"
    );
}

#[test]
fn the_loop_reads_the_junit_report_of_its_own_test_runs() {
    let config = prpd_toml("plain", &[], "[qa]\njunit = \"reports/*.xml\"\n");
    let repo = calc_repo(&prp(""), &config);
    let package = std::fs::read_to_string(repo.join("package.json")).expect("package.json");
    repo.file(
        "package.json",
        &package.replace(
            "\"test\": \"node --test\"",
            &format!("\"test\": \"{TEST_COMMAND}\""),
        ),
    )
    .file(".gitignore", "reports/*.xml\n")
    .file("reports/README", "Test reports land here.\n")
    .commit("dot on the console, JUnit in reports/");
    let (code, summary) = run(&repo);
    assert_eq!(code, 0, "{summary:#}");
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    let run_dir = crate::run::run_dir(repo.path(), &summary);
    let kept = walk(&run_dir)
        .into_iter()
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "junit")
        })
        .count();
    assert!(kept >= 3, "RED, GREEN and QA kept their reports: {kept}");
    let mut reports: Vec<_> = walk(&run_dir)
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == "qa-report.md"))
        .collect();
    reports.sort();
    let report = std::fs::read_to_string(reports.last().expect("a QA report")).expect("read");
    assert!(
        report.contains("test figures from the JUnit report(s) this run wrote"),
        "{report}"
    );
    assert!(
        report.contains("fail without the feature and pass with it")
            && !report.contains("judged by counts"),
        "the proof compares the tests the reports name: {report}"
    );
}

/// Every path under `root`.
fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}
