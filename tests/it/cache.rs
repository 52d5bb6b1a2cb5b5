//! One test run per tree: a QA agent that changes nothing and does not sign off makes prpd run
//! QA again on the same tree. The second QA iteration must read the first one's test run
//! instead of running the suite again, and its report must say so; an honest run, where every
//! tree differs, runs the suite each time.

use crate::run::{calc_repo, prp, prpd_toml, read, run, run_dir};

/// The QA iteration folders of a run, in order.
fn qa_iterations(run: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(run.join("iterations"))
        .expect("iterations directory")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.to_string_lossy().contains("-qa-"))
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn qa_on_a_tree_already_measured_reads_the_earlier_test_run() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("qa", "idle")], ""));
    let (_, summary) = run(&repo);
    let run = run_dir(repo.path(), &summary);
    let qa = qa_iterations(&run);
    assert!(qa.len() >= 2, "QA ran again on the same tree: {summary:#}");
    assert!(
        qa[0].join("checks/F1.log").is_file(),
        "the first QA iteration ran the tests"
    );
    assert!(
        !qa[1].join("checks/F1.log").exists(),
        "the second QA iteration on the same tree ran the tests again"
    );
    let report = read(&qa[1].join("qa-report.md"));
    assert!(
        report.contains("not run again: the same tree was measured in QA iteration 1"),
        "{report}"
    );
}

#[test]
fn an_honest_run_measures_each_new_tree() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let run = run_dir(repo.path(), &summary);
    let qa = qa_iterations(&run);
    let report = read(&qa[0].join("qa-report.md"));
    assert!(
        qa[0].join("checks/F1.log").is_file() && !report.contains("not run again"),
        "QA's tree differs from every tree measured before it (DOCUMENT changed it):\n{report}"
    );
}
