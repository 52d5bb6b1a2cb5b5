//! The GitHub client a run uses, built from `[ship]`: the API URL, the repository (configured,
//! or read from the push remote's URL) and the token. It stands apart because SHIP's pull
//! request and remote checks and the escalation issue all need it, and each must refuse the
//! same way when prpd cannot tell where to go.

use crate::base::secret::Secret;
use crate::ship::git;
use crate::ship::github::{GitHub, GitHubTarget, repository_from_remote_url};

use super::Driver;

impl Driver {
    /// The client for this run's repository, or a message that says what to set.
    pub(super) async fn github(&self, token: &Secret) -> Result<GitHub, String> {
        let config = &self.context.config.ship;
        let (owner, repo) = match &config.repository {
            Some(repository) => repository.clone(),
            None => self.repository_of_remote().await?,
        };
        GitHub::new(GitHubTarget {
            api_url: config.api_url.clone(),
            owner,
            repo,
            token: token.clone(),
            token_source: format!("${}", config.token_env),
        })
        .map_err(|error| error.to_string())
    }

    /// `owner/repo` of the push remote's URL.
    async fn repository_of_remote(&self) -> Result<(String, String), String> {
        let (repo, spec) = (
            self.context.repo.clone(),
            self.context.config.ship.remote.clone(),
        );
        let destination = tokio::task::spawn_blocking(move || git::destination(&repo, &spec))
            .await
            .map_err(|error| format!("reading the remote stopped unexpectedly: {error}"))?
            .map_err(|error| error.to_string())?;
        let shown = destination.as_ref().map_or_else(
            || self.context.config.ship.remote.clone(),
            |destination| destination.shown.clone(),
        );
        destination
            .and_then(|destination| repository_from_remote_url(&destination.url))
            .ok_or_else(|| {
                format!(
                    "prpd cannot tell which GitHub repository to use: the remote {shown} is not a \
                     GitHub URL (https://HOST/OWNER/REPO or git@HOST:OWNER/REPO); set \
                     `[ship] repository = \"owner/name\"` in prpd.toml, then run `prpd resume`"
                )
            })
    }
}
