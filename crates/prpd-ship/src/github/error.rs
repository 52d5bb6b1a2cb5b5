//! Why a GitHub request failed, in words that say what to do: a refused token, a missing
//! permission (with the permission GitHub says it needs), a rate limit (with when to try
//! again), the network, a repository the token cannot see, or anything else GitHub answered.
//! Every text in here went through [`Secret::redact`](prpd_base::secret::Secret::redact)
//! and none holds a header: the token cannot reach a log or a report through an error.

use std::time::Duration;

use super::reply::Reply;

/// A GitHub request that did not do what it was sent for.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// The API URL, `owner/repo` or the token cannot be used at all; no request was sent.
    #[error("cannot use the GitHub API at {api_url}: {problem}")]
    InvalidTarget { api_url: String, problem: String },
    /// 401.
    #[error(
        "the token in {token_source} was refused (401) when prpd tried to {action}: check it is valid and not expired"
    )]
    Unauthorized {
        token_source: String,
        action: String,
    },
    /// 403 that is not a rate limit.
    #[error(
        "the token in {token_source} may not {action} (403: {message}){}",
        needs(accepted_permissions.as_deref(), accepted_scopes.as_deref())
    )]
    Forbidden {
        token_source: String,
        action: String,
        message: String,
        /// `X-Accepted-GitHub-Permissions`, e.g. `pull_requests=write`.
        accepted_permissions: Option<String>,
        /// `X-Accepted-OAuth-Scopes`, e.g. `repo`.
        accepted_scopes: Option<String>,
    },
    /// 429, or a 403 for the rate, still refused after the retries of the
    /// [`RateLimitPolicy`](super::RateLimitPolicy).
    #[error("GitHub's rate limit stopped prpd from trying to {action}{}", retry_hint(*retry_after))]
    RateLimited {
        action: String,
        /// How long GitHub asked to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// No answer: connection refused, DNS, TLS, timeout.
    #[error(
        "could not reach the GitHub API at {api_url} to {action}: {cause}; check the network and [ship] api_url, then try again"
    )]
    Network {
        api_url: String,
        action: String,
        cause: String,
    },
    /// 404.
    #[error(
        "GitHub answered 404 when prpd tried to {action}: {repository} does not exist at {api_url}, or the token in {token_source} cannot see it (check [ship] repository and the token's repository access)"
    )]
    NotFound {
        api_url: String,
        repository: String,
        token_source: String,
        action: String,
    },
    /// Any other answer prpd cannot use: an unexpected status, or a body it cannot read.
    #[error("GitHub answered {status} when prpd tried to {action}: {message}")]
    Unexpected {
        status: u16,
        action: String,
        message: String,
    },
}

impl GitHubError {
    /// Whether the same request may succeed later without anyone changing anything: the
    /// network, a rate limit, or a server error (5xx).
    pub fn is_transient(&self) -> bool {
        match self {
            GitHubError::Network { .. } | GitHubError::RateLimited { .. } => true,
            GitHubError::Unexpected { status, .. } => *status >= 500,
            GitHubError::InvalidTarget { .. }
            | GitHubError::Unauthorized { .. }
            | GitHubError::Forbidden { .. }
            | GitHubError::NotFound { .. } => false,
        }
    }
}

fn needs(permissions: Option<&str>, scopes: Option<&str>) -> String {
    let mut needed = Vec::new();
    if let Some(permissions) = permissions.filter(|text| !text.trim().is_empty()) {
        needed.push(format!("a fine-grained token needs {}", permissions.trim()));
    }
    if let Some(scopes) = scopes.filter(|text| !text.trim().is_empty()) {
        needed.push(format!("a classic token needs the scope {}", scopes.trim()));
    }
    if needed.is_empty() {
        "; give the token the permissions docs/src/shipping.md lists under \"The token's scopes\""
            .to_owned()
    } else {
        format!("; {}", needed.join("; "))
    }
}

fn retry_hint(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!(
            ": GitHub asks to wait {}s; resume the run after that",
            wait.as_secs()
        ),
        None => ": wait a few minutes, then resume the run".to_owned(),
    }
}

/// What the error messages say about where the request went and with what.
#[derive(Debug, Clone)]
pub(super) struct Where<'a> {
    pub api_url: &'a str,
    pub repository: String,
    pub token_source: &'a str,
}

/// The error for a refused `reply` that is not a rate limit (those are decided before).
/// `redact` scrubs every text taken from the answer.
pub(super) fn refused(
    reply: &Reply,
    action: &str,
    place: &Where<'_>,
    redact: impl Fn(&str) -> String,
) -> GitHubError {
    let action = action.to_owned();
    match reply.status {
        401 => GitHubError::Unauthorized {
            token_source: place.token_source.to_owned(),
            action,
        },
        403 => GitHubError::Forbidden {
            token_source: place.token_source.to_owned(),
            action,
            message: redact(&reply.message()),
            accepted_permissions: reply.headers.accepted_permissions.as_deref().map(&redact),
            accepted_scopes: reply.headers.accepted_scopes.as_deref().map(&redact),
        },
        404 => GitHubError::NotFound {
            api_url: place.api_url.to_owned(),
            repository: place.repository.clone(),
            token_source: place.token_source.to_owned(),
            action,
        },
        status => GitHubError::Unexpected {
            status,
            action,
            message: redact(&reply.message()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{GitHubError, Where, refused};
    use crate::github::reply::{Reply, ReplyHeaders};

    fn place() -> Where<'static> {
        Where {
            api_url: "https://api.github.com",
            repository: "octocat/Hello-World".to_owned(),
            token_source: "$GITHUB_TOKEN",
        }
    }

    fn message(status: u16, headers: ReplyHeaders, body: &str) -> String {
        let reply = Reply {
            status,
            headers,
            body: body.to_owned(),
        };
        refused(&reply, "open a pull request", &place(), |text| {
            text.replace("ghp_tok", "[redacted]")
        })
        .to_string()
    }

    #[test]
    fn each_refusal_says_what_to_do() {
        assert_eq!(
            message(
                401,
                ReplyHeaders::default(),
                r#"{"message":"Bad credentials"}"#
            ),
            "the token in $GITHUB_TOKEN was refused (401) when prpd tried to open a pull request: check it is valid and not expired"
        );
        assert_eq!(
            message(
                403,
                ReplyHeaders {
                    accepted_permissions: Some("pull_requests=write".to_owned()),
                    accepted_scopes: Some("repo".to_owned()),
                    ..ReplyHeaders::default()
                },
                r#"{"message":"Resource not accessible by personal access token"}"#
            ),
            "the token in $GITHUB_TOKEN may not open a pull request (403: Resource not accessible by personal access token); a fine-grained token needs pull_requests=write; a classic token needs the scope repo"
        );
        assert!(
            message(403, ReplyHeaders::default(), r#"{"message":"Must have admin rights"}"#)
                .ends_with("(403: Must have admin rights); give the token the permissions docs/src/shipping.md lists under \"The token's scopes\"")
        );
        assert_eq!(
            message(404, ReplyHeaders::default(), r#"{"message":"Not Found"}"#),
            "GitHub answered 404 when prpd tried to open a pull request: octocat/Hello-World does not exist at https://api.github.com, or the token in $GITHUB_TOKEN cannot see it (check [ship] repository and the token's repository access)"
        );
        assert_eq!(
            message(
                500,
                ReplyHeaders::default(),
                r#"{"message":"Server Error"}"#
            ),
            "GitHub answered 500 when prpd tried to open a pull request: Server Error"
        );
    }

    #[test]
    fn texts_from_the_answer_are_redacted() {
        let text = message(
            422,
            ReplyHeaders::default(),
            r#"{"message":"token ghp_tok is not valid here"}"#,
        );
        assert!(!text.contains("ghp_tok"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn only_the_network_rate_limits_and_server_errors_are_transient() {
        let refused_with = |status| {
            let reply = Reply {
                status,
                ..Reply::default()
            };
            refused(&reply, "open a pull request", &place(), str::to_owned)
        };
        for (status, transient) in [
            (401, false),
            (403, false),
            (404, false),
            (422, false),
            (500, true),
            (502, true),
        ] {
            assert_eq!(refused_with(status).is_transient(), transient, "{status}");
        }
        let network = GitHubError::Network {
            api_url: "https://api.github.com".to_owned(),
            action: "open a pull request".to_owned(),
            cause: "connection refused".to_owned(),
        };
        assert!(network.is_transient());
    }

    #[test]
    fn a_rate_limit_says_when_to_try_again() {
        let error = GitHubError::RateLimited {
            action: "add labels to pull request #1".to_owned(),
            retry_after: Some(std::time::Duration::from_secs(120)),
        };
        assert_eq!(
            error.to_string(),
            "GitHub's rate limit stopped prpd from trying to add labels to pull request #1: GitHub asks to wait 120s; resume the run after that"
        );
    }
}
