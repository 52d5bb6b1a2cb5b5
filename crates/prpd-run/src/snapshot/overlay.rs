//! Trees that never existed in the working tree: the run's base with some files taken from a
//! later snapshot (the frozen test harness laid over the code without the feature), and their
//! checkout into a directory of their own, so a command can run on exactly that tree without
//! touching the user's working tree, index or `HEAD`.

use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Index, Signature};

use super::{Snapshot, SnapshotError, Snapshots};

impl Snapshots {
    /// The tree of `base` with each of `paths` as it is in `from` (added, replaced, or removed
    /// when `from` lacks it), committed on the run's private ref `…/<name>` with `base` as
    /// parent. The same inputs always give the same tree id, which is what caches key on.
    pub fn overlay<'a>(
        &self,
        base: &Snapshot,
        from: &Snapshot,
        paths: impl IntoIterator<Item = &'a PathBuf>,
        name: &str,
    ) -> Result<Snapshot, SnapshotError> {
        let base_tree = self.tree_of(base)?;
        let from_tree = self.tree_of(from)?;
        let mut index = self.git("make an in-memory index", Index::new())?;
        self.git("read the base tree", index.read_tree(&base_tree))?;
        for path in paths {
            match from_tree.get_path(path) {
                Ok(entry) => {
                    let mode = u32::try_from(entry.filemode()).unwrap_or(0o100_644);
                    let entry = super::index_entry(path, entry.id(), mode);
                    self.git("lay a file over the base tree", index.add(&entry))?;
                }
                Err(_) => {
                    // Absent from the base too is fine: there is nothing to remove.
                    let _ = index.remove_path(path);
                }
            }
        }
        let tree_id = self.git("write the overlaid tree", index.write_tree_to(&self.repo))?;
        let tree = self.git("find the overlaid tree", self.repo.find_tree(tree_id))?;
        let parent = self.commit_of(&base.commit)?;
        let signature = self.git(
            "make the snapshot signature",
            Signature::now("prpd", "prpd@localhost"),
        )?;
        let message = format!("prpd {}: {name}", self.run_id);
        let commit = self.git(
            "commit the overlaid tree",
            self.repo
                .commit(None, &signature, &signature, &message, &tree, &[&parent]),
        )?;
        let reference = format!("{}/{}/{name}", super::REF_PREFIX, self.run_id);
        self.git(
            "write the overlaid tree's ref",
            self.repo.reference(&reference, commit, true, &message),
        )?;
        Ok(Snapshot {
            commit: commit.to_string(),
            tree: tree_id.to_string(),
        })
    }

    /// Writes every file of `snapshot` into `directory` (which should be empty), with its
    /// executable bit and links as recorded; the repository's index is not touched.
    pub fn export(&self, snapshot: &Snapshot, directory: &Path) -> Result<(), SnapshotError> {
        let tree = self.tree_of(snapshot)?;
        let mut checkout = CheckoutBuilder::new();
        checkout
            .target_dir(directory)
            .force()
            .update_index(false)
            .recreate_missing(true);
        self.git(
            "check a snapshot out into a directory of its own",
            self.repo
                .checkout_tree(tree.as_object(), Some(&mut checkout)),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::snapshot::tests::{repo_with, snapshots};

    #[test]
    fn the_base_with_later_test_files_is_checked_out_apart() {
        let repo = repo_with(&[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            ("tests/old.py", "old\n"),
        ]);
        let repo = repo.path();
        let snapshots = snapshots(repo);
        let base = snapshots.record(0, None, "base").expect("base snapshot");
        std::fs::write(repo.join("calc.py"), "def mul(a, b):\n    return a * b\n")
            .expect("test fixture");
        std::fs::write(repo.join("tests/new.py"), "new\n").expect("test fixture");
        std::fs::remove_file(repo.join("tests/old.py")).expect("test fixture");
        let later = snapshots
            .record(1, Some(&base), "later")
            .expect("later snapshot");

        let paths = [PathBuf::from("tests/new.py"), PathBuf::from("tests/old.py")];
        let proof = snapshots
            .overlay(&base, &later, &paths, "proof")
            .expect("overlay");
        let again = snapshots
            .overlay(&base, &later, &paths, "proof")
            .expect("overlay");
        assert_eq!(proof.tree, again.tree, "the same inputs give the same tree");

        let out = tempfile::tempdir().expect("temporary directory");
        snapshots.export(&proof, out.path()).expect("export");
        let read = |path: &str| std::fs::read_to_string(out.path().join(path)).ok();
        assert_eq!(
            read("calc.py").as_deref(),
            Some("def add(a, b):\n    return a + b\n")
        );
        assert_eq!(read("tests/new.py").as_deref(), Some("new\n"));
        assert_eq!(read("tests/old.py"), None);
        assert_eq!(
            std::fs::read_to_string(repo.join("calc.py")).expect("working tree"),
            "def mul(a, b):\n    return a * b\n",
            "the working tree is untouched"
        );
    }
}
