//! The issue prpd opens when a run escalates and `[ship] issue_on_escalation` is on, so the
//! escalation report reaches the people who watch the repository, not only the run directory.

use serde::Deserialize;
use serde_json::json;

use super::client::{GitHub, Verb};
use super::error::GitHubError;

/// An issue prpd opened.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct IssueRef {
    pub number: u64,
    pub html_url: String,
}

impl GitHub {
    /// Opens an issue with `title`, `body` (cut to GitHub's limit) and `labels`.
    pub async fn open_issue(
        &self,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> Result<IssueRef, GitHubError> {
        self.request(
            Verb::Post,
            &self.repo_route("issues"),
            Some(&json!({
                "title": self.outgoing(title),
                "body": self.outgoing(body),
                "labels": labels,
            })),
            "open an issue",
        )
        .await
    }
}
