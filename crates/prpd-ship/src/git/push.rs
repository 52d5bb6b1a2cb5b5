//! The push: the shipped branch to the destination (`remote.rs`), with git2.
//!
//! Credentials. When the remote asks for them, a credentials callback hands git the user name
//! `x-access-token` and the token as its password — GitHub's form for a token over https. The
//! token is never put in a URL, so it cannot reach a log, a message or `.git/config`. A remote
//! that asks again after that refused the token, and the push stops there instead of asking
//! forever. A `file://` or path remote never asks.
//!
//! Rejections. First the remote's refs are listed. When the branch there is already the
//! commit, nothing is pushed (a SHIP resumed after a crash between push and record). When it
//! is prpd's earlier commit for the same PRP (a previous run, see `branch.rs`), it is replaced
//! with a lease: a forced update that goes through only while the remote still holds that very
//! commit (checked in `push_negotiation`, right before git sends anything). Otherwise the push
//! is a plain one: a branch holding someone else's commits is refused as non-fast-forward,
//! whether git finds it out itself or the remote reports it through `push_update_reference`,
//! and the message says what to do. The local branch keeps the commit either way.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;

use git2::{CredentialType, Direction, ErrorClass, ErrorCode, Oid, PushOptions, RemoteCallbacks};

use prpd_base::secret::Secret;

use super::branch::is_prpds_commit_for;
use super::commit::open;
use super::remote::Destination;
use super::{ShipError, git, short};

/// The user name a token is sent with.
pub const TOKEN_USER: &str = "x-access-token";

/// What to push.
#[derive(Debug, Clone)]
pub struct PushRequest {
    /// The repository's root.
    pub repo: PathBuf,
    pub destination: Destination,
    pub branch: String,
    /// The commit the branch points at (hex).
    pub commit: String,
    /// The PRP the commit ships, to recognise prpd's earlier commit on the remote.
    pub prp: PathBuf,
    /// The token git may be given, or why there is none.
    pub token: PushToken,
    /// The environment variable the token comes from, for messages.
    pub token_env: String,
}

/// What a remote that asks for credentials may be given.
#[derive(Debug, Clone)]
pub enum PushToken {
    /// The token: the remote is on GitHub (or the host of `[ship] api_url`).
    Offered(Secret),
    /// No token is set.
    Unset,
    /// A token is set but is not for this remote: a GitHub token goes to GitHub only, never to
    /// another host (a GitLab or self-hosted remote), which could read it. The remote's host.
    Withheld { host: String },
}

/// What the push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// The branch was created or fast-forwarded on the remote.
    Updated,
    /// The remote's branch held prpd's earlier commit for the PRP (hex), replaced under lease.
    Replaced { previous: String },
    /// The remote's branch already was the commit.
    AlreadyThere,
}

/// Pushes the branch of `request`.
pub fn push(request: &PushRequest) -> Result<Pushed, ShipError> {
    let root = request.repo.as_path();
    let shown = request.destination.shown.clone();
    if let Some(path) = &request.destination.local
        && git2::Repository::open(path).is_err()
    {
        return Err(ShipError::MissingLocalRemote {
            remote: shown,
            path: path.clone(),
        });
    }
    let repo = open(root)?;
    let commit = git(root, "read the commit's id", Oid::from_str(&request.commit))?;
    let mut remote = git(
        root,
        "set up the remote",
        repo.remote_anonymous(&request.destination.url),
    )?;
    let refname = format!("refs/heads/{}", request.branch);
    let problem = RefCell::new(None);

    let on_remote = {
        let attempts = Cell::new(0);
        let callbacks = callbacks(request, &attempts, &problem);
        let connection = remote
            .connect_auth(Direction::Push, Some(callbacks), Some(proxy()))
            .map_err(|error| failure(request, &shown, &error, &problem))?;
        let heads = connection
            .list()
            .map_err(|error| failure(request, &shown, &error, &problem))?;
        heads
            .iter()
            .find(|head| head.name() == refname)
            .map(git2::RemoteHead::oid)
    };
    if on_remote == Some(commit) {
        return Ok(Pushed::AlreadyThere);
    }
    let lease = on_remote.filter(|previous| {
        repo.find_commit(*previous)
            .is_ok_and(|earlier| is_prpds_commit_for(&earlier, &request.prp))
    });

    let rejections = RefCell::new(Vec::new());
    let lease_broken = Cell::new(false);
    let attempts = Cell::new(0);
    let mut callbacks = callbacks(request, &attempts, &problem);
    callbacks.push_update_reference(|name, status| {
        if let Some(status) = status {
            rejections
                .borrow_mut()
                .push((name.to_owned(), status.to_owned()));
        }
        Ok(())
    });
    if let Some(expected) = lease {
        let refname = &refname;
        let lease_broken = &lease_broken;
        callbacks.push_negotiation(move |updates| {
            let moved = updates.iter().any(|update| {
                update
                    .dst_refname()
                    .is_ok_and(|name| name == refname.as_str())
                    && update.src() != expected
            });
            if moved {
                lease_broken.set(true);
                return Err(git2::Error::from_str(
                    "the remote branch moved since prpd looked at it",
                ));
            }
            Ok(())
        });
    }
    let mut options = PushOptions::new();
    options.remote_callbacks(callbacks);
    options.proxy_options(proxy());
    let force = if lease.is_some() { "+" } else { "" };
    let refspec = format!("{force}{refname}:{refname}");
    let pushed = remote.push(&[refspec.as_str()], Some(&mut options));
    drop(options);
    if lease_broken.get() {
        return Err(rejected(
            request,
            &shown,
            "someone pushed to it while prpd was replacing its earlier commit",
        ));
    }
    pushed.map_err(|error| failure(request, &shown, &error, &problem))?;
    if let Some((_, status)) = rejections.borrow().first() {
        return Err(rejected(request, &shown, status));
    }
    Ok(match lease {
        Some(previous) => Pushed::Replaced {
            previous: previous.to_string(),
        },
        None => Pushed::Updated,
    })
}

/// The user name and password git gets on its `attempt`-th request for credentials of the
/// `allowed` kinds, or why there are none to give.
pub(super) fn credential_pair<'token>(
    token: &'token PushToken,
    token_env: &str,
    allowed: CredentialType,
    attempt: u32,
) -> Result<(&'static str, &'token str), String> {
    if !allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
        return Err(
            "it asks for SSH credentials; prpd pushes over https with a token: set `[ship] remote` to the repository's https URL"
                .to_owned(),
        );
    }
    let token = match token {
        PushToken::Offered(token) => token,
        PushToken::Unset => {
            return Err(format!(
                "it asks for credentials and ${token_env} is not set; put a token with write access to the repository's contents in it (see \"The token's scopes\" in docs/src/shipping.md)"
            ));
        }
        PushToken::Withheld { host } => {
            return Err(format!(
                "it asks for credentials, and {host} is not GitHub: prpd gives ${token_env} only to github.com or the host of `[ship] api_url` (GitHub Enterprise), never to another host; push to a remote that needs no credentials from prpd, or set `[ship] api_url` when {host} is your GitHub Enterprise"
            ));
        }
    };
    if attempt > 1 {
        return Err(format!(
            "it refused the token in ${token_env} (wrong or expired, or without write access to the repository's contents)"
        ));
    }
    Ok((TOKEN_USER, token.expose()))
}

/// The callbacks every connection gets: credentials from the token, counted in `attempts`, and
/// the reason there were none in `problem`.
pub(super) fn callbacks<'cb>(
    request: &'cb PushRequest,
    attempts: &'cb Cell<u32>,
    problem: &'cb RefCell<Option<String>>,
) -> RemoteCallbacks<'cb> {
    let mut callbacks = RemoteCallbacks::new();
    callbacks.credentials(move |_url, _user, allowed| {
        attempts.set(attempts.get() + 1);
        match credential_pair(&request.token, &request.token_env, allowed, attempts.get()) {
            Ok((user, password)) => git2::Cred::userpass_plaintext(user, password),
            Err(why) => {
                let error = git2::Error::from_str(&why);
                *problem.borrow_mut() = Some(why);
                Err(error)
            }
        }
    });
    callbacks
}

pub(super) fn proxy<'a>() -> git2::ProxyOptions<'a> {
    let mut proxy = git2::ProxyOptions::new();
    proxy.auto();
    proxy
}

/// The message for a push that git could not carry out.
fn failure(
    request: &PushRequest,
    shown: &str,
    error: &git2::Error,
    problem: &RefCell<Option<String>>,
) -> ShipError {
    if let Some(detail) = problem.borrow().clone() {
        return ShipError::Credentials {
            remote: shown.to_owned(),
            detail,
        };
    }
    let detail = error.message().to_owned();
    match (error.code(), error.class()) {
        (ErrorCode::NotFastForward, _) => rejected(
            request,
            shown,
            "non-fast-forward: the remote branch holds commits this one does not have",
        ),
        (ErrorCode::Auth, _) => ShipError::Credentials {
            remote: shown.to_owned(),
            detail: format!(
                "{detail}; check the token in ${} and its access to the repository",
                request.token_env
            ),
        },
        (ErrorCode::Certificate, _) | (_, ErrorClass::Net | ErrorClass::Http | ErrorClass::Ssl) => {
            network(request, shown, detail)
        }
        // A socket's error (connection refused, no route to the host) comes as the system's.
        (_, ErrorClass::Os) if request.destination.local.is_none() => {
            network(request, shown, detail)
        }
        _ => ShipError::Push {
            remote: shown.to_owned(),
            branch: request.branch.clone(),
            detail,
        },
    }
}

/// The message for a remote that could not be reached.
fn network(request: &PushRequest, shown: &str, detail: String) -> ShipError {
    let detail = if is_ssh(&request.destination.url) {
        format!(
            "{detail}; prpd pushes over https with a token: set `[ship] remote` to the repository's https URL"
        )
    } else {
        detail
    };
    ShipError::Network {
        remote: shown.to_owned(),
        detail,
    }
}

fn rejected(request: &PushRequest, shown: &str, reason: &str) -> ShipError {
    let commit = Oid::from_str(&request.commit).map_or_else(|_| request.commit.clone(), short);
    ShipError::Rejected {
        remote: shown.to_owned(),
        branch: request.branch.clone(),
        commit,
        reason: reason.to_owned(),
        advice: format!(
            "look at what the remote's {} holds (`git fetch {} {}`), then delete or rename it there, or set another `[ship] branch` pattern in prpd.toml",
            request.branch, request.destination.url, request.branch
        ),
    }
}

fn is_ssh(url: &str) -> bool {
    url.starts_with("ssh://") || (!url.contains("://") && url.contains('@') && url.contains(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_as_the_password_of_x_access_token_once() {
        let token = Secret::new("ghp_recognisable_0123456789");
        assert_eq!(
            credential_pair(
                &PushToken::Offered(token.clone()),
                "GITHUB_TOKEN",
                CredentialType::USER_PASS_PLAINTEXT,
                1
            ),
            Ok(("x-access-token", "ghp_recognisable_0123456789"))
        );
        let refused = credential_pair(
            &PushToken::Offered(token),
            "GITHUB_TOKEN",
            CredentialType::USER_PASS_PLAINTEXT,
            2,
        )
        .expect_err("asked again: the token was refused");
        assert!(
            refused.contains("refused the token in $GITHUB_TOKEN"),
            "{refused}"
        );
        assert!(!refused.contains("ghp_"), "{refused}");
    }

    #[test]
    fn without_a_token_or_over_ssh_there_is_nothing_to_give_and_the_message_says_why() {
        let missing = credential_pair(
            &PushToken::Unset,
            "GHE_TOKEN",
            CredentialType::USER_PASS_PLAINTEXT,
            1,
        )
        .expect_err("no token");
        assert!(missing.contains("$GHE_TOKEN is not set"), "{missing}");
        let token = PushToken::Offered(Secret::new("tok"));
        let ssh =
            credential_pair(&token, "GITHUB_TOKEN", CredentialType::SSH_KEY, 1).expect_err("ssh");
        assert!(ssh.contains("https URL"), "{ssh}");
        let withheld = credential_pair(
            &PushToken::Withheld {
                host: "gitlab.com".to_owned(),
            },
            "GITHUB_TOKEN",
            CredentialType::USER_PASS_PLAINTEXT,
            1,
        )
        .expect_err("withheld");
        assert!(
            withheld.contains("gitlab.com is not GitHub: prpd gives $GITHUB_TOKEN only to"),
            "{withheld}"
        );
    }
}
