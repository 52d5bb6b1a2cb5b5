//! Taking files back out of a run's history. When prpd holds tests out of GREEN's view, the
//! snapshots RED's iterations (or QA's) left behind still hold the originals, and every
//! later snapshot reaches them through its parents: any agent can `git show` them. So the
//! snapshots from the first that held them are written again with those files as GREEN sees
//! them, their refs moved to the new commits, and the originals' loose objects removed — no
//! longer reachable, they would still show in `git cat-file --batch-all-objects`. An object
//! git already packed cannot be taken out of its pack; the caller says so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use git2::{Index, Oid, Signature};

use super::{Snapshot, SnapshotError, Snapshots};

/// What a rewrite did.
#[derive(Debug, Default)]
pub struct Rewritten {
    /// The new snapshot of each number rewritten.
    pub snapshots: BTreeMap<u32, Snapshot>,
    /// Blob ids the old snapshots held at the replaced paths and the new ones do not.
    pub dropped_blobs: BTreeSet<String>,
    /// The old snapshots' commits and the trees on the way to a replaced path: unreachable
    /// now, and removed with the blobs so that no object is left that names a missing one.
    pub dropped_objects: BTreeSet<String>,
}

impl Snapshots {
    /// Writes `text` as a blob; its id (hex).
    pub fn write_blob(&self, text: &str) -> Result<String, SnapshotError> {
        Ok(self
            .git("write a blob", self.repo.blob(text.as_bytes()))?
            .to_string())
    }

    /// Snapshots `first..=last` written again with each path of `replace` holding the given
    /// blob (hex) where it exists at all, or absent (`None`). The snapshots are a chain (each
    /// one's parent is the one before), and each is written on the rewritten one before it: a
    /// rewrite cut short and done again ends where one whole rewrite ends.
    pub fn rewrite(
        &self,
        first: u32,
        last: u32,
        replace: &BTreeMap<PathBuf, Option<String>>,
    ) -> Result<Rewritten, SnapshotError> {
        self.walk(first, last, replace, true)
    }

    /// What [`Snapshots::rewrite`] would drop, without writing anything: what the caller
    /// records before a ref moves, so that a kill cannot lose it.
    pub fn plan_rewrite(
        &self,
        first: u32,
        last: u32,
        replace: &BTreeMap<PathBuf, Option<String>>,
    ) -> Result<Rewritten, SnapshotError> {
        self.walk(first, last, replace, false)
    }

    fn walk(
        &self,
        first: u32,
        last: u32,
        replace: &BTreeMap<PathBuf, Option<String>>,
        write: bool,
    ) -> Result<Rewritten, SnapshotError> {
        let mut done = Rewritten::default();
        let signature = self.git(
            "make the snapshot signature",
            Signature::now("prpd", "prpd@localhost"),
        )?;
        // The rewritten snapshot before the current one, once one was rewritten.
        let mut new_parent: Option<Oid> = None;
        for number in first..=last {
            let Some(old) = self.at(number) else {
                continue;
            };
            let commit = self.commit_of(&old.commit)?;
            let tree = self.git("read a snapshot tree", commit.tree())?;
            let mut replaced = Vec::new();
            let mut index = self.git("make an in-memory index", Index::new())?;
            self.git("read a snapshot tree", index.read_tree(&tree))?;
            for (path, blob) in replace {
                let Ok(entry) = tree.get_path(path) else {
                    continue;
                };
                let blob = match blob {
                    Some(blob) => Some(self.git("read a blob id", Oid::from_str(blob))?),
                    None => None,
                };
                if Some(entry.id()) == blob {
                    continue;
                }
                done.dropped_blobs.insert(entry.id().to_string());
                replaced.push(path.clone());
                match blob {
                    Some(blob) => {
                        let mode = u32::try_from(entry.filemode()).unwrap_or(0o100_644);
                        self.git(
                            "replace a file",
                            index.add(&super::index_entry(path, blob, mode)),
                        )?;
                    }
                    None => self.git("take a file out", index.remove_path(path))?,
                }
            }
            let parent_moved =
                new_parent.is_some_and(|parent| commit.parent_id(0).ok() != Some(parent));
            if replaced.is_empty() && !parent_moved {
                // Nothing to take out, and nothing below it changed: it stays as it is.
                new_parent = Some(commit.id());
                continue;
            }
            done.dropped_objects.insert(commit.id().to_string());
            if !replaced.is_empty() {
                done.dropped_objects
                    .append(&mut trees_along(&tree, &replaced));
            }
            if !write {
                new_parent = Some(commit.id());
                continue;
            }
            let tree_id = self.git("write a rewritten tree", index.write_tree_to(&self.repo))?;
            let new_tree = self.git("find a rewritten tree", self.repo.find_tree(tree_id))?;
            let parent_id = match new_parent {
                Some(parent) => Some(parent),
                None => commit.parent_id(0).ok(),
            };
            let parent = parent_id
                .map(|id| self.git("find a snapshot's parent", self.repo.find_commit(id)))
                .transpose()?;
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            let message = commit.message().unwrap_or("prpd snapshot").to_owned();
            let new = self.git(
                "commit a rewritten snapshot",
                self.repo
                    .commit(None, &signature, &signature, &message, &new_tree, &parents),
            )?;
            self.git(
                "move a snapshot ref",
                self.repo
                    .reference(&self.ref_name(number), new, true, "prpd: rewritten"),
            )?;
            new_parent = Some(new);
            done.snapshots.insert(
                number,
                Snapshot {
                    commit: new.to_string(),
                    tree: tree_id.to_string(),
                },
            );
        }
        Ok(done)
    }

    /// The commit of the named ref of this run (`…/<name>`) and its trees on the way to
    /// `paths` that hold them, when the ref is there: what removing the ref leaves unreachable.
    pub fn named_ref_objects(
        &self,
        name: &str,
        paths: &[PathBuf],
    ) -> Result<BTreeSet<String>, SnapshotError> {
        let mut objects = BTreeSet::new();
        if let Ok(commit) = self
            .repo
            .find_reference(&self.seal_ref(name))
            .and_then(|reference| reference.peel_to_commit())
        {
            objects.insert(commit.id().to_string());
            let tree = self.git("read a snapshot tree", commit.tree())?;
            let held: Vec<PathBuf> = paths
                .iter()
                .filter(|path| tree.get_path(path).is_ok())
                .cloned()
                .collect();
            objects.append(&mut trees_along(&tree, &held));
        }
        Ok(objects)
    }

    /// The commits outside this run that may share objects with it: `HEAD`, every local
    /// branch, and every other run's snapshots and refs.
    pub fn commits_outside_this_run(&self) -> Result<Vec<String>, SnapshotError> {
        let own = format!("{}/{}/", super::REF_PREFIX, self.run_id);
        let mut commits = Vec::new();
        for reference in self.git("list the refs", self.repo.references())? {
            let Ok(reference) = reference else {
                continue;
            };
            let name = reference.name().unwrap_or("");
            let outside = name.starts_with("refs/heads/")
                || (name.starts_with(super::REF_PREFIX) && !name.starts_with(&own));
            if outside && let Ok(commit) = reference.peel_to_commit() {
                commits.push(commit.id().to_string());
            }
        }
        if let Ok(head) = self.repo.head().and_then(|head| head.peel_to_commit()) {
            commits.push(head.id().to_string());
        }
        Ok(commits)
    }

    /// `commit`, its trees on the way to `paths` and its blobs there: what it needs of the
    /// objects a rewrite of those paths drops. Nothing for a commit that is not there.
    pub fn objects_at(
        &self,
        commit: &str,
        paths: &[PathBuf],
    ) -> Result<BTreeSet<String>, SnapshotError> {
        let Some(commit) = Oid::from_str(commit)
            .ok()
            .and_then(|id| self.repo.find_commit(id).ok())
        else {
            return Ok(BTreeSet::new());
        };
        let tree = self.git("read a commit's tree", commit.tree())?;
        let mut objects = trees_along(&tree, paths);
        objects.insert(commit.id().to_string());
        for path in paths {
            if let Ok(entry) = tree.get_path(path) {
                objects.insert(entry.id().to_string());
            }
        }
        Ok(objects)
    }

    /// Removes the named ref of this run (`…/<name>`), if it is there.
    pub fn remove_named_ref(&self, name: &str) -> Result<(), SnapshotError> {
        if let Ok(mut reference) = self.repo.find_reference(&self.seal_ref(name)) {
            self.git("delete a snapshot ref", reference.delete())?;
        }
        Ok(())
    }

    /// Removes the loose objects `ids` (hex) from the repository's object store. Returns how
    /// many were removed and how many were not loose (packed by git, or gone already).
    pub fn remove_loose_objects<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a String>,
    ) -> (usize, usize) {
        let objects = self.repo.commondir().join("objects");
        let (mut removed, mut stayed) = (0, 0);
        for id in ids {
            if id.len() < 3 {
                continue;
            }
            let path = objects.join(&id[..2]).join(&id[2..]);
            if std::fs::remove_file(&path).is_ok() {
                removed += 1;
            } else if self
                .repo
                .odb()
                .ok()
                .and_then(|odb| Oid::from_str(id).ok().map(|oid| odb.exists(oid)))
                .unwrap_or(false)
            {
                stayed += 1;
            }
        }
        (removed, stayed)
    }
}

/// `tree` and each tree on the way from it to one of `paths`.
fn trees_along(tree: &git2::Tree<'_>, paths: &[PathBuf]) -> BTreeSet<String> {
    let mut objects = BTreeSet::from([tree.id().to_string()]);
    for path in paths {
        let mut folder = PathBuf::new();
        for part in path.parent().into_iter().flat_map(Path::components) {
            folder.push(part);
            if let Ok(entry) = tree.get_path(&folder) {
                objects.insert(entry.id().to_string());
            }
        }
    }
    objects
}

#[cfg(test)]
mod tests {
    use super::super::tests::{repo_with, snapshots};
    use super::*;

    #[test]
    fn a_rewritten_history_no_longer_holds_the_original_anywhere() {
        let dir = repo_with(&[("a.txt", "a\n")]);
        let snaps = snapshots(dir.path());
        let base = snaps.record(0, None, "base").expect("base");
        std::fs::write(dir.path().join("t.js"), "visible\nsecret held out\n").expect("write");
        let first = snaps.record(1, Some(&base), "red").expect("red");
        std::fs::write(dir.path().join("b.txt"), "b\n").expect("write");
        let second = snaps.record(2, Some(&first), "more").expect("more");
        let secret = snaps.files(&second).expect("files")[Path::new("t.js")].clone();

        let cut = snaps.write_blob("visible\n").expect("blob");
        let replace = BTreeMap::from([(PathBuf::from("t.js"), Some(cut.clone()))]);
        let plan = snaps.plan_rewrite(1, 2, &replace).expect("plan");
        assert_eq!(snaps.at(2).as_ref(), Some(&second), "a plan moves nothing");
        let done = snaps.rewrite(1, 2, &replace).expect("rewrite");
        assert_eq!(plan.dropped_blobs, done.dropped_blobs);
        assert_eq!(plan.dropped_objects, done.dropped_objects);
        let again = snaps.rewrite(1, 2, &replace).expect("a rewrite done again");
        assert!(
            again.snapshots.is_empty(),
            "nothing left to rewrite: {again:?}"
        );
        assert_eq!(done.dropped_blobs, BTreeSet::from([secret.clone()]));
        let new_last = &done.snapshots[&2];
        assert_eq!(snaps.at(2).as_ref(), Some(new_last));
        assert_eq!(
            snaps.files(new_last).expect("files")[Path::new("t.js")],
            cut
        );
        assert!(
            snaps
                .files(new_last)
                .expect("files")
                .contains_key(Path::new("b.txt"))
        );
        let parent = snaps
            .commit_of(&new_last.commit)
            .expect("commit")
            .parent_id(0)
            .expect("parent");
        assert_eq!(parent.to_string(), done.snapshots[&1].commit);

        assert!(done.dropped_objects.contains(&first.commit));
        assert!(done.dropped_objects.contains(&second.tree));
        assert_eq!(snaps.remove_loose_objects(&done.dropped_blobs), (1, 0));
        let repo = git2::Repository::open(dir.path()).expect("open");
        let oid = Oid::from_str(&secret).expect("oid");
        assert!(
            !repo.odb().expect("odb").exists(oid),
            "the original is gone"
        );
    }
}
