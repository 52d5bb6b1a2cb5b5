//! The one place that talks to GitHub: [`GitHub::new`] checks the target and builds the
//! octocrab client (the token as a personal token, sent only in the `Authorization` header; no
//! octocrab retry; connect and read timeouts), and every request goes through
//! [`GitHub::request`], which waits out rate limits within the [`RateLimitPolicy`] and turns a
//! refusal or a network failure into a [`GitHubError`] with the token scrubbed out.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use serde::de::DeserializeOwned;

use super::body_limit;
use super::error::{self, GitHubError, Where};
use super::rate_limit::{self, Next, RateLimitPolicy};
use super::remote_url::is_name;
use super::reply::{Reply, ReplyHeaders};
use prpd_base::secret::Secret;

/// Where prpd ships to and with what.
#[derive(Debug, Clone)]
pub struct GitHubTarget {
    /// The REST API's root: `https://api.github.com`, `https://HOST/api/v3` for GitHub
    /// Enterprise, or a mock server in tests.
    pub api_url: String,
    pub owner: String,
    pub repo: String,
    pub token: Secret,
    /// Where the token came from, as messages name it (`$GITHUB_TOKEN`); never the token.
    pub token_source: String,
}

/// A GitHub REST API client for one repository.
pub struct GitHub {
    octocrab: Octocrab,
    api_url: String,
    owner: String,
    repo: String,
    token: Secret,
    token_source: String,
    rate_limits: RateLimitPolicy,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("GitHub")
            .field("api_url", &self.api_url)
            .field("repository", &self.repository())
            .field("token", &self.token)
            .field("token_source", &self.token_source)
            .field("rate_limits", &self.rate_limits)
            .finish_non_exhaustive()
    }
}

/// How long prpd waits for a TCP (and TLS) connection to the API.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long prpd waits for the next bytes of an answer.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The request methods prpd uses.
#[derive(Debug, Clone, Copy)]
pub(super) enum Verb {
    Get,
    Post,
    Patch,
}

/// A request's answer that is not a rate limit.
#[derive(Debug)]
pub(super) enum Answer {
    /// 2xx.
    Done(Reply),
    /// Any other status.
    Refused(Reply),
}

impl GitHub {
    /// A client for `target`. Sends nothing: a wrong token shows on the first request.
    pub fn new(target: GitHubTarget) -> Result<GitHub, GitHubError> {
        let api_url = target.api_url.trim().trim_end_matches('/').to_owned();
        let (shown_url, has_credentials) = without_credentials(&api_url);
        let invalid = |problem: String| GitHubError::InvalidTarget {
            api_url: target.token.redact(&shown_url),
            problem,
        };
        let lowercase = api_url.to_ascii_lowercase();
        if !(lowercase.starts_with("https://") || lowercase.starts_with("http://")) {
            return Err(invalid(
                "[ship] api_url must be an http:// or https:// URL, such as https://api.github.com or https://HOST/api/v3".to_owned(),
            ));
        }
        if has_credentials {
            return Err(invalid(format!(
                "[ship] api_url holds credentials; leave them out: the token comes from {}",
                target.token_source
            )));
        }
        for (what, name) in [("owner", &target.owner), ("repository", &target.repo)] {
            if !is_name(name) {
                return Err(invalid(format!(
                    "the {what} name {name:?} is not a GitHub name (letters, digits, '-', '_', '.'); check [ship] repository"
                )));
            }
        }
        if target.token.expose().is_empty()
            || !target
                .token
                .expose()
                .chars()
                .all(|character| character.is_ascii_graphic())
        {
            return Err(invalid(format!(
                "the token in {} is empty or holds characters an HTTP header cannot carry (spaces, line breaks, non-ASCII)",
                target.token_source
            )));
        }
        let builder = Octocrab::builder()
            .base_uri(api_url.as_str())
            .map_err(|_| invalid("[ship] api_url is not a valid URL".to_owned()))?
            .personal_token(target.token.expose().to_owned())
            .add_retry_config(RetryConfig::None)
            .set_connect_timeout(Some(CONNECT_TIMEOUT))
            .set_read_timeout(Some(READ_TIMEOUT));
        let octocrab = builder.build().map_err(|error| {
            invalid(target.token.redact(&format!(
                "the HTTP client could not be set up: {}",
                causes(&error)
            )))
        })?;
        Ok(GitHub {
            octocrab,
            api_url,
            owner: target.owner,
            repo: target.repo,
            token: target.token,
            token_source: target.token_source,
            rate_limits: RateLimitPolicy::default(),
        })
    }

    /// The same client with another rate-limit policy.
    #[must_use]
    pub fn with_rate_limit_policy(mut self, policy: RateLimitPolicy) -> GitHub {
        self.rate_limits = policy;
        self
    }

    /// `owner/repo`.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }

    /// A text prpd sends to GitHub (a title, a body, a comment): the token redacted, in case
    /// a report picked it up, and cut to GitHub's limit.
    pub(super) fn outgoing(&self, text: &str) -> String {
        body_limit::fit(&self.token.redact(text)).into_owned()
    }

    /// The repository's owner.
    pub(super) fn owner(&self) -> &str {
        &self.owner
    }

    /// The API path of `tail` in the repository: `/repos/{owner}/{repo}/{tail}`.
    pub(super) fn repo_route(&self, tail: &str) -> String {
        format!("/repos/{}/{}/{tail}", self.owner, self.repo)
    }

    /// Sends one request and reads the answer as `T`. `action` says what the request is for
    /// ("open a pull request"), for messages.
    pub(super) async fn request<T: DeserializeOwned>(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<T, GitHubError> {
        let reply = self.request_reply(verb, route, body, action).await?;
        self.read(&reply, action)
    }

    /// A successful answer read as `T`.
    pub(super) fn read<T: DeserializeOwned>(
        &self,
        reply: &Reply,
        action: &str,
    ) -> Result<T, GitHubError> {
        serde_json::from_str(&reply.body).map_err(|error| GitHubError::Unexpected {
            status: reply.status,
            action: action.to_owned(),
            message: self.token.redact(&format!(
                "the answer is not the JSON GitHub documents for this request: {error}"
            )),
        })
    }

    /// Sends one request until it is answered with success, a refusal, or a rate limit past
    /// the policy; a refusal comes back for the caller to judge.
    pub(super) async fn send(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<Answer, GitHubError> {
        let mut retries_done = 0;
        loop {
            let reply = self.send_once(verb, route, body, action).await?;
            if reply.is_success() {
                return Ok(Answer::Done(reply));
            }
            match rate_limit::next(&reply, retries_done, &self.rate_limits, now_unix()) {
                Next::NotRateLimited => return Ok(Answer::Refused(reply)),
                Next::RetryAfter(wait) => {
                    tracing::warn!(
                        action,
                        status = reply.status,
                        wait_seconds = wait.as_secs_f64(),
                        "GitHub rate limit: waiting, then trying again"
                    );
                    tokio::time::sleep(wait).await;
                    retries_done += 1;
                }
                Next::GiveUp { retry_after } => {
                    return Err(GitHubError::RateLimited {
                        action: action.to_owned(),
                        retry_after,
                    });
                }
            }
        }
    }

    /// The error for a refused answer (not a rate limit).
    pub(super) fn refused(&self, reply: &Reply, action: &str) -> GitHubError {
        let place = Where {
            api_url: &self.api_url,
            repository: self.repository(),
            token_source: &self.token_source,
        };
        error::refused(reply, action, &place, |text| self.token.redact(text))
    }

    async fn request_reply(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<Reply, GitHubError> {
        match self.send(verb, route, body, action).await? {
            Answer::Done(reply) => Ok(reply),
            Answer::Refused(reply) => Err(self.refused(&reply, action)),
        }
    }

    async fn send_once(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<Reply, GitHubError> {
        let sent = match verb {
            Verb::Get => self.octocrab._get(route).await,
            Verb::Post => self.octocrab._post(route, body).await,
            Verb::Patch => self.octocrab._patch(route, body).await,
        };
        let response = sent.map_err(|error| self.not_sent(&error, action))?;
        let status = response.status().as_u16();
        let text = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(|value| value.trim().to_owned())
        };
        let number = |name: &str| text(name).and_then(|value| value.parse().ok());
        let headers = ReplyHeaders {
            retry_after: number("retry-after"),
            ratelimit_remaining: number("x-ratelimit-remaining"),
            ratelimit_reset: number("x-ratelimit-reset"),
            accepted_permissions: text("x-accepted-github-permissions"),
            accepted_scopes: text("x-accepted-oauth-scopes"),
        };
        let body = self
            .octocrab
            .body_to_string(response)
            .await
            .map_err(|error| self.not_sent(&error, action))?;
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// The error for a request that got no answer.
    fn not_sent(&self, error: &octocrab::Error, action: &str) -> GitHubError {
        let cause = self.token.redact(&causes(error));
        match error {
            octocrab::Error::Service { .. } | octocrab::Error::Hyper { .. } => {
                GitHubError::Network {
                    api_url: self.api_url.clone(),
                    action: action.to_owned(),
                    cause,
                }
            }
            _ => GitHubError::InvalidTarget {
                api_url: self.api_url.clone(),
                problem: format!("prpd could not build the request to {action}: {cause}"),
            },
        }
    }
}

/// `url` without a `user:password@` before its host, and whether it had one.
fn without_credentials(url: &str) -> (String, bool) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), false);
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => (format!("{scheme}://{}", &rest[at + 1..]), true),
        None => (url.to_owned(), false),
    }
}

/// `error` and its sources, each said once.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(error) = current {
        let text = error.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        current = error.source();
    }
    parts.join(": ")
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}
