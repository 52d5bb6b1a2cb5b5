//! A GitHub response as prpd keeps it: the status, the few headers it reads (rate limits,
//! missing permissions), the body text, and GitHub's own `message` from an error body. Kept
//! apart from octocrab's types so the rules that read it (`rate_limit.rs`, `error.rs`) are
//! pure and tested with plain values.

use serde::Deserialize;

/// One response.
#[derive(Debug, Clone, Default)]
pub(super) struct Reply {
    pub status: u16,
    pub headers: ReplyHeaders,
    pub body: String,
}

/// The response headers prpd reads.
#[derive(Debug, Clone, Default)]
pub(super) struct ReplyHeaders {
    /// `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
    /// `x-ratelimit-remaining`.
    pub ratelimit_remaining: Option<u64>,
    /// `x-ratelimit-reset`, Unix seconds.
    pub ratelimit_reset: Option<u64>,
    /// `X-Accepted-GitHub-Permissions`: what a fine-grained token needs for the request.
    pub accepted_permissions: Option<String>,
    /// `X-Accepted-OAuth-Scopes`: what a classic token needs for the request.
    pub accepted_scopes: Option<String>,
}

/// GitHub's error body: `{"message": …, "errors": [{"message": …} | {"code": …, "field": …}]}`.
#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
}

/// How much of a body that is not GitHub's JSON (a proxy's HTML page) a message quotes.
const QUOTED_BODY_CHARS: usize = 300;

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// GitHub's `message`, followed by each entry of `errors` (their `message`, or
    /// `code` and `field`); a body that is not GitHub's JSON is quoted, cut short.
    pub fn message(&self) -> String {
        let Ok(parsed) = serde_json::from_str::<ErrorBody>(&self.body) else {
            let text = self.body.trim();
            if text.is_empty() {
                return "(no message)".to_owned();
            }
            let quoted: String = text.chars().take(QUOTED_BODY_CHARS).collect();
            return if quoted.len() < text.len() {
                format!("{quoted}…")
            } else {
                quoted
            };
        };
        let mut parts: Vec<String> = parsed.message.into_iter().collect();
        parts.extend(parsed.errors.iter().filter_map(error_entry));
        if parts.is_empty() {
            "(no message)".to_owned()
        } else {
            parts.join("; ")
        }
    }
}

/// One entry of GitHub's `errors` array, as words.
fn error_entry(entry: &serde_json::Value) -> Option<String> {
    if let Some(text) = entry.as_str() {
        return Some(text.to_owned());
    }
    if let Some(message) = entry.get("message").and_then(serde_json::Value::as_str) {
        return Some(message.to_owned());
    }
    let code = entry.get("code").and_then(serde_json::Value::as_str)?;
    Some(
        match entry.get("field").and_then(serde_json::Value::as_str) {
            Some(field) => format!("{field}: {code}"),
            None => code.to_owned(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::Reply;

    fn reply(body: &str) -> Reply {
        Reply {
            status: 422,
            body: body.to_owned(),
            ..Reply::default()
        }
    }

    #[test]
    fn the_message_joins_github_s_message_and_its_errors() {
        let table = [
            (
                r#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for octocat:prp/x."}],"documentation_url":"https://docs.github.com/rest"}"#,
                "Validation Failed; A pull request already exists for octocat:prp/x.",
            ),
            (
                r#"{"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"}]}"#,
                "Validation Failed; title: missing_field",
            ),
            (r#"{"message":"Bad credentials"}"#, "Bad credentials"),
            ("", "(no message)"),
            ("{}", "(no message)"),
            ("<html>Bad gateway</html>", "<html>Bad gateway</html>"),
        ];
        for (body, expected) in table {
            assert_eq!(reply(body).message(), expected, "{body}");
        }
    }

    #[test]
    fn a_long_body_that_is_not_json_is_quoted_short() {
        let message = reply(&"x".repeat(5000)).message();
        assert_eq!(message.chars().count(), 301);
        assert!(message.ends_with('…'));
    }
}
