//! The tree that ships: exactly what the agents changed, as the run's snapshots recorded it,
//! laid on the commit the run started from.
//!
//! Every snapshot is a commit whose parent is the snapshot before it. The snapshot an agent's
//! iteration ended on, compared with its parent, is that agent's change (frozen files already
//! restored); every other step between snapshots is prpd's own (a phase start, a test run, the
//! QA checklist), and what it wrote in the tree — a report the project's tests leave, a cache
//! git does not ignore — is not the agents' work and never ships. So the agents' changes are
//! replayed, in order, over the run's base snapshot: a file's last version from an agent wins,
//! a file no agent touched keeps its version at the base.
//!
//! The base snapshot is the working tree when the run started. On a clean tree it is the tree
//! of the commit the run started from, and the result is the tree to commit. After
//! `--allow-dirty` it also holds the user's uncommitted work: a three-way merge (base snapshot
//! → that commit, base snapshot → the agents' result) takes the user's work back out, so the
//! pull request holds only what the agents changed. Where an agent edited the very lines of the
//! user's uncommitted work the two cannot be told apart, and SHIP stops, naming the files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository};

use super::{ShipError, git};

/// One file's state after the agents' changes: its blob (or link, or submodule) and mode, or
/// `None` when an agent deleted it.
type FileState = Option<(Oid, u32)>;

/// The tree of the agents' work on the start commit (the base snapshot's parent, `None` for a
/// repository that had no commit), and that commit.
pub(super) fn shipped_tree(
    repo: &Repository,
    root: &Path,
    base_snapshot: Oid,
    agent_snapshots: &[Oid],
) -> Result<(Option<Oid>, Oid), ShipError> {
    let base = git(
        root,
        "find the run's base snapshot",
        repo.find_commit(base_snapshot),
    )?;
    let base_tree = git(root, "read the run's base snapshot", base.tree())?;
    let start = base.parent(0).ok();
    let changes = agents_changes(repo, root, agent_snapshots)?;
    let theirs = apply(repo, root, &base_tree, &changes)?;
    let ours = match &start {
        Some(commit) => git(root, "read the start commit's tree", commit.tree())?,
        None => empty_tree(repo, root)?,
    };
    let start_id = start.as_ref().map(git2::Commit::id);
    if ours.id() == base_tree.id() {
        return Ok((start_id, theirs));
    }
    let theirs = git(root, "read the agents' tree", repo.find_tree(theirs))?;
    let mut merged = git(
        root,
        "take the uncommitted work out of the agents' tree",
        repo.merge_trees(&base_tree, &ours, &theirs, None),
    )?;
    if merged.has_conflicts() {
        let mut files = Vec::new();
        for conflict in git(root, "list the conflicts", merged.conflicts())? {
            let conflict = git(root, "read a conflict", conflict)?;
            if let Some(entry) = conflict.our.or(conflict.their).or(conflict.ancestor) {
                files.push(String::from_utf8_lossy(&entry.path).into_owned());
            }
        }
        return Err(ShipError::Conflict { files });
    }
    let tree = git(
        root,
        "write the tree that ships",
        merged.write_tree_to(repo),
    )?;
    Ok((start_id, tree))
}

/// Every path the agents' snapshots changed, with its state after the last agent that did.
fn agents_changes(
    repo: &Repository,
    root: &Path,
    agent_snapshots: &[Oid],
) -> Result<BTreeMap<PathBuf, FileState>, ShipError> {
    let mut changes = BTreeMap::new();
    for snapshot in agent_snapshots {
        let after = git(
            root,
            "find an agent's snapshot",
            repo.find_commit(*snapshot),
        )?;
        let before = git(root, "find the snapshot before an agent's", after.parent(0))?;
        let old = git(root, "read a snapshot tree", before.tree())?;
        let new = git(root, "read a snapshot tree", after.tree())?;
        let diff = git(
            root,
            "compare an agent's snapshot with the one before",
            repo.diff_tree_to_tree(Some(&old), Some(&new), None),
        )?;
        for delta in diff.deltas() {
            let new_file = delta.new_file();
            let Some(path) = new_file.path().or_else(|| delta.old_file().path()) else {
                continue;
            };
            let state = new_file
                .exists()
                .then(|| (new_file.id(), u32::from(new_file.mode())));
            changes.insert(path.to_path_buf(), state);
        }
    }
    Ok(changes)
}

/// `base` with `changes` applied (deletions first, so a file replaced by a folder of the same
/// name is gone before the folder's files come in), written as a tree.
fn apply(
    repo: &Repository,
    root: &Path,
    base: &git2::Tree<'_>,
    changes: &BTreeMap<PathBuf, FileState>,
) -> Result<Oid, ShipError> {
    let mut index = git(root, "make an index in memory", Index::new())?;
    git(root, "read the base snapshot's tree", index.read_tree(base))?;
    for path in changes
        .iter()
        .filter_map(|(path, state)| state.is_none().then_some(path))
    {
        if index.get_path(path, 0).is_some() {
            git(
                root,
                "remove a file an agent deleted",
                index.remove(path, 0),
            )?;
        }
    }
    for (path, (id, mode)) in changes
        .iter()
        .filter_map(|(path, state)| state.map(|state| (path, state)))
    {
        let path = path.as_os_str().as_encoded_bytes().to_vec();
        let entry = IndexEntry {
            ctime: IndexTime::new(0, 0),
            mtime: IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: u16::try_from(path.len()).map_or(0x0fff, |length| length.min(0x0fff)),
            flags_extended: 0,
            path,
        };
        git(root, "add a file an agent changed", index.add(&entry))?;
    }
    git(root, "write the agents' tree", index.write_tree_to(repo))
}

fn empty_tree<'repo>(repo: &'repo Repository, root: &Path) -> Result<git2::Tree<'repo>, ShipError> {
    let builder = git(root, "make an empty tree", repo.treebuilder(None))?;
    let id = git(root, "write an empty tree", builder.write())?;
    git(root, "read an empty tree", repo.find_tree(id))
}
