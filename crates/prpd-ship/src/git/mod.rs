//! SHIP's local side, with git2: the tree and commit that ship, the branch that points at it,
//! the remote it goes to and the push itself, and the check that a run starts from a clean
//! tree. Every function opens the repository itself and takes owned or plain data, so the
//! driver can run it under `spawn_blocking`.
//!
//! Nothing here writes to the user's index, `HEAD` or working tree: the commit is built from
//! tree objects alone and the branch is a ref that is not checked out.

mod branch;
mod commit;
mod fetch;
mod push;
mod rebase;
mod remote;
mod tree;
mod uncommitted;

use std::path::PathBuf;

pub use branch::{BranchMove, checked_out_branch, point_branch};
pub use commit::{CommitPlan, commit, exists};
pub use fetch::fetch_base;
pub use push::{PushRequest, PushToken, Pushed, TOKEN_USER, push};
pub use rebase::{Rebase, local_tip, rebase_onto};
pub use remote::{Destination, destination, no_such_remote};
pub use uncommitted::uncommitted;

/// Why a SHIP step could not be carried out. Each message says what to do; none holds a token
/// (tokens never reach a URL or a message prpd builds).
#[derive(Debug, thiserror::Error)]
pub enum ShipError {
    #[error(
        "failed to {action} in {}: {}; once that is fixed, `prpd resume` ships again",
        repo.display(),
        source.message()
    )]
    Git {
        action: &'static str,
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error(
        "the agents changed lines of your uncommitted work (the run started with --allow-dirty) \
         in {}; the pull request would carry your changes with theirs. Commit or stash your own \
         changes on the branch the run started from and ship by hand, or abort the run",
        files.join(", ")
    )]
    Conflict { files: Vec<String> },
    #[error(
        "the base branch {branch} moved since the run started ({from} → {to}), and the agents' \
         changes clash with the new commits in {}; the run's worktree is kept: merge {branch} \
         there and resolve them by hand, then ship by hand, or abort the run",
        files.join(", ")
    )]
    BaseMoved {
        branch: String,
        from: String,
        to: String,
        files: Vec<String>,
    },
    #[error(
        "the branch {branch} already exists at {commit} (\"{subject}\"), which is not prpd's \
         commit for {prp}; prpd does not move a branch it did not write. Rename or delete that \
         branch, or set another `[ship] branch` pattern in prpd.toml, then run `prpd resume`"
    )]
    BranchTaken {
        branch: String,
        commit: String,
        subject: String,
        prp: String,
    },
    #[error(
        "the branch {branch} is checked out in {}; prpd never moves the branch you work on. \
         Check out another branch, then run `prpd resume`",
        repo.display()
    )]
    BranchCheckedOut { branch: String, repo: PathBuf },
    #[error(
        "`[ship] remote` = {name:?} is neither a remote of {} ({known}), a URL nor a path; set it \
         to a remote's name, a URL or a path such as \"../remote.git\", then run `prpd resume`",
        repo.display()
    )]
    NoSuchRemote {
        name: String,
        repo: PathBuf,
        known: String,
    },
    #[error(
        "the remote {remote} does not exist: {} is not a git repository; create it (`git init \
         --bare {}`) or set `[ship] remote`, then run `prpd resume`",
        path.display(),
        path.display()
    )]
    MissingLocalRemote { remote: String, path: PathBuf },
    #[error(
        "the remote {remote} rejected {branch}: {reason}. The commit is kept on the local branch \
         {branch} ({commit}); {advice}, then run `prpd resume`"
    )]
    Rejected {
        remote: String,
        branch: String,
        commit: String,
        reason: String,
        advice: String,
    },
    #[error("{remote} refused the credentials: {detail}; then run `prpd resume`")]
    Credentials { remote: String, detail: String },
    #[error(
        "cannot reach the remote {remote} ({detail}); check the network or the URL, then run \
         `prpd resume`"
    )]
    Network { remote: String, detail: String },
    #[error("failed to push {branch} to {remote}: {detail}; then run `prpd resume`")]
    Push {
        remote: String,
        branch: String,
        detail: String,
    },
}

/// Runs a git2 call, naming what it was doing in `repo` when it fails.
fn git<T>(
    repo: &std::path::Path,
    action: &'static str,
    result: Result<T, git2::Error>,
) -> Result<T, ShipError> {
    result.map_err(|source| ShipError::Git {
        action,
        repo: repo.to_path_buf(),
        source,
    })
}

/// The first seven hex digits of a commit id.
fn short(oid: git2::Oid) -> String {
    oid.to_string().chars().take(7).collect()
}
