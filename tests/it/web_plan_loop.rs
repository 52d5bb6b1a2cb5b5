//! Web planning in the loop: with `[plan]` in prpd.toml, a run of the `calc` fixture (honest
//! fixture agents) plans the README's example app before RED, RED's prompt carries the specs of
//! the page the PRP names and no other, and each QA report lists the plan's cases with the
//! tests that name them. An app that cannot be reached is said, and the run still ships.

use std::path::Path;

use serde_json::Value;

use crate::example_site::{ExampleSite, free_port};
use crate::memory_loop::last_qa_report;
use crate::run::{calc_repo, prp, prpd_toml, read, run, run_dir};

/// The PRP of `run.rs`, now about the app's sign-up page too.
fn prp_naming_signup() -> String {
    format!(
        "{}\nThe result is shown on the Sign up page's age check.\n",
        prp("")
    )
}

fn first_prompt(run: &Path, phase: &str) -> String {
    let mut dirs: Vec<_> = std::fs::read_dir(run.join("iterations"))
        .expect("iterations")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.split('-').nth(1) == Some(phase))
        })
        .collect();
    dirs.sort();
    read(&dirs[0].join("prompt.md"))
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn red_gets_the_specs_of_the_page_the_prp_names_and_qa_lists_the_cases() {
    let site = ExampleSite::serve();
    let config = prpd_toml(
        "plain",
        &[],
        &format!("[plan]\nbase_url = \"{}\"\nmax_depth = 3\n", site.url()),
    );
    let repo = calc_repo(&prp_naming_signup(), &config);
    let (code, summary) = run(&repo);
    assert_eq!(code, 0, "{summary}");
    let run = run_dir(repo.path(), &summary);
    let graph: Value =
        serde_json::from_str(&read(&run.join("web/plan-explore/graph.json"))).expect("graph");
    assert_eq!(graph["pages"].as_array().map(Vec::len), Some(7), "{graph}");
    assert!(
        run.join("web/plan/specs/form-p1-form-signup-1.md")
            .is_file()
    );

    let red = first_prompt(&run, "red");
    assert!(red.contains("## The web app's test plan"), "{red}");
    assert!(red.contains("names these pages: `signup`"), "{red}");
    assert!(red.contains("### Submit form 1 on Sign up"), "{red}");
    assert!(
        red.contains("with \"121\""),
        "the boundary values reach RED:\n{red}"
    );
    assert!(
        !red.contains("Sign in on Log in"),
        "only the named page's specs:\n{red}"
    );
    let green = first_prompt(&run, "green");
    assert!(!green.contains("The web app's test plan"), "RED's alone");

    let report = last_qa_report(repo.path(), &summary);
    assert!(report.contains("## Web Test Plan"), "{report}");
    assert!(report.contains("0 of 11 cases have a test."), "{report}");
    assert!(
        report.contains(
            "| form-signup-1: Submit form 1 on Sign up | form | p1 | signup | yes | none |"
        ),
        "{report}"
    );
    assert!(
        report.contains("| nav-about: Navigate to About | navigation | p1 | about | no | none |"),
        "{report}"
    );
    drop(site);
}

#[test]
fn an_app_that_cannot_be_reached_is_said_and_the_run_still_ships() {
    let port = free_port();
    let config = prpd_toml(
        "plain",
        &[],
        &format!("[plan]\nbase_url = \"http://127.0.0.1:{port}/\"\n"),
    );
    let repo = calc_repo(&prp_naming_signup(), &config);
    let (code, summary) = run(&repo);
    assert_eq!(code, 0, "the plan advises, it never blocks: {summary}");
    let run = run_dir(repo.path(), &summary);
    let red = first_prompt(&run, "red");
    assert!(
        red.contains(&format!("prpd could not explore http://127.0.0.1:{port}/")),
        "{red}"
    );
    let report = last_qa_report(repo.path(), &summary);
    assert!(
        report.contains("No web test plan for this run: prpd could not explore"),
        "{report}"
    );
    assert!(read(&run.join("web/plan-explore/transcript.jsonl")).contains("\"walk\""));
}
