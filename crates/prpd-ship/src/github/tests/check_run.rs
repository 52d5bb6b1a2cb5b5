//! The verdict on the shipped commit against the mock API: the check run's documented request
//! shape, the fall back to a commit status when the token is not a GitHub App's, and a token
//! that may create neither.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{TOKEN, authorized, client, fixture, requests_to, route, token_only_in_authorization};
use crate::github::{GitHubError, Published, VerdictCheck};

const SHA: &str = "ce587453ced02b1526dfb4cb910479d431683101";

fn verdict(text: &str) -> VerdictCheck {
    VerdictCheck {
        sha: SHA.to_owned(),
        passed: true,
        title: "APPROVE: 1 test fails without the feature and passes with it".to_owned(),
        summary: "Verdict: APPROVE on attempt 1.".to_owned(),
        text: text.to_owned(),
        completed_at: UNIX_EPOCH + Duration::from_secs(1_525_396_492),
    }
}

fn forbidden_check_runs() -> ResponseTemplate {
    ResponseTemplate::new(403).set_body_json(fixture("error-403-check-runs.json"))
}

#[tokio::test]
async fn the_verdict_is_a_completed_check_run_with_the_proof_as_its_output() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("check-runs")))
        .and(authorized())
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("check-run.json")))
        .expect(1)
        .mount(&server)
        .await;

    let published = client(&server)
        .publish_verdict(&verdict(&format!("# Proof\n\nno {TOKEN} here")))
        .await
        .expect("published");

    assert_eq!(
        published,
        Published::CheckRun {
            html_url: "https://github.com/octocat/Hello-World/runs/4".to_owned()
        }
    );
    let sent = requests_to(&server, &route("check-runs")).await;
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    assert_eq!(
        body,
        json!({
            "name": "prpd / verdict",
            "head_sha": SHA,
            "status": "completed",
            "conclusion": "success",
            "completed_at": "2018-05-04T01:14:52Z",
            "output": {
                "title": "APPROVE: 1 test fails without the feature and passes with it",
                "summary": "Verdict: APPROVE on attempt 1.",
                "text": "# Proof\n\nno [redacted] here",
            },
        })
    );
    token_only_in_authorization(&server).await;
}

#[tokio::test]
async fn a_long_proof_is_cut_to_the_65535_characters_a_check_run_takes() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("check-runs")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("check-run.json")))
        .mount(&server)
        .await;
    client(&server)
        .publish_verdict(&verdict(&"| row |\n".repeat(20_000)))
        .await
        .expect("published");
    let sent = requests_to(&server, &route("check-runs")).await;
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    let text = body["output"]["text"].as_str().expect("text");
    assert_eq!(text.chars().count(), 65_535);
    assert!(
        text.ends_with("under `.prp-session/runs/`)"),
        "{}",
        &text[text.len() - 120..]
    );
}

#[tokio::test]
async fn a_token_that_is_not_a_github_apps_gets_a_commit_status_and_says_why() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("check-runs")))
        .and(authorized())
        .respond_with(forbidden_check_runs())
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route(&format!("statuses/{SHA}"))))
        .and(authorized())
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("commit-status.json")))
        .expect(1)
        .mount(&server)
        .await;

    let mut check = verdict("# Proof");
    check.passed = false;
    check.title = "x".repeat(200);
    let published = client(&server)
        .publish_verdict(&check)
        .await
        .expect("published");

    let Published::CommitStatus { why } = published else {
        panic!("not a status: {published:?}");
    };
    assert!(
        why.contains("only for a GitHub App")
            && why.contains("You must authenticate via a GitHub App"),
        "{why}"
    );
    let sent = requests_to(&server, &route(&format!("statuses/{SHA}"))).await;
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    assert_eq!(body["state"], "failure");
    assert_eq!(body["context"], "prpd / verdict");
    let description = body["description"].as_str().expect("a description");
    assert_eq!(description.chars().count(), 140);
    token_only_in_authorization(&server).await;
}

#[tokio::test]
async fn a_token_that_may_create_neither_gets_the_statuses_refusal() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("check-runs")))
        .respond_with(forbidden_check_runs())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route(&format!("statuses/{SHA}"))))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-accepted-github-permissions", "statuses=write")
                .set_body_json(fixture("error-403-permission.json")),
        )
        .mount(&server)
        .await;

    let error = client(&server)
        .publish_verdict(&verdict("# Proof"))
        .await
        .expect_err("refused twice");
    assert!(matches!(error, GitHubError::Forbidden { .. }), "{error:?}");
    assert!(error.to_string().contains("statuses=write"), "{error}");
}

#[tokio::test]
async fn another_refusal_of_the_check_run_is_not_papered_over_with_a_status() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("check-runs")))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "message": "No commit found for SHA: ce587453ced02b1526dfb4cb910479d431683101",
            "documentation_url": "https://docs.github.com/rest/checks/runs#create-a-check-run",
            "status": "422"
        })))
        .mount(&server)
        .await;
    let error = client(&server)
        .publish_verdict(&verdict("# Proof"))
        .await
        .expect_err("422");
    assert!(error.to_string().contains("No commit found"), "{error}");
    assert!(
        requests_to(&server, &route(&format!("statuses/{SHA}")))
            .await
            .is_empty()
    );
}
