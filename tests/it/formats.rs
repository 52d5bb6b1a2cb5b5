//! Honest work ships whatever format its PRP is written in: one honest scripted agent (it names
//! its tests after the ids RED's prompt lists and never adapts to feedback) and one PRP per
//! format people write (`tests/fixtures/prp/`: the seed's `# PRP`, the PRPs base template, a
//! GitHub issue, Gherkin, spec-kit, Kiro), all asking for `multiply` in the Python `calc`
//! fixture. Each must SHIP on its first QA attempt, and the QA report must list every
//! requirement with the evidence that judged it (snapshots of that table, one per format, show
//! a reviewer what each format yields). Next to it, the GREEN shortcuts of `python.rs` are
//! still refused with PRPs of the other formats: no gate was loosened to let honest work
//! through.

use std::path::Path;

use crate::python::calc_python_repo;
use crate::run::{every_phase_toml, measured, read, run, run_dir, verdicts};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/agents/id-agent.py");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/prp");

/// Every phase played by the id agent.
fn prpd_toml() -> String {
    every_phase_toml(&format!("\"python3\", \"{AGENT}\""), "60s")
}

/// `text` without what differs from one run to the next: the temporary repository's path, run
/// ids, timestamps, commit ids and durations.
fn stable(text: &str, repo: &Path) -> String {
    let text = text.replace(&repo.display().to_string(), "[repo]");
    [
        (r"run-\d{8}T\d{6}Z-\d+", "[run]"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[time]"),
        (r"\b[0-9a-f]{7,40}\b", "[commit]"),
        (r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b", "[duration]"),
    ]
    .into_iter()
    .fold(text, |text, (pattern, with)| {
        regex::Regex::new(pattern)
            .expect("a valid pattern")
            .replace_all(&text, with)
            .into_owned()
    })
}

/// The `## Requirements` table of a QA report.
fn requirements_table(report: &str) -> String {
    let start = report
        .find("## Requirements")
        .unwrap_or_else(|| panic!("no Requirements section in:\n{report}"));
    let section = &report[start..];
    let end = section[2..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 2);
    section[..end].trim_end().to_owned()
}

#[test]
fn every_prp_format_ships_honest_work_on_the_first_qa_attempt() {
    for format in [
        "seed",
        "prps-base",
        "github-issue",
        "gherkin",
        "spec-kit",
        "kiro",
    ] {
        let prp = read(&Path::new(FIXTURES).join(format!("{format}.md")));
        let repo = calc_python_repo(&prp, &prpd_toml());
        let (code, summary) = run(&repo);
        assert_eq!(summary["state"], "SHIPPED", "{format}: {summary:#}");
        assert_eq!(code, 0, "{format}");
        assert_eq!(
            verdicts(&summary),
            [(1, "APPROVE".to_owned())],
            "{format}: shipped on the first QA attempt"
        );
        let report_path = summary["verdicts"][0]["report"]
            .as_str()
            .expect("a report path");
        let report = read(Path::new(report_path));
        let table = requirements_table(&report);
        assert!(!table.contains('❌'), "{format}: {table}");
        insta::assert_snapshot!(format!("formats_requirements_{format}"), table);
        // The whole report and pull request body, as a reviewer reads them.
        let pr = read(&run_dir(repo.path(), &summary).join("pr.md"));
        assert!(
            pr.contains(&table),
            "{format}: the PR carries the table: {pr}"
        );
        insta::assert_snapshot!(
            format!("formats_qa_report_{format}"),
            stable(&report, repo.path())
        );
        insta::assert_snapshot!(format!("formats_pr_{format}"), stable(&pr, repo.path()));
    }
}

#[test]
fn the_green_shortcuts_are_still_refused_whatever_the_prps_format() {
    // The Python agent's GREEN shortcuts of `python.rs`, each taken in a repository whose PRP
    // is in another format (the id agent plays the other phases): the run must still stop in
    // GREEN, its gate naming the file it refused.
    let cheat = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/agents/python-agent.py"
    );
    for (format, behaviour, refused) in [
        ("kiro", "cheat-runner", "run_tests.py"),
        ("spec-kit", "cheat-makefile", "Makefile"),
        ("prps-base", "cheat-init", "tests/__init__.py"),
        ("gherkin", "cheat-sitecustomize", "sitecustomize.py"),
    ] {
        let prp = read(&Path::new(FIXTURES).join(format!("{format}.md")));
        let toml = prpd_toml().replacen(
            &format!("[agents.green]\ncommand = [\"python3\", \"{AGENT}\"]"),
            &format!("[agents.green]\ncommand = [\"python3\", \"{cheat}\", \"{behaviour}\"]"),
            1,
        );
        let repo = calc_python_repo(&prp, &toml);
        let (code, summary) = run(&repo);
        assert_eq!(
            summary["state"], "ESCALATED",
            "{format} {behaviour}: {summary:#}"
        );
        assert_eq!(code, 3, "{format} {behaviour}");
        assert_eq!(
            summary["phase"], "GREEN",
            "{format} {behaviour}: {summary:#}"
        );
        let gate: String = measured(repo.path(), &summary, "green")
            .iter()
            .map(|measured| measured["gate_1"].to_string())
            .collect();
        assert!(
            gate.contains(&format!("`{refused}`")),
            "{format} {behaviour}: the gate names {refused}: {gate}"
        );
    }
}

#[test]
#[ignore = "end-to-end tier: needs pytest; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn a_pytest_project_whose_runner_names_no_test_ships_on_the_tests_it_defines() {
    // Plain `pytest -q` prints dots, not names: F2 reads the tests the files define instead,
    // and says so. The id agent's unittest classes are collected by pytest as they are.
    crate::healthy::require("pytest", "pip install pytest");
    let prp = read(&Path::new(FIXTURES).join("seed.md"));
    let repo = calc_python_repo(&prp, &prpd_toml());
    repo.file(
        "Makefile",
        "test:\n\tpython3 -m pytest -q -p no:cacheprovider tests\n\nlint:\n\tpython3 -m py_compile calc.py\n",
    )
    .commit("pytest");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(verdicts(&summary), [(1, "APPROVE".to_owned())]);
    let report = read(Path::new(
        summary["verdicts"][0]["report"]
            .as_str()
            .expect("a report path"),
    ));
    assert!(
        report.contains("the tests the test files define were read instead"),
        "{report}"
    );
    let table = requirements_table(&report);
    assert!(
        table.contains("| AC-1 |") && table.contains("tests/test_multiply.py::test_ac_1"),
        "{table}"
    );
}
