//! The proof on the pull request end to end: what a shipped run sends GitHub as its verdict
//! (the check run `prpd / verdict` in GitHub's documented request shape, or a commit status for
//! a token that is not a GitHub App's; asserted for `ship_github.rs`'s scenarios), and what a
//! dry run writes without asking GitHub anything: `proof.json` and `proof.md` naming the `calc`
//! fixture's fail-to-pass test and saying the verdict was not published, and why; and the
//! hold-out test of an honest run, in the proof with its requirement and results.

use serde_json::{Value, json};

use crate::run::{PRP, calc_repo, prp, prpd_toml, run, run_dir};
use crate::ship_github::{
    Api, REPOSITORY, assert_token_only_in_authorization, body_of, github_repo, ship,
};
use crate::util::TestRepo;

/// The verdict went out as GitHub documents a check run — completed on the shipped commit,
/// with the proof as its output — before the pull request, whose body links it and says where
/// `proof.md` is.
pub(crate) fn assert_verdict_check_run(api: &Api, summary: &Value, shipped: &str, pull_body: &str) {
    let created = api.requests_to("POST", &format!("{REPOSITORY}/check-runs"));
    assert_eq!(created.len(), 1, "one check run");
    let check = body_of(&created[0]);
    let mut keys: Vec<&str> = check
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "completed_at",
            "conclusion",
            "head_sha",
            "name",
            "output",
            "status"
        ]
    );
    assert_eq!(check["name"], "prpd / verdict");
    assert_eq!(check["head_sha"], shipped);
    assert_eq!(check["status"], "completed");
    assert_eq!(check["conclusion"], "success");
    assert!(
        check["completed_at"]
            .as_str()
            .is_some_and(|at| at.len() == 20 && at.ends_with('Z')),
        "{check:#}"
    );
    let output = &check["output"];
    assert_eq!(
        output["title"],
        "APPROVE: 1 test(s) fail without the feature and pass with it"
    );
    assert!(
        output["summary"]
            .as_str()
            .is_some_and(|text| text.starts_with("- Fail-to-pass: holds")),
        "{output:#}"
    );
    let text = output["text"].as_str().expect("a text");
    for expected in [
        "## Fail-to-pass",
        "AC-1: multiply returns the product of two numbers | failed | passed |",
        "## Tests since the base",
        "## Checks",
        "| F2P |",
        "## Attempts",
        "| 1 | APPROVE | — |",
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }
    assert_eq!(
        summary["ship"]["verdict_published"],
        json!({ "as": "check_run", "html_url": "https://github.com/octocat/Hello-World/runs/4" })
    );
    for expected in [
        "## Proof",
        "published as a check run on the commit: https://github.com/octocat/Hello-World/runs/4",
        "proof.md",
    ] {
        assert!(
            pull_body.contains(expected),
            "no {expected:?} in:\n{pull_body}"
        );
    }
    let order: Vec<String> = api
        .requests()
        .iter()
        .filter(|request| request.method.as_str() == "POST")
        .map(|request| request.url.path().to_owned())
        .collect();
    assert_eq!(
        order[..2],
        [
            format!("{REPOSITORY}/check-runs"),
            format!("{REPOSITORY}/pulls")
        ],
        "the check run first, so the pull request can link it"
    );
}

/// The token is not a GitHub App's: the verdict went out as a commit status in the first SHIP,
/// which pr.md says with GitHub's reason, and was not published again on resume.
pub(crate) fn assert_verdict_went_out_once_as_a_commit_status(
    repo: &TestRepo,
    api: &Api,
    summary: &Value,
) {
    let published = &summary["ship"]["verdict_published"];
    assert_eq!(published["as"], "commit_status", "{summary:#}");
    assert!(
        published["why"]
            .as_str()
            .is_some_and(|why| why.contains("You must authenticate via a GitHub App")),
        "{published:#}"
    );
    let pr = std::fs::read_to_string(run_dir(repo.path(), summary).join("pr.md")).expect("pr.md");
    assert!(
        pr.contains("published as a commit status on the commit, not as a check run"),
        "{pr}"
    );
    assert!(
        api.requests_to("POST", &format!("{REPOSITORY}/check-runs"))
            .is_empty()
    );
}

/// A dry run with a token in the shell: nothing is asked of GitHub, and the proof is written
/// all the same — `proof.json` and `proof.md` name the fail-to-pass test, and say the verdict
/// was not published and why. Not an error: the run ships.
#[test]
fn a_dry_run_writes_the_proof_and_says_it_was_not_published() {
    let api = Api::start();
    let (repo, _remote_dir, _remote) = github_repo(&api, "");

    let (code, summary, output) = ship(&repo, &["run", "--dry-run", PRP]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{output}");
    assert_eq!(code, 0);
    assert!(api.requests().is_empty(), "{:#?}", api.requests());
    assert_eq!(
        summary["ship"]["verdict_published"],
        json!({ "as": "not_published", "why": "dry run (--dry-run)" })
    );

    let dir = run_dir(repo.path(), &summary);
    let proof: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("proof.json")).expect("proof.json"))
            .expect("JSON");
    assert_eq!(proof["version"], 1);
    assert_eq!(proof["verdict"], "APPROVE");
    assert_eq!(proof["commit"], summary["ship"]["commit"]);
    assert_eq!(proof["fail_to_pass"]["holds"], true, "{proof:#}");
    let tests = proof["fail_to_pass"]["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 1, "{proof:#}");
    assert!(
        tests[0]["name"]
            .as_str()
            .is_some_and(|name| name.contains("AC-1: multiply returns the product of two numbers")),
        "{proof:#}"
    );
    assert_eq!(tests[0]["without_feature"], "failed");
    assert_eq!(tests[0]["with_feature"], "passed");
    assert_eq!(proof["held_out"], json!([]));
    assert!(proof["harness"]["frozen_in_tree"].is_string(), "{proof:#}");
    let audit = &proof["test_audit"];
    assert_eq!(
        audit["files"],
        json!([{ "change": "added", "path": "test/multiply.test.js" }]),
        "{audit:#}"
    );
    assert!(
        audit["assertions"]["after"].as_u64() > audit["assertions"]["before"].as_u64(),
        "{audit:#}"
    );
    assert!(
        proof["checks"].as_array().is_some_and(|checks| checks
            .iter()
            .any(|check| check["id"] == "F2P" && check["outcome"] == "passed")),
        "{proof:#}"
    );

    let markdown = std::fs::read_to_string(dir.join("proof.md")).expect("proof.md");
    for expected in [
        "# Proof: Multiply numbers",
        "**`prpd / verdict`:** not published: dry run (--dry-run)",
        "AC-1: multiply returns the product of two numbers | failed | passed |",
    ] {
        assert!(
            markdown.contains(expected),
            "no {expected:?} in:\n{markdown}"
        );
    }
    let pr = std::fs::read_to_string(dir.join("pr.md")).expect("pr.md");
    assert!(
        pr.contains("## Proof") && pr.contains("not published: dry run (--dry-run)"),
        "{pr}"
    );
    assert_token_only_in_authorization(&repo, &api);
}

/// RED writes three tests for AC-1 and one is held out of GREEN's sight: the proof shows it
/// with its requirement, failing without the feature and passing with it.
#[test]
fn the_proof_shows_the_held_out_test_with_its_requirement_and_results() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("red", "many-tests")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);

    let dir = run_dir(repo.path(), &summary);
    let proof: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("proof.json")).expect("proof.json"))
            .expect("JSON");
    let held = proof["held_out"].as_array().expect("held-out results");
    assert_eq!(held.len(), 1, "{proof:#}");
    assert_eq!(held[0]["requirement"], "AC-1", "{proof:#}");
    assert_eq!(held[0]["without_feature"], "failed", "{proof:#}");
    assert_eq!(held[0]["with_feature"], "passed", "{proof:#}");
    let name = held[0]["name"].as_str().expect("a name");
    let markdown = std::fs::read_to_string(dir.join("proof.md")).expect("proof.md");
    assert!(
        markdown.contains(&format!("| {name} | AC-1 | failed | passed | yes |")),
        "{markdown}"
    );
    let pr = std::fs::read_to_string(dir.join("pr.md")).expect("pr.md");
    assert!(
        pr.contains("- Hold-out tests: 1 of 1 fail without the feature and pass with it"),
        "{pr}"
    );
}
