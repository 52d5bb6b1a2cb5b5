//! The branch that ships: a local branch (`[ship] branch`, `prp/{slug}`) pointed at the
//! shipped commit, without checking it out — the user's `HEAD`, index and working tree stay as
//! they are, and the feature stays in the working tree where the run left it.
//!
//! Pointing it again at the same commit changes nothing, so a SHIP resumed after a crash makes
//! no second branch. A branch that already exists elsewhere is moved only when its commit is
//! prpd's own for the same PRP (its `Prpd-PRP` trailer names it): an earlier run of this PRP,
//! which this run replaces (the remote side is then pushed with a lease, see `push.rs`). Any
//! other commit is someone's work, and SHIP stops rather than move the branch; so it does when
//! the branch is the one checked out.

use std::path::Path;

use git2::{BranchType, Oid, Repository};

use crate::message;

use super::commit::open;
use super::{ShipError, git, short};

/// What pointing the branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchMove {
    /// The branch did not exist and was created.
    Created,
    /// It already pointed at the commit.
    Unchanged,
    /// It pointed at prpd's earlier commit for the same PRP (hex), and was moved.
    Replaced { previous: String },
}

/// Points branch `name` of the repository at `root` at `commit` (hex), which ships `prp`.
pub fn point_branch(
    root: &Path,
    name: &str,
    commit: &str,
    prp: &Path,
) -> Result<BranchMove, ShipError> {
    let repo = open(root)?;
    let target = git(root, "read the commit's id", Oid::from_str(commit))?;
    let target_commit = git(root, "find the commit that ships", repo.find_commit(target))?;
    let existing = match repo.find_branch(name, BranchType::Local) {
        Ok(branch) => Some(branch),
        Err(error) if error.code() == git2::ErrorCode::NotFound => None,
        Err(source) => {
            return Err(ShipError::Git {
                action: "look for the branch",
                repo: root.to_path_buf(),
                source,
            });
        }
    };
    let Some(mut branch) = existing else {
        git(
            root,
            "create the branch",
            repo.branch(name, &target_commit, false),
        )?;
        return Ok(BranchMove::Created);
    };
    let current = git(
        root,
        "read the branch's commit",
        branch.get().peel_to_commit(),
    )?;
    if current.id() == target {
        return Ok(BranchMove::Unchanged);
    }
    if is_checked_out(&repo, name) {
        return Err(ShipError::BranchCheckedOut {
            branch: name.to_owned(),
            repo: root.to_path_buf(),
        });
    }
    if !is_prpds_commit_for(&current, prp) {
        return Err(ShipError::BranchTaken {
            branch: name.to_owned(),
            commit: short(current.id()),
            subject: current.summary().ok().flatten().unwrap_or("").to_owned(),
            prp: prp.display().to_string(),
        });
    }
    let previous = current.id().to_string();
    let reason = format!(
        "prpd: ship {}, replacing {}",
        prp.display(),
        short(current.id())
    );
    git(
        root,
        "move the branch",
        branch.get_mut().set_target(target, &reason),
    )?;
    Ok(BranchMove::Replaced { previous })
}

/// The branch checked out in the repository at `root` (`None`: detached, or no repository).
pub fn checked_out_branch(root: &Path) -> Option<String> {
    let repo = Repository::open(root).ok()?;
    let head = repo.find_reference("HEAD").ok()?;
    let target = head.symbolic_target().ok()??;
    target.strip_prefix("refs/heads/").map(str::to_owned)
}

/// Whether `commit` is one prpd shipped for the PRP at `prp`.
pub(super) fn is_prpds_commit_for(commit: &git2::Commit<'_>, prp: &Path) -> bool {
    commit
        .message()
        .ok()
        .and_then(message::prp_of)
        .is_some_and(|named| Path::new(named) == prp)
}

fn is_checked_out(repo: &Repository, name: &str) -> bool {
    repo.find_reference("HEAD")
        .ok()
        .and_then(|head| head.symbolic_target().ok().flatten().map(str::to_owned))
        .is_some_and(|target| target == format!("refs/heads/{name}"))
}

#[cfg(test)]
mod tests {
    use git2::Signature;

    use super::*;
    use crate::git::commit::tests::{repo_with, tree_of};

    fn commit_with(repo: &Repository, parent: Oid, message: &str) -> Oid {
        let parent = repo.find_commit(parent).expect("parent");
        let tree = tree_of(repo, Some(parent.tree_id()), &[("f.txt", message)]);
        let tree = repo.find_tree(tree).expect("tree");
        let signature = Signature::now("t", "t@example.com").expect("signature");
        repo.commit(None, &signature, &signature, message, &tree, &[&parent])
            .expect("commit")
    }

    #[test]
    fn a_branch_is_created_then_left_alone_then_moved_only_from_prpds_own_commit() {
        let (dir, start) = repo_with(&[("a.txt", "a\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        let prp = Path::new("PRPs/x.md");
        let first = commit_with(
            &repo,
            start,
            "feat: x\n\nPrpd-PRP: PRPs/x.md\nPrpd-Run: run-1\n",
        );
        let hex = first.to_string();
        assert_eq!(
            point_branch(dir.path(), "prp/x", &hex, prp).expect("create"),
            BranchMove::Created
        );
        assert_eq!(
            point_branch(dir.path(), "prp/x", &hex, prp).expect("again"),
            BranchMove::Unchanged
        );
        let second = commit_with(
            &repo,
            start,
            "feat: x\n\nPrpd-PRP: PRPs/x.md\nPrpd-Run: run-2\n",
        );
        assert_eq!(
            point_branch(dir.path(), "prp/x", &second.to_string(), prp).expect("replace"),
            BranchMove::Replaced { previous: hex }
        );
        let head_ref = repo.find_reference("HEAD").expect("HEAD");
        let head_target = head_ref
            .symbolic_target()
            .ok()
            .flatten()
            .expect("HEAD names a branch");
        assert_eq!(
            checked_out_branch(dir.path()).map(|name| format!("refs/heads/{name}")),
            Some(head_target.to_owned())
        );
        let head = repo.head().expect("head").peel_to_commit().expect("commit");
        assert_eq!(head.id(), start, "HEAD never moves");

        let human = commit_with(&repo, start, "wip: my own work\n");
        repo.branch("prp/y", &repo.find_commit(human).expect("c"), false)
            .expect("branch");
        let error = point_branch(
            dir.path(),
            "prp/y",
            &second.to_string(),
            Path::new("PRPs/y.md"),
        )
        .expect_err("someone's branch");
        let message = error.to_string();
        assert!(
            message.contains("already exists") && message.contains("wip: my own work"),
            "{message}"
        );
        // Another PRP's commit is not this PRP's either.
        let error = point_branch(
            dir.path(),
            "prp/x",
            &human.to_string(),
            Path::new("PRPs/y.md"),
        )
        .expect_err("another PRP's branch");
        assert!(
            error
                .to_string()
                .contains("not prpd's commit for PRPs/y.md"),
            "{error}"
        );
    }

    #[test]
    fn the_checked_out_branch_is_never_moved() {
        let (dir, start) = repo_with(&[("a.txt", "a\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        let other = commit_with(&repo, start, "feat: x\n\nPrpd-PRP: PRPs/x.md\n");
        let current = checked_out_branch(dir.path()).expect("a branch is checked out");
        let error = point_branch(
            dir.path(),
            &current,
            &other.to_string(),
            Path::new("PRPs/x.md"),
        )
        .expect_err("checked out");
        assert!(error.to_string().contains("is checked out"), "{error}");
    }
}
