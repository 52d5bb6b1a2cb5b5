//! Which GitHub repository `[ship]` means, and the client for it: the repository `[ship]
//! repository` names, else the one the push remote's URL names (`[ship] remote`) when that
//! remote is on GitHub (github.com or the host of `[ship] api_url`). SHIP's pull request and
//! remote checks, the escalation issue and a `[VERIFY] CI pipeline passes` task all ask here,
//! so each refuses the same way when prpd cannot tell where to go — except SHIP itself, which
//! asks [`not_on_github`] first: a remote that is not on GitHub (GitLab, a self-hosted server,
//! a local bare repository) with no `[ship] repository` gets the push and no pull request.

use std::path::Path;

use super::remote_url::github_repository_from_remote_url;
use super::{GitHub, GitHubTarget};
use crate::config::ShipConfig;
use crate::git;
use prpd_base::secret::Secret;

/// `(owner, name)` for `[ship]` in the repository at `repo`, or a message that says what to
/// set. Reads the remote with git2: call it off the async threads.
pub fn repository_for(repo: &Path, ship: &ShipConfig) -> Result<(String, String), String> {
    if let Some(repository) = &ship.repository {
        return Ok(repository.clone());
    }
    let destination = git::destination(repo, &ship.remote).map_err(|error| error.to_string())?;
    let shown = destination
        .as_ref()
        .map_or_else(|| ship.remote.clone(), |found| found.shown.clone());
    destination
        .and_then(|found| github_repository_from_remote_url(&found.url, &ship.api_url))
        .ok_or_else(|| {
            format!(
                "prpd cannot tell which GitHub repository to use: the remote {shown} is not a \
                 GitHub URL (https://HOST/OWNER/REPO or git@HOST:OWNER/REPO on github.com or \
                 the host of `[ship] api_url`); set `[ship] repository = \"owner/name\"` in \
                 prpd.toml"
            )
        })
}

/// Why SHIP opens no pull request for `[ship]` in the repository at `repo`: `[ship]
/// repository` is not set and the push remote's URL is not on GitHub, so there is no GitHub
/// repository the work could be proposed to — the push is the delivery. `None` when there is
/// one, or when `[ship] repository` is set (then a repository that cannot be reached is a
/// failure, not a reason). Reads the remote with git2: call it off the async threads.
pub fn not_on_github(repo: &Path, ship: &ShipConfig) -> Result<Option<String>, git::ShipError> {
    if ship.repository.is_some() {
        return Ok(None);
    }
    let Some(destination) = git::destination(repo, &ship.remote)? else {
        return Ok(None);
    };
    Ok(
        github_repository_from_remote_url(&destination.url, &ship.api_url)
            .is_none()
            .then(|| {
                format!(
                    "no pull request was opened: the remote {} is not on GitHub (github.com or \
                     the host of `[ship] api_url`) and `[ship] repository` is not set; the \
                     branch is pushed and its pull request's title and body are in pr.md",
                    destination.shown
                )
            }),
    )
}

/// The client for [`repository_for`] with `token` (from the variable `[ship] token_env`
/// names), or a message that says what to set.
pub fn client_for(repo: &Path, ship: &ShipConfig, token: &Secret) -> Result<GitHub, String> {
    let (owner, name) = repository_for(repo, ship)?;
    GitHub::new(GitHubTarget {
        api_url: ship.api_url.clone(),
        owner,
        repo: name,
        token: token.clone(),
        token_source: format!("${}", ship.token_env),
    })
    .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_repo(remote_url: Option<&str>) -> tempfile::TempDir {
        let directory = tempfile::tempdir().expect("temporary directory");
        let repository = git2::Repository::init(directory.path()).expect("git init");
        if let Some(url) = remote_url {
            repository.remote("origin", url).expect("add the remote");
        }
        directory
    }

    #[test]
    fn the_configured_repository_wins_then_the_remote_url_then_a_message() {
        let github = git_repo(Some("git@github.com:acme/calc.git"));
        let mut ship = ShipConfig::default();
        assert_eq!(
            repository_for(github.path(), &ship),
            Ok(("acme".to_owned(), "calc".to_owned()))
        );
        ship.repository = Some(("other".to_owned(), "name".to_owned()));
        assert_eq!(
            repository_for(github.path(), &ship),
            Ok(("other".to_owned(), "name".to_owned()))
        );
        let local = git_repo(Some("/srv/git/calc.git"));
        let message = repository_for(local.path(), &ShipConfig::default())
            .expect_err("a local path names no GitHub repository");
        assert!(message.contains("/srv/git/calc.git"), "{message}");
        assert!(message.contains("[ship] repository"), "{message}");
        let without = git_repo(None);
        let message =
            repository_for(without.path(), &ShipConfig::default()).expect_err("no remote at all");
        assert!(message.contains("origin"), "{message}");
    }

    #[tokio::test]
    async fn a_client_is_refused_with_what_to_fix() {
        let github = git_repo(Some("https://github.com/acme/calc"));
        let mut ship = ShipConfig::default();
        let token = Secret::new("ghp_test0123456789");
        assert!(client_for(github.path(), &ship, &token).is_ok());
        ship.api_url = "ftp://example.com".to_owned();
        let message = client_for(github.path(), &ship, &token).expect_err("not http");
        assert!(message.contains("api_url"), "{message}");
        assert!(!message.contains("ghp_test0123456789"), "{message}");
    }

    #[test]
    fn a_remote_off_github_without_a_configured_repository_gets_no_pull_request() {
        let ship = ShipConfig::default();
        for url in [
            "/srv/git/calc.git",
            "https://gitlab.com/acme/calc.git",
            "git@git.example.com:acme/calc.git",
        ] {
            let local = git_repo(Some(url));
            let why = not_on_github(local.path(), &ship)
                .expect("the remote reads")
                .expect("no GitHub repository");
            assert!(
                why.contains("no pull request was opened") && why.contains(url),
                "{why}"
            );
            assert!(repository_for(local.path(), &ship).is_err(), "{url}");
        }
        let github = git_repo(Some("git@github.com:acme/calc.git"));
        assert_eq!(not_on_github(github.path(), &ship).expect("reads"), None);
        let configured = ShipConfig {
            repository: Some(("acme".to_owned(), "calc".to_owned())),
            ..ShipConfig::default()
        };
        let gitlab = git_repo(Some("https://gitlab.com/acme/calc.git"));
        assert_eq!(
            not_on_github(gitlab.path(), &configured).expect("reads"),
            None,
            "a configured repository is the user's word: reaching it is required"
        );
    }
}
