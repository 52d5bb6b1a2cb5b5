//! The shipped commit on the base branch as it is now. Runs work in worktrees of their own, so
//! while one runs, its base branch may move: another run's pull request was merged, the user
//! pushed (`fetch.rs` reads the remote's branch; without a remote, the local branch counts). A commit made on the old base would then carry a stale picture of the
//! project into the pull request, so SHIP replays it onto the branch's current tip: a three-way
//! merge of trees (the commit's parent → the branch's tip, → the commit), written as a new
//! commit with the same message and author on the tip. Where both sides changed the same lines
//! the files are named and nothing is written; the caller escalates.

use std::path::Path;

use git2::{BranchType, Oid};

use super::commit::open;
use super::{ShipError, git, short};

/// Where the commit stands against its base branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebase {
    /// The branch still points at the commit's parent: nothing to do.
    Current,
    /// The branch moved from the commit's parent to `onto`; `commit` is the same change on it.
    Moved {
        /// The new commit, hex.
        commit: String,
        /// The branch's tip it sits on, hex.
        onto: String,
    },
}

/// The tip (hex) of local branch `branch` of the repository at `root`, if it exists.
pub fn local_tip(root: &Path, branch: &str) -> Option<String> {
    let repo = open(root).ok()?;
    let base = repo.find_branch(branch, BranchType::Local).ok()?;
    Some(base.get().peel_to_commit().ok()?.id().to_string())
}

/// Replays `commit` (hex) of the repository at `root` onto `tip` (hex), the tip of base branch
/// `branch` (named in messages).
pub fn rebase_onto(
    root: &Path,
    commit: &str,
    tip: &str,
    branch: &str,
) -> Result<Rebase, ShipError> {
    let repo = open(root)?;
    let id = git(root, "read the commit's id", Oid::from_str(commit))?;
    let shipped = git(root, "find the commit that ships", repo.find_commit(id))?;
    let tip = git(root, "read the base branch's tip", Oid::from_str(tip))?;
    let tip = git(root, "find the base branch's tip", repo.find_commit(tip))?;
    let Ok(parent) = shipped.parent(0) else {
        return Ok(Rebase::Current);
    };
    if tip.id() == parent.id() {
        return Ok(Rebase::Current);
    }
    let ancestor = git(root, "read the run's start", parent.tree())?;
    let ours = git(root, "read the base branch's tree", tip.tree())?;
    let theirs = git(root, "read the shipped tree", shipped.tree())?;
    let mut merged = git(
        root,
        "replay the agents' work onto the base branch",
        repo.merge_trees(&ancestor, &ours, &theirs, None),
    )?;
    if merged.has_conflicts() {
        let mut files: Vec<String> = git(root, "list the conflicts", merged.conflicts())?
            .filter_map(Result::ok)
            .filter_map(|conflict| {
                let entry = conflict.our.or(conflict.their).or(conflict.ancestor)?;
                Some(String::from_utf8_lossy(&entry.path).into_owned())
            })
            .collect();
        files.sort();
        files.dedup();
        return Err(ShipError::BaseMoved {
            branch: branch.to_owned(),
            from: short(parent.id()),
            to: short(tip.id()),
            files,
        });
    }
    let tree = git(root, "write the replayed tree", merged.write_tree_to(&repo))?;
    let tree = git(root, "find the replayed tree", repo.find_tree(tree))?;
    let new = git(
        root,
        "write the replayed commit",
        repo.commit(
            None,
            &shipped.author(),
            &shipped.committer(),
            shipped.message().unwrap_or(""),
            &tree,
            &[&tip],
        ),
    )?;
    Ok(Rebase::Moved {
        commit: new.to_string(),
        onto: tip.id().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use git2::Repository;

    use super::*;
    use crate::git::commit::tests::{repo_with, snapshot, tree_of};

    /// Moves branch `main` of `repo` to a commit of `files` on its tip.
    fn advance_main(repo: &Repository, files: &[(&str, &str)]) -> Oid {
        let tip = repo.head().expect("head").peel_to_commit().expect("tip");
        let tree = tree_of(repo, Some(tip.tree_id()), files);
        let tree = repo.find_tree(tree).expect("tree");
        let signature = git2::Signature::now("u", "u@example.com").expect("signature");
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            "moved",
            &tree,
            &[&tip],
        )
        .expect("commit")
    }

    fn text(repo: &Repository, commit: &str, path: &str) -> String {
        let commit = repo
            .find_commit(Oid::from_str(commit).expect("id"))
            .expect("commit");
        let entry = commit
            .tree()
            .expect("tree")
            .get_path(Path::new(path))
            .expect("file");
        let blob = repo.find_blob(entry.id()).expect("blob");
        String::from_utf8_lossy(blob.content()).into_owned()
    }

    #[test]
    fn a_commit_on_a_moved_base_is_replayed_onto_its_tip_and_a_clash_names_the_files() {
        let (dir, start) = repo_with(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        let shipped = snapshot(&repo, start, &[("a.txt", "one, by the agents\n")]);
        let branch = repo
            .head()
            .expect("head")
            .shorthand()
            .expect("name")
            .to_owned();
        let tip = || local_tip(dir.path(), &branch).expect("the branch");
        assert_eq!(
            rebase_onto(dir.path(), &shipped.to_string(), &tip(), &branch).expect("current"),
            Rebase::Current
        );

        let moved = advance_main(&repo, &[("b.txt", "two, by someone else\n")]);
        let Rebase::Moved { commit, onto } =
            rebase_onto(dir.path(), &shipped.to_string(), &tip(), &branch).expect("moved")
        else {
            panic!("the base moved");
        };
        assert_eq!(onto, moved.to_string());
        assert_eq!(text(&repo, &commit, "a.txt"), "one, by the agents\n");
        assert_eq!(text(&repo, &commit, "b.txt"), "two, by someone else\n");
        let replayed = repo
            .find_commit(Oid::from_str(&commit).expect("id"))
            .expect("commit");
        assert_eq!(replayed.parent_id(0).expect("parent"), moved);

        advance_main(&repo, &[("a.txt", "one, by someone else\n")]);
        let error =
            rebase_onto(dir.path(), &shipped.to_string(), &tip(), &branch).expect_err("clash");
        assert!(
            matches!(&error, ShipError::BaseMoved { files, .. } if files == &["a.txt"]),
            "{error}"
        );
        assert!(error.to_string().contains("a.txt"), "{error}");
    }
}
