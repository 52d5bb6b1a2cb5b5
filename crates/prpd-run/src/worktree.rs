//! A run's own working tree: a linked git worktree, checked out detached at the run's base
//! commit, where the agents, prpd's measurements, the snapshots and SHIP all work. The user's
//! working tree, index and branch are never touched, so the user keeps editing while agents
//! work and several runs of one repository never share a tree.
//!
//! Where. `<git common dir>/prpd/worktrees/<run-id>`: inside the repository's git directory,
//! which git never lists as a change and most tools skip (pytest, `go test ./...`, cargo,
//! Vitest), and outside `.prp-session/`, where prpd's own state (records, reports, logs, the
//! memory store, the locks and socket) stays out of the agents' tree. Node 20's built-in runner
//! is the exception: a bare `node --test` run in the repository's root walks `.git/` too, and
//! runs the tests of every worktree there (an in-place run's measurement included); a test
//! script that names its folder (`node --test test/`) does not.
//!
//! What it holds. The base commit's files, plus the user's uncommitted versions of prpd's own
//! inputs (the PRP, `prpd.toml`, `qa-checklist.yml`, `qa-tools-mapping.yml`, `.prpd/`): the run
//! judges by the rules the user wrote, committed or not. They are part of the run's base
//! snapshot, and like any uncommitted work at the base they stay out of the pull request.
//!
//! How. git2's `Worktree`. libgit2 adds a worktree only on a branch, and a branch per run would
//! be one more name in the user's `git branch` for nothing, so the worktree is added on a
//! short-lived branch that is deleted as soon as the worktree's `HEAD` is detached at the base.
//! No hook runs (libgit2 runs none), so a `post-checkout` hook of the project (an install, say)
//! does not run unasked; `[run] setup` is the place for that.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Status, StatusOptions, WorktreeAddOptions, WorktreePruneOptions};

use crate::frozen::is_prpd_input;
use crate::snapshot::DEPENDENCY_FOLDERS;
use prpd_base::paths::SESSION_DIR;

/// Where prpd keeps the worktrees of runs, below the common git directory.
const WORKTREES: &str = "prpd/worktrees";

/// The name of the worktree where SHIP runs QA's checklist on a run's commit replayed onto a
/// moved base: the run's id and this.
pub const ON_BASE_SUFFIX: &str = "-on-base";

/// A run's worktree could not be made or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("failed to {action} in {}: {detail}", repo.display())]
    Git {
        action: &'static str,
        repo: PathBuf,
        detail: String,
    },
    #[error(
        "`{base}` names no commit of {}: a run starts from a commit; pass --base with a branch, \
         tag or commit of the repository",
        repo.display()
    )]
    NoSuchBase { base: String, repo: PathBuf },
    #[error(
        "{} has no commit yet: a run starts in a worktree at a commit; commit first, or run \
         with --in-place",
        repo.display()
    )]
    NoCommit { repo: PathBuf },
    #[error("failed to copy {} into the run's worktree", path.display())]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The commit a run starts from, and the branch that named it (the pull request's base).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// Hex.
    pub commit: String,
    /// `None` when the name was not a branch (a tag, a commit, a detached `HEAD`).
    pub branch: Option<String>,
}

/// Resolves `name` (default `HEAD`) in the repository at `repo` to the commit a run starts
/// from.
pub fn resolve_base(repo: &Path, name: Option<&str>) -> Result<Base, WorktreeError> {
    let opened = open(repo)?;
    let name = name.unwrap_or("HEAD");
    let object = opened.revparse_single(name).map_err(|_| {
        if name == "HEAD" {
            WorktreeError::NoCommit {
                repo: repo.to_path_buf(),
            }
        } else {
            WorktreeError::NoSuchBase {
                base: name.to_owned(),
                repo: repo.to_path_buf(),
            }
        }
    })?;
    let commit = object
        .peel_to_commit()
        .map_err(|_| WorktreeError::NoSuchBase {
            base: name.to_owned(),
            repo: repo.to_path_buf(),
        })?;
    let branch = if name == "HEAD" {
        opened
            .find_reference("HEAD")
            .ok()
            .and_then(|head| head.symbolic_target().ok().flatten().map(str::to_owned))
            .and_then(|target| target.strip_prefix("refs/heads/").map(str::to_owned))
    } else {
        opened
            .find_branch(name, git2::BranchType::Local)
            .ok()
            .map(|_| name.to_owned())
    };
    Ok(Base {
        commit: commit.id().to_string(),
        branch,
    })
}

/// Where run `run_id` of the repository at `repo` has its worktree.
pub fn location(repo: &Path, run_id: &str) -> Result<PathBuf, WorktreeError> {
    Ok(open(repo)?.commondir().join(WORKTREES).join(run_id))
}

/// The worktrees in prpd's folder: name and path.
pub fn list(repo: &Path) -> Result<Vec<(String, PathBuf)>, WorktreeError> {
    let folder = open(repo)?.commondir().join(WORKTREES);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Ok(Vec::new());
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.to_owned(), entry.path())))
        .collect())
}

/// Makes the worktree of run `run_id` at `base` (hex), unless it is there already (a run
/// resumed after a kill between the checkout and its record), and returns its path.
pub fn create(repo: &Path, run_id: &str, base: &str) -> Result<PathBuf, WorktreeError> {
    let path = location(repo, run_id)?;
    let opened = open(repo)?;
    let branch_name = format!("prpd-worktree-{run_id}");
    if path.join(".git").is_file() {
        // A kill between the checkout and the branch's deletion leaves the branch.
        if let Ok(mut leftover) = opened.find_branch(&branch_name, git2::BranchType::Local) {
            let _ = leftover.delete();
        }
        return Ok(path);
    }
    let fail = |action: &'static str| {
        move |error: git2::Error| WorktreeError::Git {
            action,
            repo: repo.to_path_buf(),
            detail: error.message().to_owned(),
        }
    };
    let commit = Oid::from_str(base)
        .and_then(|id| opened.find_commit(id))
        .map_err(fail("find the run's base commit"))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| WorktreeError::Git {
            action: "make the folder of the runs' worktrees",
            repo: repo.to_path_buf(),
            detail: source.to_string(),
        })?;
    }
    // A worktree a kill left half made, and git's record of it, go first.
    let _ = std::fs::remove_dir_all(&path);
    if let Ok(stale) = opened.find_worktree(run_id) {
        let _ = stale.prune(Some(
            WorktreePruneOptions::new().valid(true).working_tree(true),
        ));
    }
    let mut branch = opened
        .branch(&branch_name, &commit, true)
        .map_err(fail("make the worktree's short-lived branch"))?;
    let added = opened.worktree(
        run_id,
        &path,
        Some(WorktreeAddOptions::new().reference(Some(branch.get()))),
    );
    let detached = added.and_then(|_| Repository::open(&path)?.set_head_detached(commit.id()));
    let deleted = branch.delete();
    detached.map_err(fail("add the run's worktree"))?;
    deleted.map_err(fail("delete the worktree's short-lived branch"))?;
    Ok(path)
}

/// The files of prpd's inputs (and the PRP at `prp`) that the user's working tree at `repo`
/// holds uncommitted: what a run in a worktree takes along from it.
pub fn uncommitted_inputs(repo: &Path, prp: &Path) -> Result<Vec<PathBuf>, WorktreeError> {
    let opened = open(repo)?;
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = opened
        .statuses(Some(&mut options))
        .map_err(|error| WorktreeError::Git {
            action: "list the uncommitted files",
            repo: repo.to_path_buf(),
            detail: error.message().to_owned(),
        })?;
    let mut files: Vec<PathBuf> = statuses
        .iter()
        .filter(|entry| !entry.status().is_empty() && !entry.status().contains(Status::IGNORED))
        .filter_map(|entry| entry.path().ok().map(PathBuf::from))
        .filter(|path| !path.starts_with(SESSION_DIR))
        .filter(|path| path == prp || is_prpd_input(path))
        .filter(|path| repo.join(path).is_file())
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

/// Copies `files` (relative) from the user's working tree at `repo` into the worktree.
pub fn carry(repo: &Path, worktree: &Path, files: &[PathBuf]) -> Result<(), WorktreeError> {
    for file in files {
        let target = worktree.join(file);
        let copied = target
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::copy(repo.join(file), &target));
        copied.map_err(|source| WorktreeError::Copy {
            path: repo.join(file),
            source,
        })?;
    }
    Ok(())
}

/// Links the user's installed dependency folders (`node_modules`, a virtual environment) into
/// the worktree where it has none, so a run without `[run] setup` finds the project's
/// libraries; the folders linked. A link, not a copy: what an agent installs there lands in
/// the user's folder, which is why `[run] setup` (an install in the worktree) is the better way
/// for a project that can install quickly.
pub fn link_dependencies(repo: &Path, worktree: &Path) -> Vec<PathBuf> {
    DEPENDENCY_FOLDERS
        .iter()
        .filter(|folder| repo.join(folder).is_dir() && !worktree.join(folder).exists())
        .filter(|folder| {
            std::os::unix::fs::symlink(repo.join(folder), worktree.join(folder)).is_ok()
        })
        .map(PathBuf::from)
        .collect()
}

/// Removes the worktree at `path` and git's record of it. A worktree already gone is fine.
pub fn remove(repo: &Path, path: &Path) -> Result<(), WorktreeError> {
    let fail = |action: &'static str| {
        move |error: std::io::Error| WorktreeError::Git {
            action,
            repo: repo.to_path_buf(),
            detail: error.to_string(),
        }
    };
    match std::fs::remove_dir_all(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(fail("remove the run's worktree")(error)),
    }
    let opened = open(repo)?;
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if let Ok(worktree) = opened.find_worktree(name) {
        worktree
            .prune(Some(
                WorktreePruneOptions::new().valid(true).working_tree(true),
            ))
            .map_err(|error| WorktreeError::Git {
                action: "prune the run's worktree",
                repo: repo.to_path_buf(),
                detail: error.message().to_owned(),
            })?;
    }
    Ok(())
}

fn open(repo: &Path) -> Result<Repository, WorktreeError> {
    Repository::open(repo).map_err(|error| WorktreeError::Git {
        action: "open the repository",
        repo: repo.to_path_buf(),
        detail: error.message().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository on `main` with `files` committed.
    fn repo_with(dir: &Path, files: &[(&str, &str)]) {
        let repo = git2::Repository::init_opts(
            dir,
            git2::RepositoryInitOptions::new().initial_head("main"),
        )
        .expect("init");
        let mut index = repo.index().expect("index");
        for (path, text) in files {
            std::fs::write(dir.join(path), text).expect("write");
            index.add_path(Path::new(path)).expect("add");
        }
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let signature = git2::Signature::now("t", "t@example.com").expect("signature");
        repo.commit(Some("HEAD"), &signature, &signature, "start", &tree, &[])
            .expect("commit");
    }

    #[test]
    fn a_worktree_at_the_base_takes_the_users_uncommitted_inputs_and_leaves_the_tree_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().canonicalize().expect("canonical");
        repo_with(&repo, &[("a.txt", "a\n"), ("prpd.toml", "x = 1\n")]);
        std::fs::write(repo.join("a.txt"), "mine\n").expect("edit");
        std::fs::write(repo.join("prpd.toml"), "x = 2\n").expect("edit");
        std::fs::create_dir_all(repo.join("PRPs")).expect("mkdir");
        std::fs::write(repo.join("PRPs/f.md"), "# PRP\n").expect("write");
        let base = resolve_base(&repo, None).expect("base");
        assert_eq!(base.branch.as_deref(), Some("main"));
        let inputs = uncommitted_inputs(&repo, Path::new("PRPs/f.md")).expect("inputs");
        assert_eq!(
            inputs,
            [PathBuf::from("PRPs/f.md"), PathBuf::from("prpd.toml")]
        );
        let tree = create(&repo, "run-1", &base.commit).expect("create");
        assert!(tree.starts_with(repo.join(".git")), "{}", tree.display());
        carry(&repo, &tree, &inputs).expect("carry");
        assert_eq!(
            std::fs::read_to_string(tree.join("a.txt")).expect("a"),
            "a\n"
        );
        assert_eq!(
            std::fs::read_to_string(tree.join("prpd.toml")).expect("toml"),
            "x = 2\n"
        );
        assert!(tree.join("PRPs/f.md").is_file());
        assert_eq!(
            create(&repo, "run-1", &base.commit).expect("again"),
            tree,
            "a second create finds the worktree"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join("a.txt")).expect("a"),
            "mine\n",
            "the user's tree is untouched"
        );
        let opened = Repository::open(&repo).expect("open");
        assert!(
            opened.branches(None).expect("branches").count() == 1,
            "no branch is left behind"
        );
        assert!(
            Repository::open(&tree)
                .expect("worktree")
                .head_detached()
                .expect("head")
        );
        remove(&repo, &tree).expect("remove");
        assert!(!tree.exists());
        assert!(opened.find_worktree("run-1").is_err(), "git forgot it");
        remove(&repo, &tree).expect("removing twice is fine");
    }

    #[test]
    fn a_base_that_names_nothing_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        git2::Repository::init(dir.path()).expect("init");
        assert!(matches!(
            resolve_base(dir.path(), None),
            Err(WorktreeError::NoCommit { .. })
        ));
        repo_with(dir.path(), &[("a.txt", "a\n")]);
        let error = resolve_base(dir.path(), Some("nope")).expect_err("no such base");
        assert!(
            error.to_string().contains("`nope` names no commit"),
            "{error}"
        );
        let tag = resolve_base(dir.path(), Some("HEAD~0")).expect("a revision");
        assert_eq!(tag.branch, None);
    }
}
