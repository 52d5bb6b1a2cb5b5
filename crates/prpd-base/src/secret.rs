//! A token prpd holds but must never show: the SHIP token (pushes, the GitHub API) and any
//! other credential read from the environment. The type exists so a secret cannot reach a log,
//! a report, a prompt or a PR body by accident: it has no `Display`, its `Debug` prints a
//! placeholder, and the one way to the text is [`Secret::expose`], which reads as what it is at
//! the call site. [`Secret::redact`] scrubs a text that may have picked it up (a server's error
//! message echoing a header, say) before prpd keeps that text.

use std::fmt;

/// What a redacted secret reads as.
pub const REDACTED: &str = "[redacted]";

/// A credential's value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value of environment variable `name`, when it is set and not blank.
    pub fn from_env(name: &str) -> Option<Secret> {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
            .map(|value| Secret(value.trim().to_owned()))
    }

    /// The secret's text, for the one place that must send it (a header, a credentials
    /// callback).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_owned();
        }
        text.replace(&self.0, REDACTED)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Secret({REDACTED})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let secret = Secret::new("ghp_abcdefghijklmnop");
        assert_eq!(format!("{secret:?}"), "Secret([redacted])");
        assert!(!format!("{:?}", Some(&secret)).contains("ghp_"));
    }

    #[test]
    fn redact_replaces_every_occurrence() {
        let secret = Secret::new("tok123456");
        assert_eq!(
            secret.redact("Authorization: Bearer tok123456 (tok123456)"),
            "Authorization: Bearer [redacted] ([redacted])"
        );
        assert_eq!(Secret::new("").redact("plain"), "plain");
    }
}
