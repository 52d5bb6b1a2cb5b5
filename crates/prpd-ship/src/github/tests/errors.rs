//! What goes wrong, against the mock API: a refused token, a missing permission, a repository
//! the token cannot see, rate limits waited out or given up on, the network down, a target
//! that cannot be used — each a clear error, none holding the token, in its message, its
//! `Debug` or prpd's logs.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{
    TOKEN, TOKEN_SOURCE, authorized, client, client_at, fixture, requests_to, route,
    token_only_in_authorization,
};
use crate::github::{GitHub, GitHubError, GitHubTarget, RateLimitPolicy};
use prpd_base::secret::Secret;

/// Mounts `GET …/pulls` answering `template`.
async fn pulls_answer(server: &MockServer, template: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(route("pulls")))
        .and(authorized())
        .respond_with(template)
        .mount(server)
        .await;
}

/// Mounts `POST …/issues` (open an issue) answering with the example issue.
async fn issues_answer_created(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .and(authorized())
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue.json")))
        .mount(server)
        .await;
}

async fn open_issue(github: &GitHub) -> Result<u64, GitHubError> {
    github
        .open_issue("prpd escalated", "report", &[])
        .await
        .map(|issue| issue.number)
}

fn assert_no_token(error: &GitHubError) {
    assert!(!error.to_string().contains(TOKEN), "{error}");
    assert!(!format!("{error:?}").contains(TOKEN), "{error:?}");
}

#[tokio::test]
async fn a_refused_token_says_which_variable_to_check() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .and(authorized())
        .respond_with(ResponseTemplate::new(401).set_body_json(fixture("error-401.json")))
        .expect(1)
        .mount(&server)
        .await;

    let error = open_issue(&client(&server)).await.expect_err("401");
    assert!(
        matches!(error, GitHubError::Unauthorized { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the token in $GITHUB_TOKEN was refused (401) when prpd tried to open an issue: check it is valid and not expired"
    );
    assert_no_token(&error);
}

#[tokio::test]
async fn a_missing_permission_quotes_github_and_the_permission_it_names() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(fixture("error-403-permission.json"))
                .insert_header("X-Accepted-GitHub-Permissions", "issues=write")
                .insert_header("x-ratelimit-remaining", "4999"),
        )
        .expect(1)
        .mount(&server)
        .await;

    let error = open_issue(&client(&server)).await.expect_err("403");
    let GitHubError::Forbidden {
        accepted_permissions,
        ..
    } = &error
    else {
        panic!("not Forbidden: {error:?}");
    };
    assert_eq!(accepted_permissions.as_deref(), Some("issues=write"));
    assert_eq!(
        error.to_string(),
        "the token in $GITHUB_TOKEN may not open an issue (403: Resource not accessible by personal access token); a fine-grained token needs issues=write"
    );
}

#[tokio::test]
async fn a_repository_the_token_cannot_see_is_named() {
    let server = MockServer::start().await;
    pulls_answer(
        &server,
        ResponseTemplate::new(404).set_body_json(fixture("error-404.json")),
    )
    .await;

    let error = client(&server)
        .open_or_update_pull_request(&crate::github::PullRequestDraft {
            head: "prp/x".to_owned(),
            base: "main".to_owned(),
            title: "t".to_owned(),
            body: "b".to_owned(),
            labels: Vec::new(),
            draft: false,
        })
        .await
        .expect_err("404");
    assert!(matches!(error, GitHubError::NotFound { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("octocat/Hello-World does not exist at http://127.0.0.1:")
            && message.contains("or the token in $GITHUB_TOKEN cannot see it"),
        "{message}"
    );
}

#[tokio::test]
async fn a_429_is_waited_out_as_retry_after_says_then_sent_again() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .and(authorized())
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(fixture("error-429-rate-limit.json"))
                .insert_header("Retry-After", "1"),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    issues_answer_created(&server).await;

    let started = Instant::now();
    let number = open_issue(&client(&server)).await.expect("sent again");
    assert_eq!(number, 1348);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was not waited out ({:?})",
        started.elapsed()
    );
    assert_eq!(requests_to(&server, &route("issues")).await.len(), 2);
}

#[tokio::test]
async fn a_secondary_rate_limit_403_is_retried_not_reported_as_a_permission() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(fixture("error-403-secondary-rate-limit.json"))
                .insert_header("retry-after", "0"),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    issues_answer_created(&server).await;

    assert_eq!(
        open_issue(&client(&server)).await.expect("sent again"),
        1348
    );
}

#[tokio::test]
async fn a_rate_limit_that_lasts_past_the_retries_is_reported_with_its_wait() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(fixture("error-429-rate-limit.json"))
                .insert_header("retry-after", "0"),
        )
        .expect(2)
        .mount(&server)
        .await;
    let github = client(&server).with_rate_limit_policy(RateLimitPolicy {
        retries: 1,
        longest_wait: Duration::from_secs(60),
    });

    let error = open_issue(&github).await.expect_err("still limited");
    assert!(
        matches!(error, GitHubError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::ZERO),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_wait_longer_than_the_policy_allows_is_not_slept_through() {
    let server = MockServer::start().await;
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        + 3_600;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": "API rate limit exceeded for user ID 1."}))
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;

    let started = Instant::now();
    let error = open_issue(&client(&server)).await.expect_err("limited");
    assert!(started.elapsed() < Duration::from_secs(5));
    let GitHubError::RateLimited {
        retry_after: Some(wait),
        ..
    } = error
    else {
        panic!("not RateLimited: {error:?}");
    };
    assert!(wait > Duration::from_secs(3_500), "{wait:?}");
    assert!(
        error_text(wait).contains("resume the run after that"),
        "{}",
        error_text(wait)
    );
}

fn error_text(wait: Duration) -> String {
    GitHubError::RateLimited {
        action: "open an issue".to_owned(),
        retry_after: Some(wait),
    }
    .to_string()
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("an address").port();
    drop(listener);
    let api_url = format!("http://127.0.0.1:{port}");

    let error = open_issue(&client_at(&api_url))
        .await
        .expect_err("nothing listens");
    let GitHubError::Network { cause, .. } = &error else {
        panic!("not Network: {error:?}");
    };
    assert!(cause.to_lowercase().contains("connect"), "{cause}");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "could not reach the GitHub API at {api_url} to open an issue: "
        )) && message.ends_with("check the network and [ship] api_url, then try again"),
        "{message}"
    );
}

#[test]
fn a_target_that_cannot_be_used_is_refused_before_any_request() {
    let target = |api_url: &str, owner: &str, token: &str| GitHubTarget {
        api_url: api_url.to_owned(),
        owner: owner.to_owned(),
        repo: "Hello-World".to_owned(),
        token: Secret::new(token),
        token_source: TOKEN_SOURCE.to_owned(),
    };
    let table = [
        (
            target("api.github.com", "octocat", TOKEN),
            "must be an http:// or https:// URL",
        ),
        (
            target("https://api.github.com", "octo cat", TOKEN),
            "the owner name \"octo cat\"",
        ),
        (
            target(
                "https://api.github.com",
                "octocat",
                &format!("{TOKEN}\nX-Evil: 1"),
            ),
            "the token in $GITHUB_TOKEN is empty or holds characters",
        ),
        (
            target("https://api.github.com", "octocat", ""),
            "the token in $GITHUB_TOKEN is empty",
        ),
        (
            target("https://exa mple.com", "octocat", TOKEN),
            "not a valid URL",
        ),
        (
            target(
                &format!("https://x-access-token:{TOKEN}@ghe.example.com/api/v3"),
                "octocat",
                TOKEN,
            ),
            "cannot use the GitHub API at https://ghe.example.com/api/v3: [ship] api_url holds credentials; leave them out: the token comes from $GITHUB_TOKEN",
        ),
        (
            target("https://me:hunter2@ghe.example.com", "octocat", TOKEN),
            "cannot use the GitHub API at https://ghe.example.com: [ship] api_url holds credentials",
        ),
    ];
    for (target, expected) in table {
        let error = GitHub::new(target).expect_err("refused");
        assert!(
            matches!(error, GitHubError::InvalidTarget { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains(expected), "{error}");
        assert!(!error.to_string().contains("hunter2"), "{error}");
        assert_no_token(&error);
    }
}

#[tokio::test]
async fn the_token_never_shows_in_errors_debug_output_or_logs() {
    let logs = Arc::new(Mutex::new(Vec::<u8>::new()));
    let writer = Arc::clone(&logs);
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || LogBuffer(Arc::clone(&writer)))
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(json!({"message": format!("limit for token {TOKEN}")}))
                .insert_header("retry-after", "0"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route("issues")))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({
            "message": format!("Server Error: Authorization: Bearer {TOKEN}")
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route("issues/1/comments")))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": format!("{TOKEN} may not comment")}))
                .insert_header("X-Accepted-OAuth-Scopes", format!("repo {TOKEN}").as_str()),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(route("commits/abc/check-runs")))
        .respond_with(ResponseTemplate::new(200).set_body_string(format!("not JSON {TOKEN}")))
        .mount(&server)
        .await;

    let github = client(&server);
    let mut errors = vec![
        open_issue(&github).await.expect_err("500"),
        github.comment(1, "hi").await.expect_err("403"),
        github
            .wait_for_checks(
                "abc",
                &crate::github::PollPolicy::with_timeout(Duration::ZERO),
            )
            .await
            .expect_err("unreadable"),
    ];
    errors.push(
        open_issue(&client_at("http://127.0.0.1:1"))
            .await
            .expect_err("no server"),
    );

    for error in &errors {
        assert_no_token(error);
    }
    assert!(
        errors[0].to_string().contains("[redacted]"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].to_string().contains("[redacted]"),
        "{}",
        errors[1]
    );
    assert!(!format!("{github:?}").contains(TOKEN), "{github:?}");
    assert!(format!("{github:?}").contains("octocat/Hello-World"));
    token_only_in_authorization(&server).await;
    let logs = String::from_utf8(logs.lock().expect("logs").clone()).expect("UTF-8 logs");
    assert!(
        // prpd's own warning shows the logs were captured; octocrab's and hyper's lines (which
        // name the URL) depend on which callsites other tests' subscribers registered first.
        logs.contains("GitHub rate limit"),
        "the logs were not captured:\n{logs}"
    );
    assert!(!logs.contains(TOKEN), "{logs}");
}

/// A tracing writer into a shared buffer.
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("logs").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
