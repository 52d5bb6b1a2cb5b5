//! Listing a snapshot's files with their blob ids, which the frozen-file checks and the test
//! files of a measurement compare: afresh, a walk that reads every folder's tree, or from an
//! earlier listing and the difference of the two trees, which reads only the folders whose
//! trees differ (an iteration lists each snapshot, so its cost follows the change).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Snapshot, SnapshotError, Snapshots};

impl Snapshots {
    /// Every file of `snapshot` with its blob id, by path relative to the repository.
    pub fn files(&self, snapshot: &Snapshot) -> Result<BTreeMap<PathBuf, String>, SnapshotError> {
        let tree = self.tree_of(snapshot)?;
        let mut files = BTreeMap::new();
        self.git(
            "list a snapshot",
            tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
                if entry.kind() == Some(git2::ObjectType::Blob)
                    && let Ok(name) = entry.name()
                {
                    files.insert(
                        PathBuf::from(format!("{root}{name}")),
                        entry.id().to_string(),
                    );
                }
                git2::TreeWalkResult::Ok
            }),
        )?;
        Ok(files)
    }

    /// The same as [`Snapshots::files`] for `to`, from `known`, the files of `from`: only the
    /// folders whose trees differ are read, so the cost grows with the change, not the tree.
    pub fn files_since(
        &self,
        known: &BTreeMap<PathBuf, String>,
        from: &Snapshot,
        to: &Snapshot,
    ) -> Result<BTreeMap<PathBuf, String>, SnapshotError> {
        let diff = self.diff(from, to)?;
        let mut files = known.clone();
        for delta in diff.deltas() {
            if let Some(path) = delta.old_file().path() {
                files.remove(path);
            }
            let new_file = delta.new_file();
            // What `files` lists: blobs (files and links), not submodules.
            let blob = matches!(
                new_file.mode(),
                git2::FileMode::Blob
                    | git2::FileMode::BlobExecutable
                    | git2::FileMode::BlobGroupWritable
                    | git2::FileMode::Link
            );
            if let (true, Some(path)) = (
                blob && delta.status() != git2::Delta::Deleted,
                new_file.path(),
            ) {
                files.insert(path.to_path_buf(), new_file.id().to_string());
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use crate::snapshot::tests::{repo_with, snapshots};

    #[test]
    fn the_files_since_an_earlier_snapshot_are_the_files_listed_again() {
        let dir = repo_with(&[
            ("src/a.py", "a\n"),
            ("src/deep/b.txt", "b\n"),
            ("run.sh", "echo\n"),
            ("docs/d.md", "d\n"),
        ]);
        let snaps = snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        let known = snaps.files(&first).expect("files");
        let root = dir.path();
        std::fs::write(root.join("src/a.py"), "a changed\n").expect("write");
        std::fs::remove_dir_all(root.join("src/deep")).expect("remove");
        std::fs::write(root.join("src/deep"), "a file where a folder was\n").expect("write");
        std::fs::set_permissions(
            root.join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
        std::fs::remove_file(root.join("docs/d.md")).expect("remove");
        std::os::unix::fs::symlink("../src/a.py", root.join("docs/link")).expect("link");
        let second = snaps.record(1, Some(&first), "changed").expect("record");
        assert_eq!(
            snaps
                .files_since(&known, &first, &second)
                .expect("files since"),
            snaps.files(&second).expect("files")
        );
    }
}
