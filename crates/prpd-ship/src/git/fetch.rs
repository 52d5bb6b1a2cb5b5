//! The base branch as the remote holds it: what a pull request is merged into. SHIP replays a
//! run's commit onto it when it moved (`rebase.rs`): another run's pull request was merged, the
//! user pushed. The remote's branch, not the local one, because commits the user made locally
//! and did not push are not part of the base, and must not reach the pull request under the
//! run's commit. Fetched into prpd's own ref `refs/prpd/bases/<branch>`, with the push's
//! credentials (`push.rs`: the token only to GitHub).

use std::cell::{Cell, RefCell};

use git2::{Direction, FetchOptions};

use super::commit::open;
use super::push::{PushRequest, callbacks, proxy};
use super::{ShipError, git};

/// The tip (hex) of branch `base` on the remote of `request` (its `branch` and `commit` are not
/// used), fetched; `None` when the remote has no such branch.
pub fn fetch_base(request: &PushRequest, base: &str) -> Result<Option<String>, ShipError> {
    let root = request.repo.as_path();
    let repo = open(root)?;
    let mut remote = git(
        root,
        "set up the remote",
        repo.remote_anonymous(&request.destination.url),
    )?;
    let refname = format!("refs/heads/{base}");
    let problem = RefCell::new(None);
    let attempts = Cell::new(0);
    let listed = {
        let connection = git(
            root,
            "connect to the remote to read the base branch",
            remote.connect_auth(
                Direction::Fetch,
                Some(callbacks(request, &attempts, &problem)),
                Some(proxy()),
            ),
        )?;
        let heads = git(root, "list the remote's branches", connection.list())?;
        heads.iter().any(|head| head.name() == refname)
    };
    if !listed {
        return Ok(None);
    }
    let fetch_attempts = Cell::new(0);
    let mut options = FetchOptions::new();
    options.remote_callbacks(callbacks(request, &fetch_attempts, &problem));
    options.proxy_options(proxy());
    let local = format!("refs/prpd/bases/{base}");
    git(
        root,
        "fetch the base branch from the remote",
        remote.fetch(&[format!("+{refname}:{local}")], Some(&mut options), None),
    )?;
    drop(options);
    Ok(repo.refname_to_id(&local).ok().map(|id| id.to_string()))
}
