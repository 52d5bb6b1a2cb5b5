//! The commit that ships: the agents' tree (`tree.rs`) with the commit the run started from as
//! its parent and the Conventional Commit message of `message.rs`. It is written as an
//! object only; `branch.rs` points a branch at it.
//!
//! Author and committer are the repository's configured identity (`user.name`, `user.email`),
//! as for any commit made in it, or `prpd <prpd@localhost>` when none is configured.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Signature};

use super::{ShipError, git, tree};

/// What to commit.
#[derive(Debug, Clone)]
pub struct CommitPlan {
    /// The repository's root.
    pub repo: PathBuf,
    /// The run's base snapshot (`refs/prpd/<run>/0`), hex.
    pub base_snapshot: String,
    /// The snapshots the agents' iterations ended on, in run order, hex.
    pub agent_snapshots: Vec<String>,
    pub message: String,
}

/// Writes the commit of `plan` and returns its id (hex).
pub fn commit(plan: &CommitPlan) -> Result<String, ShipError> {
    let root = plan.repo.as_path();
    let repo = open(root)?;
    let base = git(
        root,
        "read the base snapshot's id",
        Oid::from_str(&plan.base_snapshot),
    )?;
    let agents = plan
        .agent_snapshots
        .iter()
        .map(|hex| git(root, "read a snapshot's id", Oid::from_str(hex)))
        .collect::<Result<Vec<_>, _>>()?;
    let (start, tree) = tree::shipped_tree(&repo, root, base, &agents)?;
    let tree = git(root, "find the tree that ships", repo.find_tree(tree))?;
    let parent = start
        .map(|id| git(root, "find the start commit", repo.find_commit(id)))
        .transpose()?;
    let signature = match repo.signature() {
        Ok(signature) => signature,
        Err(_) => git(
            root,
            "make prpd's signature",
            Signature::now("prpd", "prpd@localhost"),
        )?,
    };
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let id = git(
        root,
        "write the commit that ships",
        repo.commit(None, &signature, &signature, &plan.message, &tree, &parents),
    )?;
    Ok(id.to_string())
}

/// Whether `commit` (hex) is a commit of the repository at `root`: a recorded commit is reused
/// only while it is there.
pub fn exists(root: &Path, commit: &str) -> bool {
    let Ok(repo) = Repository::open(root) else {
        return false;
    };
    Oid::from_str(commit).is_ok_and(|id| repo.find_commit(id).is_ok())
}

pub(super) fn open(root: &Path) -> Result<Repository, ShipError> {
    git(root, "open the repository", Repository::open(root))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A repository with `files` committed on `main`, and the commit's id.
    pub(in crate::git) fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Oid) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let tree = tree_of(&repo, None, files);
        let signature = Signature::now("t", "t@example.com").expect("signature");
        let tree = repo.find_tree(tree).expect("tree");
        let id = repo
            .commit(Some("HEAD"), &signature, &signature, "start", &tree, &[])
            .expect("commit");
        (dir, id)
    }

    /// A tree: `base`'s with `files` written over it (an empty text deletes the file).
    pub(in crate::git) fn tree_of(
        repo: &Repository,
        base: Option<Oid>,
        files: &[(&str, &str)],
    ) -> Oid {
        let mut index = git2::Index::new().expect("index");
        if let Some(base) = base {
            index
                .read_tree(&repo.find_tree(base).expect("base tree"))
                .expect("read tree");
        }
        for (path, text) in files {
            if text.is_empty() {
                index.remove_path(Path::new(path)).expect("remove");
                continue;
            }
            let blob = repo.blob(text.as_bytes()).expect("blob");
            index
                .add(&git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100_644,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: blob,
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                })
                .expect("add");
        }
        index.write_tree_to(repo).expect("write tree")
    }

    /// A snapshot-like commit: `parent`'s tree with `files` written over it.
    pub(in crate::git) fn snapshot(repo: &Repository, parent: Oid, files: &[(&str, &str)]) -> Oid {
        let parent = repo.find_commit(parent).expect("parent");
        let tree = tree_of(repo, Some(parent.tree_id()), files);
        let tree = repo.find_tree(tree).expect("tree");
        let signature = Signature::now("prpd", "prpd@localhost").expect("signature");
        repo.commit(None, &signature, &signature, "snapshot", &tree, &[&parent])
            .expect("snapshot commit")
    }

    fn files_of(repo: &Repository, commit: &str) -> Vec<(String, String)> {
        let commit = repo
            .find_commit(Oid::from_str(commit).expect("id"))
            .expect("commit");
        let mut files = Vec::new();
        commit
            .tree()
            .expect("tree")
            .walk(git2::TreeWalkMode::PreOrder, |folder, entry| {
                if let Ok(blob) = entry
                    .to_object(repo)
                    .and_then(|object| object.peel_to_blob())
                {
                    files.push((
                        format!("{folder}{}", entry.name().unwrap_or("")),
                        String::from_utf8_lossy(blob.content()).into_owned(),
                    ));
                }
                git2::TreeWalkResult::Ok
            })
            .expect("walk");
        files
    }

    fn plan(dir: &Path, base: Oid, agents: &[Oid]) -> CommitPlan {
        CommitPlan {
            repo: dir.to_path_buf(),
            base_snapshot: base.to_string(),
            agent_snapshots: agents.iter().map(Oid::to_string).collect(),
            message: "feat: x\n".to_owned(),
        }
    }

    #[test]
    fn only_the_agents_changes_ship_and_a_measurements_leftovers_do_not() {
        let (dir, start) = repo_with(&[("src/a.js", "a\n"), ("README.md", "readme\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        let base = snapshot(&repo, start, &[]);
        let agent = snapshot(
            &repo,
            base,
            &[("src/a.js", "a2\n"), ("test/a.test.js", "t\n")],
        );
        let measured = snapshot(&repo, agent, &[("report.txt", "written by the tests\n")]);
        let agent2 = snapshot(&repo, measured, &[("README.md", "")]);
        let measured2 = snapshot(&repo, agent2, &[("src/a.js", "touched by a test run\n")]);
        let _ = measured2;
        let commit = commit(&plan(dir.path(), base, &[agent, agent2])).expect("commit");
        assert_eq!(
            files_of(&repo, &commit),
            [
                ("src/a.js".to_owned(), "a2\n".to_owned()),
                ("test/a.test.js".to_owned(), "t\n".to_owned()),
            ]
        );
        let shipped = repo
            .find_commit(Oid::from_str(&commit).expect("id"))
            .expect("commit");
        assert_eq!(shipped.parent_id(0).expect("a parent"), start);
        assert_eq!(shipped.message().ok(), Some("feat: x\n"));
        assert!(exists(dir.path(), &commit));
        assert!(!exists(dir.path(), &"0".repeat(40)));
    }

    #[test]
    fn uncommitted_work_at_the_start_stays_out_and_a_clash_with_it_is_named() {
        let (dir, start) = repo_with(&[("src/a.js", "one\ntwo\nthree\n"), ("notes.txt", "n\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        // The base snapshot holds the user's uncommitted edit of notes.txt and a new file.
        let base = snapshot(
            &repo,
            start,
            &[("notes.txt", "mine\n"), ("draft.md", "d\n")],
        );
        let agent = snapshot(&repo, base, &[("src/a.js", "one\ntwo\nthree\nfour\n")]);
        let commit = commit(&plan(dir.path(), base, &[agent])).expect("commit");
        assert_eq!(
            files_of(&repo, &commit),
            [
                ("notes.txt".to_owned(), "n\n".to_owned()),
                ("src/a.js".to_owned(), "one\ntwo\nthree\nfour\n".to_owned()),
            ]
        );

        let clash = snapshot(&repo, base, &[("notes.txt", "mine, and the agent's\n")]);
        let error = super::commit(&plan(dir.path(), base, &[clash])).expect_err("a clash");
        assert!(
            error.to_string().contains("uncommitted work")
                && error.to_string().contains("notes.txt"),
            "{error}"
        );
    }
}
