//! The client against a local mock of the GitHub REST API (wiremock), answering with the
//! payloads of GitHub's documentation (`tests/fixtures/github/`). Every mock that stands for
//! an authenticated endpoint matches the `Authorization` header, so each test also proves the
//! token is sent — and [`token_only_in_authorization`] that it is sent nowhere else.

mod check_run;
mod checks;
mod errors;
mod pulls;

use std::path::Path;

use serde_json::Value;
use wiremock::MockServer;
use wiremock::matchers::{HeaderExactMatcher, header};

use super::{GitHub, GitHubTarget};
use prpd_base::secret::Secret;

/// The token every test client sends; long and unusual enough that finding it anywhere is
/// a leak, not a coincidence.
pub(super) const TOKEN: &str = "ghp_prpdTestToken0123456789abcdefABCDEF";

/// Where the test token "came from", as messages name it.
pub(super) const TOKEN_SOURCE: &str = "$GITHUB_TOKEN";

/// The body of a GitHub example answer, from `tests/fixtures/github/`.
pub(super) fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/github")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A client for `octocat/Hello-World` at `api_url` with the test token.
pub(super) fn client_at(api_url: &str) -> GitHub {
    GitHub::new(GitHubTarget {
        api_url: api_url.to_owned(),
        owner: "octocat".to_owned(),
        repo: "Hello-World".to_owned(),
        token: Secret::new(TOKEN),
        token_source: TOKEN_SOURCE.to_owned(),
    })
    .expect("a valid target")
}

/// A client for the mock server.
pub(super) fn client(server: &MockServer) -> GitHub {
    client_at(&server.uri())
}

/// The API path of `tail` in `octocat/Hello-World`.
pub(super) fn route(tail: &str) -> String {
    format!("/repos/octocat/Hello-World/{tail}")
}

/// Matches requests that carry the test token as octocrab sends a personal token.
pub(super) fn authorized() -> HeaderExactMatcher {
    header("authorization", format!("Bearer {TOKEN}").as_str())
}

/// Asserts that every request the server received carried the token in its `Authorization`
/// header and nowhere else: not in the URL, another header or the body.
pub(super) async fn token_only_in_authorization(server: &MockServer) {
    let requests = server.received_requests().await.expect("recording is on");
    assert!(!requests.is_empty(), "no request reached the server");
    for request in requests {
        assert!(!request.url.as_str().contains(TOKEN), "{}", request.url);
        assert!(
            !String::from_utf8_lossy(&request.body).contains(TOKEN),
            "the body of {} {} holds the token",
            request.method,
            request.url
        );
        for (name, value) in &request.headers {
            let value = value.to_str().unwrap_or_default();
            if name.as_str() == "authorization" {
                assert_eq!(value, format!("Bearer {TOKEN}"));
            } else {
                assert!(!value.contains(TOKEN), "header {name} holds the token");
            }
        }
    }
}

/// The requests the server received for `path`, in order.
pub(super) async fn requests_to(server: &MockServer, path: &str) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .expect("recording is on")
        .into_iter()
        .filter(|request| request.url.path() == path)
        .collect()
}
