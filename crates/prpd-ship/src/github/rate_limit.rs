//! When GitHub refuses a request for its rate, and what prpd does then: wait as long as GitHub
//! asks (`Retry-After`, or until `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, or a
//! minute when it says nothing, as GitHub's documentation advises) and try again, within a
//! [`RateLimitPolicy`]; past it, give up with what GitHub asked so the caller can say when to
//! resume. octocrab's own retry is off: it repeats a 429 at once, without reading the headers.
//!
//! Pure: the clock is passed in.

use std::time::Duration;

use super::reply::Reply;

/// How long prpd waits out GitHub's rate limits before it gives up with
/// [`GitHubError::RateLimited`](super::GitHubError::RateLimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitPolicy {
    /// Tries after the first.
    pub retries: u32,
    /// The longest single wait; a request GitHub wants delayed longer is not retried.
    pub longest_wait: Duration,
}

impl Default for RateLimitPolicy {
    /// Two more tries, each after at most a minute.
    fn default() -> RateLimitPolicy {
        RateLimitPolicy {
            retries: 2,
            longest_wait: Duration::from_secs(60),
        }
    }
}

/// How long to wait when GitHub refuses for the rate but names no time.
const UNSPECIFIED_WAIT: Duration = Duration::from_secs(60);

/// What to do after a refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Not a rate limit: the refusal stands.
    NotRateLimited,
    /// Wait this long, then send the request again.
    RetryAfter(Duration),
    /// Stop; GitHub asked for this wait (when it said).
    GiveUp { retry_after: Option<Duration> },
}

/// Whether `reply` is a rate limit — a 429, or a 403 with `Retry-After`, with
/// `x-ratelimit-remaining: 0`, or whose message names a rate limit (GitHub's secondary limits)
/// — and, if so, whether to retry after `retries_done` retries at `now_unix`.
pub(super) fn next(
    reply: &Reply,
    retries_done: u32,
    policy: &RateLimitPolicy,
    now_unix: u64,
) -> Next {
    let headers = &reply.headers;
    let exhausted = headers.ratelimit_remaining == Some(0);
    let limited = match reply.status {
        429 => true,
        403 => {
            headers.retry_after.is_some()
                || exhausted
                || reply.message().to_lowercase().contains("rate limit")
        }
        _ => false,
    };
    if !limited {
        return Next::NotRateLimited;
    }
    let asked = match (headers.retry_after, headers.ratelimit_reset) {
        (Some(seconds), _) => Some(Duration::from_secs(seconds)),
        (None, Some(reset)) if exhausted => {
            Some(Duration::from_secs(reset.saturating_sub(now_unix).max(1)))
        }
        (None, _) => None,
    };
    let wait = asked.unwrap_or(UNSPECIFIED_WAIT);
    if retries_done < policy.retries && wait <= policy.longest_wait {
        Next::RetryAfter(wait)
    } else {
        Next::GiveUp { retry_after: asked }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Next, RateLimitPolicy, next};
    use crate::github::reply::{Reply, ReplyHeaders};

    const NOW: u64 = 1_700_000_000;

    fn reply(status: u16, headers: ReplyHeaders, body: &str) -> Reply {
        Reply {
            status,
            headers,
            body: body.to_owned(),
        }
    }

    fn seconds(count: u64) -> Duration {
        Duration::from_secs(count)
    }

    #[test]
    fn refusals_are_read_as_github_documents_its_rate_limits() {
        let policy = RateLimitPolicy::default();
        let retry_after = |value| ReplyHeaders {
            retry_after: Some(value),
            ..ReplyHeaders::default()
        };
        let exhausted = ReplyHeaders {
            ratelimit_remaining: Some(0),
            ratelimit_reset: Some(NOW + 30),
            ..ReplyHeaders::default()
        };
        let secondary = r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#;
        let table = [
            (
                "429 with Retry-After",
                reply(429, retry_after(5), ""),
                0,
                Next::RetryAfter(seconds(5)),
            ),
            (
                "429 without headers",
                reply(429, ReplyHeaders::default(), ""),
                0,
                Next::RetryAfter(seconds(60)),
            ),
            (
                "403 with Retry-After",
                reply(403, retry_after(3), secondary),
                0,
                Next::RetryAfter(seconds(3)),
            ),
            (
                "403 primary limit",
                reply(403, exhausted.clone(), ""),
                0,
                Next::RetryAfter(seconds(30)),
            ),
            (
                "403 secondary limit by message",
                reply(403, ReplyHeaders::default(), secondary),
                0,
                Next::RetryAfter(seconds(60)),
            ),
            (
                "403 missing permission",
                reply(
                    403,
                    ReplyHeaders::default(),
                    r#"{"message":"Resource not accessible by personal access token"}"#,
                ),
                0,
                Next::NotRateLimited,
            ),
            (
                "401",
                reply(401, retry_after(5), ""),
                0,
                Next::NotRateLimited,
            ),
            (
                "retries used up",
                reply(429, retry_after(5), ""),
                2,
                Next::GiveUp {
                    retry_after: Some(seconds(5)),
                },
            ),
            (
                "wait past the cap",
                reply(429, retry_after(3600), ""),
                0,
                Next::GiveUp {
                    retry_after: Some(seconds(3600)),
                },
            ),
            (
                "no time named, retries used up",
                reply(429, ReplyHeaders::default(), ""),
                2,
                Next::GiveUp { retry_after: None },
            ),
        ];
        for (name, reply, retries_done, expected) in table {
            assert_eq!(next(&reply, retries_done, &policy, NOW), expected, "{name}");
        }
    }

    #[test]
    fn a_reset_already_past_waits_a_second_not_zero() {
        let headers = ReplyHeaders {
            ratelimit_remaining: Some(0),
            ratelimit_reset: Some(NOW - 10),
            ..ReplyHeaders::default()
        };
        assert_eq!(
            next(
                &reply(429, headers, ""),
                0,
                &RateLimitPolicy::default(),
                NOW
            ),
            Next::RetryAfter(seconds(1))
        );
    }
}
