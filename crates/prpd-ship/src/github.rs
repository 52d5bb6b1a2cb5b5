//! The GitHub REST API client SHIP uses: pull requests, comments, issues and remote checks,
//! through octocrab's raw requests read into prpd's own small response types.
//!
//! Theory of operation. [`GitHub::new`] validates a [`GitHubTarget`] (API URL, `owner/repo`,
//! the token and where it came from) and builds one octocrab client with no retry of its own.
//! Every call goes through `client.rs`, which sends one request, waits out a rate limit
//! (`Retry-After`, `x-ratelimit-reset`) within [`RateLimitPolicy`], and turns any other failure
//! into a [`GitHubError`] whose message says what to do and never holds the token.
//! [`GitHub::open_or_update_pull_request`] (`pulls.rs`) finds the open pull request of the
//! branch and updates it, or opens one, then adds the labels; [`GitHub::open_issue`]
//! (`issues.rs`) files the escalation issue; [`GitHub::wait_for_checks`] (`wait.rs`) polls the
//! check runs and commit statuses of a SHA with backoff and returns [`RemoteChecks`]
//! (`checks.rs`, pure): finished, timed out, or no checks at all — never a silent pass.
//! [`GitHub::publish_verdict`] (`check_run.rs`) puts the run's proof on the shipped commit as
//! the check run `prpd / verdict`, or as a commit status when the token is not a GitHub App's.
//! [`repository_from_remote_url`] reads `owner/repo` from a git remote's URL; [`repository_for`]
//! and [`client_for`] (`repository.rs`) turn `[ship]` into the repository and its client, and
//! [`not_on_github`] says why SHIP opens no pull request when the remote is not on GitHub.
//!
//! Responses are read into minimal serde structs rather than octocrab's models, so a field
//! GitHub adds, drops or nulls cannot fail a ship, and tests can answer with GitHub's documented
//! examples (`tests/fixtures/github/`).

mod body_limit;
mod check_run;
mod checks;
mod client;
mod error;
mod issues;
mod pulls;
mod rate_limit;
mod remote_url;
mod reply;
mod repository;
mod wait;

#[cfg(test)]
mod tests;

pub use check_run::{Published, VERDICT_CHECK_NAME, VerdictCheck};
pub use checks::{CheckSource, ChecksOutcome, Conclusion, RemoteCheck, RemoteChecks};
pub use client::{GitHub, GitHubTarget};
pub use error::GitHubError;
pub use issues::IssueRef;
pub use pulls::{Opened, PullRequest, PullRequestDraft};
pub use rate_limit::RateLimitPolicy;
pub use remote_url::{github_repository_from_remote_url, remote_host, repository_from_remote_url};
pub use repository::{client_for, not_on_github, repository_for};
pub use wait::PollPolicy;
