//! Waiting for the remote CI (`[ship] wait_for_checks`): the check runs and the commit
//! statuses of the pushed commit, looked at again with exponential backoff (the first delay,
//! doubled each time, at most the longest delay) until they have all finished, or the timeout
//! comes, or none has appeared after a grace period. Each ending is an outcome
//! ([`ChecksOutcome`](super::ChecksOutcome)), not an error: an `Err` means prpd could not ask.
//! A look that fails for a passing reason (the network, a rate limit, a 5xx) is tried again on
//! the same schedule until the timeout; a refusal (401, 403, 404) ends the wait at once.
//!
//! Check runs are read page by page (`per_page=100`) from
//! `/repos/{o}/{r}/commits/{sha}/check-runs`; statuses from `/commits/{sha}/status` (octocrab's
//! own `combined_status_for_ref` takes only a branch or tag). The combined `state` is not used:
//! GitHub reports `pending` for a commit with no status at all, which would wait for nothing.
//! prpd's own verdict (`prpd / verdict`, a check run or a status) is not the remote CI's and
//! is left out.

use std::time::Duration;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;
use tokio::time::Instant;

use super::check_run::VERDICT_CHECK_NAME;
use super::checks::{CheckRunJson, Look, RemoteCheck, RemoteChecks, StatusJson, look};
use super::client::{GitHub, Verb};
use super::error::GitHubError;

/// How long and how often prpd looks at a commit's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollPolicy {
    /// When to stop waiting for pending checks ([`ChecksOutcome::TimedOut`](super::ChecksOutcome::TimedOut)).
    pub timeout: Duration,
    /// The wait before the second look; doubled after each look.
    pub first_delay: Duration,
    /// The longest wait between two looks.
    pub max_delay: Duration,
    /// How long a commit may show no check at all before prpd says so
    /// ([`ChecksOutcome::NoChecksReported`](super::ChecksOutcome::NoChecksReported)); CI needs a moment to register its checks.
    pub no_checks_grace: Duration,
}

impl PollPolicy {
    /// `timeout`, with a first delay of 10 s, at most a minute between looks, and two minutes'
    /// grace for a CI to report its first check.
    pub fn with_timeout(timeout: Duration) -> PollPolicy {
        PollPolicy {
            timeout,
            first_delay: Duration::from_secs(10),
            max_delay: Duration::from_secs(60),
            no_checks_grace: Duration::from_secs(120),
        }
    }
}

/// The shortest wait between two looks, whatever the policy says: a zero delay would ask
/// GitHub as fast as it answers.
const SHORTEST_DELAY: Duration = Duration::from_millis(1);

/// Pages read at most from one list (100 each): a bound on a runaway `total_count`.
const MAX_PAGES: u32 = 20;

/// One page of `GET /repos/{o}/{r}/commits/{ref}/check-runs`.
#[derive(Debug, Deserialize)]
struct CheckRunsPage {
    total_count: usize,
    check_runs: Vec<CheckRunJson>,
}

/// One page of `GET /repos/{o}/{r}/commits/{ref}/status`.
#[derive(Debug, Deserialize)]
struct CombinedStatusPage {
    #[serde(default)]
    total_count: Option<usize>,
    statuses: Vec<StatusJson>,
}

impl GitHub {
    /// Waits for the checks of commit `sha` as `policy` says.
    pub async fn wait_for_checks(
        &self,
        sha: &str,
        policy: &PollPolicy,
    ) -> Result<RemoteChecks, GitHubError> {
        let started = Instant::now();
        let mut delay = policy.first_delay.max(SHORTEST_DELAY);
        loop {
            let checks = match self.checks_of(sha).await {
                Ok(checks) => checks,
                Err(error) if error.is_transient() && started.elapsed() < policy.timeout => {
                    let wait = delay.min(policy.timeout.saturating_sub(started.elapsed()));
                    tracing::warn!(sha, %error, "could not read the remote checks; looking again");
                    tokio::time::sleep(wait.max(SHORTEST_DELAY)).await;
                    delay = (delay * 2).min(policy.max_delay.max(SHORTEST_DELAY));
                    continue;
                }
                Err(error) => return Err(error),
            };
            let elapsed = started.elapsed();
            match look(&checks, elapsed, policy.timeout, policy.no_checks_grace) {
                Look::Done(outcome) => {
                    return Ok(RemoteChecks {
                        sha: sha.to_owned(),
                        outcome,
                        checks,
                    });
                }
                Look::Again => {
                    let deadline = if checks.is_empty() {
                        policy.no_checks_grace.min(policy.timeout)
                    } else {
                        policy.timeout
                    };
                    let wait = delay
                        .min(deadline.saturating_sub(elapsed))
                        .max(SHORTEST_DELAY);
                    tracing::debug!(
                        sha,
                        checks = checks.len(),
                        wait_seconds = wait.as_secs_f64(),
                        "remote checks not finished; looking again"
                    );
                    tokio::time::sleep(wait).await;
                    delay = (delay * 2).min(policy.max_delay.max(SHORTEST_DELAY));
                }
            }
        }
    }

    /// Every check run and status of `sha`, as they stand now.
    async fn checks_of(&self, sha: &str) -> Result<Vec<RemoteCheck>, GitHubError> {
        let sha_segment = utf8_percent_encode(sha, NON_ALPHANUMERIC).to_string();
        let short_sha: String = sha.chars().take(12).collect();
        let mut checks = Vec::new();
        let mut seen = 0;
        for page in 1..=MAX_PAGES {
            let listed: CheckRunsPage = self
                .request(
                    Verb::Get,
                    &self.repo_route(&format!(
                        "commits/{sha_segment}/check-runs?per_page=100&page={page}"
                    )),
                    None,
                    &format!("list the check runs of {short_sha}"),
                )
                .await?;
            let count = listed.check_runs.len();
            seen += count;
            checks.extend(
                listed
                    .check_runs
                    .into_iter()
                    .map(CheckRunJson::into_check)
                    .filter(is_remote),
            );
            if count == 0 || seen >= listed.total_count {
                break;
            }
        }
        let mut seen = 0;
        for page in 1..=MAX_PAGES {
            let combined: CombinedStatusPage = self
                .request(
                    Verb::Get,
                    &self.repo_route(&format!(
                        "commits/{sha_segment}/status?per_page=100&page={page}"
                    )),
                    None,
                    &format!("read the commit statuses of {short_sha}"),
                )
                .await?;
            let count = combined.statuses.len();
            seen += count;
            checks.extend(
                combined
                    .statuses
                    .into_iter()
                    .map(StatusJson::into_check)
                    .filter(is_remote),
            );
            if count == 0 || seen >= combined.total_count.unwrap_or(seen) {
                break;
            }
        }
        Ok(checks)
    }
}

/// Whether a check is the remote CI's, not prpd's own verdict (`check_run.rs`): prpd's word on
/// the commit is no CI passing it, so a commit whose only check is `prpd / verdict` still has
/// no checks reported.
fn is_remote(check: &RemoteCheck) -> bool {
    check.name != VERDICT_CHECK_NAME
}
