//! Flaky tests end to end (issue 28, part 3): a test that fails on odd runs — its counter lives
//! outside the tree, so every run is on the same tree — must not cost an honest run anything,
//! must be named and quarantined, and must never prove a feature: not when RED's test is flaky
//! without the feature, and not when a GREEN agent makes RED's test pass every second run.

use std::path::Path;

use serde_json::Value;

use crate::run::{PRP, calc_repo, measured, prp, prpd_fails, prpd_toml, run, run_dir};

/// A test of the `calc` fixture that fails on odd runs: it counts its runs in `counter`.
fn clock_test(counter: &Path) -> String {
    let file = serde_json::to_string(&counter.display().to_string()).expect("a JSON string");
    format!(
        "import {{ test }} from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
         import {{ existsSync, readFileSync, writeFileSync }} from \"node:fs\";\n\n\
         test(\"the clock settles\", () => {{\n  \
           const run = (existsSync({file}) ? Number(readFileSync({file}, \"utf8\")) : 0) + 1;\n  \
           writeFileSync({file}, String(run));\n  \
           assert.ok(run % 2 === 0, `run ${{run}} is odd`);\n}});\n"
    )
}

/// No breaker opened and no iteration was counted as the same error.
fn assert_no_breaker_opened(repo: &Path, summary: &Value) {
    for (phase, breaker) in summary["breakers"].as_object().expect("breakers") {
        assert_ne!(breaker["state"], "OPEN", "{phase}: {summary:#}");
    }
    for phase in ["green", "refactor", "qa"] {
        for iteration in measured(repo, summary, phase) {
            assert_ne!(iteration["class"], "SameError", "{iteration:#}");
        }
    }
}

#[test]
fn an_honest_run_with_a_flaky_test_ships_names_it_and_quarantines_it() {
    let counter = tempfile::tempdir().expect("a directory outside the tree");
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(
        "test/clock.test.js",
        &clock_test(&counter.path().join("runs")),
    )
    .commit("a flaky test");

    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_no_breaker_opened(repo.path(), &summary);
    assert!(
        summary["flaky"]["the clock settles"]["tree"].is_string(),
        "the summary names the flaky test: {summary:#}"
    );

    let run = run_dir(repo.path(), &summary);
    let reports = walk(&run, "qa-report.md");
    let report = std::fs::read_to_string(reports.last().expect("a QA report")).expect("readable");
    assert!(
        report.contains("FLAKY") && report.contains("`the clock settles`"),
        "the QA report names the flaky test:\n{report}"
    );
    let proof = std::fs::read_to_string(run.join("proof.md")).expect("proof.md");
    assert!(
        !proof.contains("could not decide"),
        "RED's test, not the flaky one, proves the feature:\n{proof}"
    );

    let list = std::fs::read_to_string(repo.join(".prpd/flaky.toml")).expect("the list");
    assert!(
        list.contains("[[test]]\nname = \"the clock settles\"\nfirst_seen = \""),
        "{list}"
    );
    assert!(list.contains("passes = 0"), "{list}");
    let runs: u32 = std::fs::read_to_string(counter.path().join("runs"))
        .expect("the counter")
        .trim()
        .parse()
        .expect("a count");
    assert!(runs >= 3, "the flaky test ran {runs} times");
}

#[test]
fn a_red_test_that_is_flaky_without_the_feature_proves_nothing() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("red", "flaky-red")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "{summary:#}");
    let gates = gate_reasons(repo.path(), &summary, "green");
    assert!(
        gates.contains("could not decide whether the tests test the feature")
            && gates.contains("`AC-1: multiply returns the product of two numbers` failed and passed on the same tree (flaky)"),
        "{gates}"
    );
}

#[test]
fn a_green_agent_that_makes_reds_test_pass_every_second_run_does_not_ship() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[("green", "cheat-flaky")], ""),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "{summary:#}");
    let gates = gate_reasons(repo.path(), &summary, "green");
    assert!(
        gates.contains("1 of RED's tests failed and passed on one tree with the feature (`AC-1: multiply returns the product of two numbers`): each of RED's tests must pass every time with it"),
        "{gates}"
    );
    // The quarantine list is written where the run can be resumed only when it ships: this run
    // works in place and escalated.
    assert!(!repo.join(".prpd/flaky.toml").exists());
}

/// The review's case: of RED's three tests two pass every time and one flips, because GREEN's
/// code is right for its input only on every second call. The passing two must not carry the
/// proof while the flipping one is excused as flaky.
#[test]
fn one_of_reds_tests_flipping_with_the_feature_does_not_ship_on_the_others() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml(
            "plain",
            &[("red", "many-tests"), ("green", "cheat-flaky-one")],
            "[run]\nholdout = 0\n",
        ),
    );
    let (code, summary) = run(&repo);
    assert_ne!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 3, "{summary:#}");
    let gates = gate_reasons(repo.path(), &summary, "green");
    assert!(
        gates.contains("1 of RED's tests failed and passed on one tree with the feature (`AC-1: multiply of two negative factors is positive`)"),
        "{gates}"
    );
}

#[test]
fn a_wrong_quarantine_list_stops_the_run_naming_its_line() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(
        ".prpd/flaky.toml",
        "[[test]]\nname = \"the clock settles\"\nfirst_seen = \"2025-03-01\"\nexpires = \"soon\"\n",
    )
    .commit("a quarantine list");
    let stderr = prpd_fails(&repo, &["run", "--in-place", PRP], 2);
    assert!(
        stderr.contains(".prpd/flaky.toml:4:11: `expires = \"soon\"` of test `the clock settles` is not a date; expected YYYY-MM-DD"),
        "{stderr}"
    );
}

/// Every gate-1 reason of `phase`'s iterations, one per line.
fn gate_reasons(repo: &Path, summary: &Value, phase: &str) -> String {
    measured(repo, summary, phase)
        .iter()
        .flat_map(|iteration| iteration["gate_1"].as_array().cloned().unwrap_or_default())
        .filter_map(|reason| reason.as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file named `name` under `dir`, sorted.
fn walk(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path, name));
        } else if path.file_name().is_some_and(|file| file == name) {
            found.push(path);
        }
    }
    found.sort();
    found
}
