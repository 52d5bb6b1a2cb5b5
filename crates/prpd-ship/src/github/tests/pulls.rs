//! Pull requests, comments and issues against the mock API: one pull request per branch,
//! updated rather than duplicated, labels added, the 422 race, and what prpd sends in them.

use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{
    TOKEN, authorized, client, client_at, fixture, requests_to, route, token_only_in_authorization,
};
use crate::github::{GitHubError, IssueRef, Opened, PullRequestDraft};

fn draft(labels: &[&str]) -> PullRequestDraft {
    PullRequestDraft {
        head: "prp/add-greeting".to_owned(),
        base: "main".to_owned(),
        title: "feat: add a greeting".to_owned(),
        body: "## QA report\n\nVerdict: APPROVE".to_owned(),
        labels: labels.iter().map(|label| (*label).to_owned()).collect(),
        draft: true,
    }
}

/// `GET …/pulls?state=open&head=octocat:prp/add-greeting` answered with `open`.
async fn mount_open_pulls(server: &MockServer, open: Value) {
    Mock::given(method("GET"))
        .and(path(route("pulls")))
        .and(query_param("state", "open"))
        .and(query_param("head", "octocat:prp/add-greeting"))
        .and(authorized())
        .respond_with(ResponseTemplate::new(200).set_body_json(open))
        .mount(server)
        .await;
}

async fn mount_labels(server: &MockServer, number: u64, labels: Value, times: u64) {
    Mock::given(method("POST"))
        .and(path(route(&format!("issues/{number}/labels"))))
        .and(authorized())
        .and(body_json(json!({ "labels": labels })))
        .respond_with(ResponseTemplate::new(200).set_body_json(fixture("labels.json")))
        .expect(times)
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_branch_without_an_open_pull_request_gets_a_new_one() {
    let server = MockServer::start().await;
    mount_open_pulls(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .and(authorized())
        .and(body_json(json!({
            "title": "feat: add a greeting",
            "head": "prp/add-greeting",
            "base": "main",
            "body": "## QA report\n\nVerdict: APPROVE",
            "draft": true,
        })))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .expect(1)
        .mount(&server)
        .await;
    mount_labels(&server, 1347, json!(["prpd", "enhancement"]), 1).await;

    let pull = client(&server)
        .open_or_update_pull_request(&draft(&["prpd", "enhancement"]))
        .await
        .expect("opened");

    assert_eq!(pull.number, 1347);
    assert_eq!(pull.opened, Opened::New);
    assert_eq!(
        pull.html_url,
        "https://github.com/octocat/Hello-World/pull/1347"
    );
    assert_eq!(
        pull.head_sha.as_deref(),
        Some("6dcb09b5b57875f334f61aebed695e2e4193db5e")
    );
    token_only_in_authorization(&server).await;
}

#[tokio::test]
async fn an_open_pull_request_for_the_branch_is_updated_not_duplicated() {
    let server = MockServer::start().await;
    let mut existing = fixture("pull-request.json");
    existing["number"] = json!(1296);
    existing["html_url"] = json!("https://github.com/octocat/Hello-World/pull/1296");
    mount_open_pulls(&server, json!([existing.clone()])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .expect(0)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(route("pulls/1296")))
        .and(authorized())
        .and(body_json(json!({
            "title": "feat: add a greeting",
            "body": "## QA report\n\nVerdict: APPROVE",
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(existing))
        .expect(1)
        .mount(&server)
        .await;
    mount_labels(&server, 1296, json!(["prpd"]), 1).await;

    let pull = client(&server)
        .open_or_update_pull_request(&draft(&["prpd"]))
        .await
        .expect("updated");

    assert_eq!(pull.number, 1296);
    assert_eq!(pull.opened, Opened::Updated);
    assert_eq!(
        pull.html_url,
        "https://github.com/octocat/Hello-World/pull/1296"
    );
    token_only_in_authorization(&server).await;
}

#[tokio::test]
async fn no_labels_means_no_label_request() {
    let server = MockServer::start().await;
    mount_open_pulls(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route("issues/1347/labels")))
        .respond_with(ResponseTemplate::new(200).set_body_json(fixture("labels.json")))
        .expect(0)
        .mount(&server)
        .await;

    let pull = client(&server)
        .open_or_update_pull_request(&draft(&[]))
        .await
        .expect("opened");
    assert_eq!(pull.opened, Opened::New);
}

#[tokio::test]
async fn a_pull_request_opened_by_someone_else_meanwhile_is_updated_after_the_422() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route("pulls")))
        .and(query_param("head", "octocat:prp/add-greeting"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    mount_open_pulls(&server, json!([fixture("pull-request.json")])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .and(authorized())
        .respond_with(
            ResponseTemplate::new(422).set_body_json(fixture("error-422-pull-request-exists.json")),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(route("pulls/1347")))
        .and(authorized())
        .respond_with(ResponseTemplate::new(200).set_body_json(fixture("pull-request.json")))
        .expect(1)
        .mount(&server)
        .await;
    mount_labels(&server, 1347, json!(["prpd"]), 1).await;

    let pull = client(&server)
        .open_or_update_pull_request(&draft(&["prpd"]))
        .await
        .expect("updated after the race");
    assert_eq!((pull.number, pull.opened), (1347, Opened::Updated));
}

#[tokio::test]
async fn another_422_is_an_error_that_quotes_github() {
    let server = MockServer::start().await;
    mount_open_pulls(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "code": "custom", "message": "No commits between main and prp/add-greeting"}],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422"
        })))
        .mount(&server)
        .await;

    let error = client(&server)
        .open_or_update_pull_request(&draft(&[]))
        .await
        .expect_err("refused");
    assert!(
        matches!(error, GitHubError::Unexpected { status: 422, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "GitHub answered 422 when prpd tried to open a pull request from prp/add-greeting into main: Validation Failed; No commits between main and prp/add-greeting"
    );
}

#[tokio::test]
async fn a_comment_is_posted_on_the_pull_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues/1347/comments")))
        .and(authorized())
        .and(body_json(
            json!({ "body": "Run 2 updated this pull request." }),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue-comment.json")))
        .expect(1)
        .mount(&server)
        .await;

    client(&server)
        .comment(1347, "Run 2 updated this pull request.")
        .await
        .expect("commented");
}

#[tokio::test]
async fn an_escalation_issue_is_opened_with_its_labels() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .and(authorized())
        .and(body_json(json!({
            "title": "prpd escalated: add a greeting",
            "body": "The QA gate rejected the run three times.",
            "labels": ["prpd"],
        })))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue.json")))
        .expect(1)
        .mount(&server)
        .await;

    let issue = client(&server)
        .open_issue(
            "prpd escalated: add a greeting",
            "The QA gate rejected the run three times.",
            &["prpd".to_owned()],
        )
        .await
        .expect("opened");
    assert_eq!(
        issue,
        IssueRef {
            number: 1348,
            html_url: "https://github.com/octocat/Hello-World/issues/1348".to_owned(),
        }
    );
}

#[tokio::test]
async fn a_token_that_reached_a_report_is_sent_redacted() {
    let server = MockServer::start().await;
    mount_open_pulls(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route("issues/1347/comments")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue-comment.json")))
        .mount(&server)
        .await;
    let mut leaky = draft(&[]);
    leaky.title = format!("feat: {TOKEN}");
    leaky.body = format!("a check printed GITHUB_TOKEN={TOKEN} in its log");

    let github = client(&server);
    github
        .open_or_update_pull_request(&leaky)
        .await
        .expect("opened");
    github
        .comment(1347, &format!("echo {TOKEN}"))
        .await
        .expect("commented");

    token_only_in_authorization(&server).await;
    let sent: Value = requests_to(&server, &route("pulls"))
        .await
        .iter()
        .find(|request| request.method.as_str() == "POST")
        .expect("the POST")
        .body_json()
        .expect("JSON");
    assert_eq!(
        sent["body"],
        "a check printed GITHUB_TOKEN=[redacted] in its log"
    );
    assert_eq!(sent["title"], "feat: [redacted]");
}

#[tokio::test]
async fn a_body_longer_than_github_takes_is_cut_to_its_limit() {
    let server = MockServer::start().await;
    mount_open_pulls(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path(route("pulls")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .mount(&server)
        .await;
    let mut long = draft(&[]);
    long.body = "QA report line\n".repeat(10_000);

    client(&server)
        .open_or_update_pull_request(&long)
        .await
        .expect("opened");

    let sent: Value = requests_to(&server, &route("pulls"))
        .await
        .iter()
        .find(|request| request.method.as_str() == "POST")
        .expect("the POST")
        .body_json()
        .expect("JSON");
    let body = sent["body"].as_str().expect("a body");
    assert_eq!(body.chars().count(), 65_536);
    assert!(body.starts_with("QA report line\nQA report line\n"));
    assert!(body.contains("cut here"));
}

#[tokio::test]
async fn a_github_enterprise_api_url_keeps_its_path() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/v3/repos/octocat/Hello-World/pulls"))
        .and(authorized())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/v3/repos/octocat/Hello-World/pulls"))
        .and(authorized())
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull-request.json")))
        .expect(1)
        .mount(&server)
        .await;

    let pull = client_at(&format!("{}/api/v3/", server.uri()))
        .open_or_update_pull_request(&draft(&[]))
        .await
        .expect("opened through /api/v3");
    assert_eq!(pull.number, 1347);
}
