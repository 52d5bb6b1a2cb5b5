//! The run's verdict on the shipped commit, where the pull request's reviewers see it: a check
//! run named `prpd / verdict` whose output holds the proof (`proof.md`).
//!
//! GitHub lets only a GitHub App create check runs; a personal access token, classic or
//! fine-grained, is refused with 403 ("Resource not accessible by personal access token", "You
//! must authenticate via a GitHub App"). prpd does not pretend otherwise: on that 403 it falls
//! back to a commit status with the same context (`POST /repos/{o}/{r}/statuses/{sha}`), whose
//! description holds one line of the proof (at most 140 characters), and [`Published`] says
//! which of the two GitHub took and why. A token that may create neither gets the second 403
//! back as the error; every other failure is the check run's own.

use std::time::SystemTime;

use serde::Deserialize;
use serde_json::json;

use super::body_limit;
use super::client::{Answer, GitHub, Verb};
use super::error::GitHubError;

/// The check run's (and the fallback status's) name.
pub const VERDICT_CHECK_NAME: &str = "prpd / verdict";

/// The most characters GitHub takes in a commit status's description.
const MAX_DESCRIPTION_CHARS: usize = 140;

/// The verdict as prpd publishes it on a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictCheck {
    /// The shipped commit (40 hex digits), pushed already: GitHub knows only pushed commits.
    pub sha: String,
    /// Whether the verdict is a pass (`success`) or not (`failure`).
    pub passed: bool,
    /// The output's title, and the status's description when it comes to that.
    pub title: String,
    /// The output's summary (Markdown), cut to GitHub's limit.
    pub summary: String,
    /// The output's text (Markdown): the whole proof, cut to GitHub's limit.
    pub text: String,
    /// When the verdict was reached (`completed_at`).
    pub completed_at: SystemTime,
}

/// What GitHub took.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum Published {
    /// A check run, shown on the pull request with the whole proof.
    CheckRun { html_url: String },
    /// A commit status, because the token may not create check runs (`why` quotes GitHub).
    CommitStatus { why: String },
}

/// The fields prpd reads from a created check run.
#[derive(Debug, Deserialize)]
struct CreatedCheckRun {
    html_url: String,
}

impl GitHub {
    /// Publishes `check` as a check run, or as a commit status when the token may not create
    /// check runs.
    pub async fn publish_verdict(&self, check: &VerdictCheck) -> Result<Published, GitHubError> {
        let short: String = check.sha.chars().take(12).collect();
        let action = format!("create the check run `{VERDICT_CHECK_NAME}` on {short}");
        let body = json!({
            "name": VERDICT_CHECK_NAME,
            "head_sha": check.sha,
            "status": "completed",
            "conclusion": if check.passed { "success" } else { "failure" },
            "completed_at": humantime::format_rfc3339_seconds(check.completed_at).to_string(),
            "output": {
                "title": self.output(&check.title),
                "summary": self.output(&check.summary),
                "text": self.output(&check.text),
            },
        });
        let refusal = match self
            .send(
                Verb::Post,
                &self.repo_route("check-runs"),
                Some(&body),
                &action,
            )
            .await?
        {
            Answer::Done(reply) => {
                let created: CreatedCheckRun = self.read(&reply, &action)?;
                return Ok(Published::CheckRun {
                    html_url: created.html_url,
                });
            }
            Answer::Refused(reply) if reply.status == 403 => self.refused(&reply, &action),
            Answer::Refused(reply) => return Err(self.refused(&reply, &action)),
        };
        tracing::info!(%refusal, "the token may not create check runs; publishing a commit status");
        self.request::<serde::de::IgnoredAny>(
            Verb::Post,
            &self.repo_route(&format!("statuses/{}", check.sha)),
            Some(&json!({
                "state": if check.passed { "success" } else { "failure" },
                "context": VERDICT_CHECK_NAME,
                "description": description(&self.outgoing(&check.title)),
            })),
            &format!("create the commit status `{VERDICT_CHECK_NAME}` on {short}"),
        )
        .await?;
        Ok(Published::CommitStatus {
            why: format!(
                "GitHub creates check runs only for a GitHub App, and refused this token: {refusal}"
            ),
        })
    }

    /// A check run's output text: the token redacted, cut to GitHub's limit.
    fn output(&self, text: &str) -> String {
        body_limit::fit_within(&self.outgoing(text), body_limit::MAX_OUTPUT_CHARS)
    }
}

/// `title` as a status's description: one line, at most 140 characters.
fn description(title: &str) -> String {
    let line = title.lines().next().unwrap_or("").trim();
    if line.chars().count() <= MAX_DESCRIPTION_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::description;

    #[test]
    fn a_status_description_is_one_line_of_at_most_140_characters() {
        assert_eq!(description("APPROVE: 1 test\nmore"), "APPROVE: 1 test");
        let long = "é".repeat(200);
        let cut = description(&long);
        assert_eq!(cut.chars().count(), 140);
        assert!(cut.ends_with('…'));
    }
}
