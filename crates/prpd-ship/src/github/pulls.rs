//! The run's pull request: one per branch. prpd looks for the open pull request of the head
//! branch first and updates its title and body; only when there is none does it open one (a
//! ship that is run again after a crash, or a later run of the same PRP, never opens a second).
//! When GitHub answers the opening with 422 "A pull request already exists" (another ship won
//! the race), prpd updates that one instead. Labels are added after either; a comment can tell
//! the pull request's readers what a later run changed.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;

use super::client::{Answer, GitHub, Verb};
use super::error::GitHubError;

/// The pull request a run wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestDraft {
    /// The branch prpd pushed, in the repository itself (`prp/add-greeting`).
    pub head: String,
    /// The branch it goes into (`main`).
    pub base: String,
    pub title: String,
    pub body: String,
    /// Labels to add to it.
    pub labels: Vec<String>,
    /// Open it as a draft (ignored when an open pull request is updated).
    pub draft: bool,
}

/// Whether the pull request is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Opened {
    /// prpd opened it.
    New,
    /// It was open already; prpd replaced its title and body.
    Updated,
}

/// The pull request on GitHub.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub html_url: String,
    /// The commit GitHub has as the head, when it said.
    pub head_sha: Option<String>,
    pub opened: Opened,
}

/// The fields prpd reads from GitHub's pull request object.
#[derive(Debug, Deserialize)]
struct PullJson {
    number: u64,
    html_url: String,
    head: Option<HeadJson>,
}

#[derive(Debug, Deserialize)]
struct HeadJson {
    sha: Option<String>,
}

impl PullJson {
    fn into_pull_request(self, opened: Opened) -> PullRequest {
        PullRequest {
            number: self.number,
            html_url: self.html_url,
            head_sha: self.head.and_then(|head| head.sha),
            opened,
        }
    }
}

/// What opening a pull request came to.
enum Opening {
    Opened(PullJson),
    /// 422: one is open for the branch already.
    AlreadyExists,
}

impl GitHub {
    /// Updates the open pull request of `draft.head`, or opens one, then adds the labels.
    pub async fn open_or_update_pull_request(
        &self,
        draft: &PullRequestDraft,
    ) -> Result<PullRequest, GitHubError> {
        let pull = match self.open_pull_of(&draft.head).await? {
            Some(existing) => self.update(existing.number, draft).await?,
            None => match self.open(draft).await? {
                Opening::Opened(pull) => pull.into_pull_request(Opened::New),
                Opening::AlreadyExists => {
                    let existing = self.open_pull_of(&draft.head).await?.ok_or_else(|| {
                        GitHubError::Unexpected {
                            status: 422,
                            action: format!("open a pull request from {}", draft.head),
                            message: "GitHub says a pull request for the branch exists, but lists none open for it".to_owned(),
                        }
                    })?;
                    self.update(existing.number, draft).await?
                }
            },
        };
        if !draft.labels.is_empty() {
            self.request::<IgnoredAny>(
                Verb::Post,
                &self.repo_route(&format!("issues/{}/labels", pull.number)),
                Some(&json!({ "labels": draft.labels })),
                &format!("add labels to pull request #{}", pull.number),
            )
            .await?;
        }
        Ok(pull)
    }

    /// Comments on pull request (or issue) `number`.
    pub async fn comment(&self, number: u64, body: &str) -> Result<(), GitHubError> {
        self.request::<IgnoredAny>(
            Verb::Post,
            &self.repo_route(&format!("issues/{number}/comments")),
            Some(&json!({ "body": self.outgoing(body) })),
            &format!("comment on pull request #{number}"),
        )
        .await?;
        Ok(())
    }

    /// The open pull request whose head is `branch` of this repository, if any.
    async fn open_pull_of(&self, branch: &str) -> Result<Option<PullJson>, GitHubError> {
        let head = format!("{}:{branch}", self.owner());
        let route = self.repo_route(&format!(
            "pulls?state=open&head={}&per_page=100",
            utf8_percent_encode(&head, NON_ALPHANUMERIC)
        ));
        let open: Vec<PullJson> = self
            .request(
                Verb::Get,
                &route,
                None,
                &format!("list the open pull requests of {branch}"),
            )
            .await?;
        Ok(open.into_iter().min_by_key(|pull| pull.number))
    }

    async fn open(&self, draft: &PullRequestDraft) -> Result<Opening, GitHubError> {
        let action = format!(
            "open a pull request from {} into {}",
            draft.head, draft.base
        );
        let body = json!({
            "title": self.outgoing(&draft.title),
            "head": draft.head,
            "base": draft.base,
            "body": self.outgoing(&draft.body),
            "draft": draft.draft,
        });
        match self
            .send(Verb::Post, &self.repo_route("pulls"), Some(&body), &action)
            .await?
        {
            Answer::Done(reply) => Ok(Opening::Opened(self.read(&reply, &action)?)),
            Answer::Refused(reply)
                if reply.status == 422
                    && reply.message().to_lowercase().contains("already exists") =>
            {
                Ok(Opening::AlreadyExists)
            }
            Answer::Refused(reply) => Err(self.refused(&reply, &action)),
        }
    }

    async fn update(
        &self,
        number: u64,
        draft: &PullRequestDraft,
    ) -> Result<PullRequest, GitHubError> {
        let updated: PullJson = self
            .request(
                Verb::Patch,
                &self.repo_route(&format!("pulls/{number}")),
                Some(&json!({
                    "title": self.outgoing(&draft.title),
                    "body": self.outgoing(&draft.body),
                })),
                &format!("update pull request #{number}"),
            )
            .await?;
        Ok(updated.into_pull_request(Opened::Updated))
    }
}
