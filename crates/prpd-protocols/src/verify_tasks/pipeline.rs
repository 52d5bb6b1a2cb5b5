//! The `[VERIFY] CI pipeline passes` task outside the loop: the remote checks of the commit `HEAD`
//! points at, read through SHIP's GitHub client (`prpd-ship/src/github`: the same requests, the
//! same wait with backoff until every check finished or `[ship] checks_timeout` passed, the same
//! rule that only `success`, `neutral` and `skipped` pass). A remote CI prpd cannot see never
//! passes: no token in the variable `[ship] token_env` names, no GitHub repository in `[ship]` or
//! the remote's URL, a commit GitHub does not know, a refusal — each fails the task with what to
//! set. Every text GitHub sends back is scrubbed of the token.

use std::path::Path;

use super::result::PipelineFinding;
use prpd_base::secret::Secret;
use prpd_ship::config::ShipConfig;
use prpd_ship::github::{self, PollPolicy, RemoteCheck, RemoteChecks};

/// The remote CI's word on `HEAD` of the repository at `repo`.
pub async fn remote_checks(repo: &Path, ship: &ShipConfig) -> PipelineFinding {
    let Some(token) = Secret::from_env(&ship.token_env) else {
        return PipelineFinding::NotAsked(format!(
            "no token in ${}: set it to a GitHub token that may read this repository's checks \
             (`[ship] token_env` in prpd.toml names the variable); a remote CI prpd cannot see \
             does not pass",
            ship.token_env
        ));
    };
    let (folder, settings, secret) = (repo.to_path_buf(), ship.clone(), token.clone());
    let prepared = tokio::task::spawn_blocking(move || {
        let sha = head_commit(&folder)?;
        let client = github::client_for(&folder, &settings, &secret)?;
        Ok::<_, String>((sha, client))
    })
    .await
    .map_err(|error| format!("reading the repository stopped unexpectedly: {error}"))
    .and_then(|prepared| prepared);
    let (sha, client) = match prepared {
        Ok(prepared) => prepared,
        Err(why) => return PipelineFinding::NotAsked(token.redact(&why)),
    };
    tracing::info!(sha, "[VERIFY]: waiting for the remote checks of HEAD");
    match client
        .wait_for_checks(&sha, &PollPolicy::with_timeout(ship.checks_timeout))
        .await
    {
        Ok(checks) => PipelineFinding::Checked(redacted(checks, &token)),
        Err(error) => PipelineFinding::NotAsked(token.redact(&format!(
            "could not read the remote checks of {sha}: {error}"
        ))),
    }
}

/// The commit `HEAD` points at.
fn head_commit(repo: &Path) -> Result<String, String> {
    let repository = git2::Repository::open(repo).map_err(|error| {
        format!(
            "cannot open the repository {}: {}",
            repo.display(),
            error.message()
        )
    })?;
    let commit = repository
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|error| {
            format!(
                "the repository has no commit at HEAD ({}): commit and push the work whose CI \
                 is to be verified",
                error.message()
            )
        })?;
    Ok(commit.id().to_string())
}

/// `checks` with every text GitHub sent scrubbed of `token`.
fn redacted(checks: RemoteChecks, token: &Secret) -> RemoteChecks {
    let scrub = |text: Option<String>| text.map(|text| token.redact(&text));
    RemoteChecks {
        checks: checks
            .checks
            .into_iter()
            .map(|check| RemoteCheck {
                name: token.redact(&check.name),
                url: scrub(check.url),
                title: scrub(check.title),
                summary: scrub(check.summary),
                ..check
            })
            .collect(),
        ..checks
    }
}
