//! The tree of a snapshot from changed paths, built from the tree of the same value's last
//! snapshot with only the changed entries replaced (`git_tree_create_updated`). libgit2's
//! `write_tree` writes only the trees of the changed folders too, but then reads every tree
//! of the result back into the index's tree cache: one object read per folder of the
//! repository for each snapshot, 100 ms at 300,000 files in 3,000 folders for one changed file.
//!
//! Theory of operation. A snapshot from changed paths changes the run's index only inside its
//! regions (`changed.rs`: each a path and everything under it), so the new tree is the last
//! one with each region's entries replaced by the index's. A path that turned from a file into a
//! folder or back is a conflict `git_tree_create_updated` refuses; that snapshot, and one whose
//! regions cannot be read, writes its tree from the whole index instead, as the debug log says.
//! The property test in `changed.rs` compares the result with a full scan after random changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Index, ObjectType, Oid, TreeWalkMode, TreeWalkResult};

use super::Snapshots;

/// What a region holds: each file's blob (or submodule's commit) and mode, by path.
type Entries = BTreeMap<PathBuf, (Oid, u32)>;

impl Snapshots {
    /// The tree `base` with every path of `regions` as `index` has it now, or `None` (said in
    /// the debug log) when it cannot be built that way.
    pub(super) fn updated_tree(
        &self,
        base: Oid,
        index: &Index,
        regions: &BTreeSet<PathBuf>,
    ) -> Option<Oid> {
        match self.try_updated_tree(base, index, regions) {
            Ok(tree) => Some(tree),
            Err(error) => {
                tracing::debug!(%error, "the snapshot's tree is written from the whole index");
                None
            }
        }
    }

    fn try_updated_tree(
        &self,
        base: Oid,
        index: &Index,
        regions: &BTreeSet<PathBuf>,
    ) -> Result<Oid, git2::Error> {
        let base = self.repo.find_tree(base)?;
        let mut folders = Folders::new();
        let mut updates = TreeUpdateBuilder::new();
        let mut outermost: Option<&Path> = None;
        // In path order a folder comes right before what is under it, so a region inside
        // another is skipped: the outer one covers it.
        for region in regions {
            if outermost.is_some_and(|outer| region.starts_with(outer)) {
                continue;
            }
            outermost = Some(region);
            let before = self.tree_entries(&base, &mut folders, region)?;
            let now = index_entries(index, region);
            for (path, &(id, mode)) in &now {
                if before.get(path) != Some(&(id, mode)) {
                    updates.upsert(path.as_path(), id, file_mode(mode)?);
                }
            }
            for path in before.keys().filter(|path| !now.contains_key(*path)) {
                updates.remove(path.as_path());
            }
        }
        updates.create_updated(&self.repo, &base)
    }

    /// The files of `base` at `region`: the file there, or every file under the folder there.
    fn tree_entries<'repo>(
        &'repo self,
        base: &git2::Tree<'repo>,
        folders: &mut Folders<'repo>,
        region: &Path,
    ) -> Result<Entries, git2::Error> {
        let mut entries = Entries::new();
        let (Some(parent), Some(name)) = (region.parent(), region.file_name()) else {
            return Ok(entries);
        };
        let Some(parent) = self.folder(base, folders, parent)? else {
            return Ok(entries);
        };
        let Some(entry) = parent.get_name_bytes(name.as_bytes()) else {
            return Ok(entries);
        };
        if entry.kind() != Some(ObjectType::Tree) {
            entries.insert(region.to_path_buf(), (entry.id(), mode_of(&entry)));
            return Ok(entries);
        }
        let folder = self.repo.find_tree(entry.id())?;
        folder.walk(TreeWalkMode::PreOrder, |root, entry| {
            if entry.kind() != Some(ObjectType::Tree) {
                let name = OsStr::from_bytes(entry.name_bytes());
                entries.insert(region.join(root).join(name), (entry.id(), mode_of(entry)));
            }
            TreeWalkResult::Ok
        })?;
        Ok(entries)
    }

    /// The tree of `base` at `path`, if it is a folder there, read once per build: a large
    /// folder's tree is not kept in libgit2's object cache, and the regions of one snapshot
    /// are often in the same folders.
    fn folder<'repo>(
        &'repo self,
        base: &git2::Tree<'repo>,
        folders: &mut Folders<'repo>,
        path: &Path,
    ) -> Result<Option<git2::Tree<'repo>>, git2::Error> {
        if path.as_os_str().is_empty() {
            return Ok(Some(base.clone()));
        }
        if let Some(known) = folders.get(path) {
            return Ok(known.clone());
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let tree = match self.folder(base, folders, parent)? {
            Some(parent) => match parent.get_name_bytes(name.as_bytes()) {
                Some(entry) if entry.kind() == Some(ObjectType::Tree) => {
                    Some(self.repo.find_tree(entry.id())?)
                }
                Some(_) | None => None,
            },
            None => None,
        };
        folders.insert(path.to_path_buf(), tree.clone());
        Ok(tree)
    }
}

/// The folders of the base tree read during one build, by path.
type Folders<'repo> = HashMap<PathBuf, Option<git2::Tree<'repo>>>;

/// The entries of `index` at `region`: the file there, or every file under the folder there.
fn index_entries(index: &Index, region: &Path) -> Entries {
    let mut entries = Entries::new();
    if let Some(entry) = index.get_path(region, 0) {
        entries.insert(region.to_path_buf(), (entry.id, entry.mode));
    }
    for entry in super::changed::entries_under(index, region) {
        let path = PathBuf::from(OsStr::from_bytes(&entry.path));
        entries.insert(path, (entry.id, entry.mode));
    }
    entries
}

/// A tree entry's mode as the index writes it.
fn mode_of(entry: &git2::TreeEntry<'_>) -> u32 {
    u32::try_from(entry.filemode()).unwrap_or_default()
}

/// The tree mode of an index entry's mode.
fn file_mode(mode: u32) -> Result<FileMode, git2::Error> {
    match mode {
        0o100_644 => Ok(FileMode::Blob),
        0o100_755 => Ok(FileMode::BlobExecutable),
        0o100_664 => Ok(FileMode::BlobGroupWritable),
        0o120_000 => Ok(FileMode::Link),
        0o160_000 => Ok(FileMode::Commit),
        other => Err(git2::Error::from_str(&format!(
            "an index entry of mode {other:o}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use git2::Oid;

    use crate::snapshot::tests::{repo_with, snapshots};

    fn regions(paths: &[&str]) -> BTreeSet<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_changed_regions_give_the_tree_of_the_whole_index() {
        let dir = repo_with(&[
            ("src/a.py", "a\n"),
            ("src/deep/b.txt", "b\n"),
            ("docs/d.md", "d\n"),
            ("e", "e\n"),
        ]);
        let snaps = snapshots(dir.path());
        let base = snaps.record(0, None, "base").expect("record");
        let base = Oid::from_str(&base.tree).expect("tree id");
        let mut index = snaps.repo.index().expect("the kept index");
        std::fs::write(dir.path().join("src/a.py"), "a changed\n").expect("write");
        std::fs::write(dir.path().join("docs/new.md"), "new\n").expect("write");
        for path in ["src/a.py", "docs/new.md"] {
            index.add_path(Path::new(path)).expect("add");
        }
        index
            .remove_path(Path::new("src/deep/b.txt"))
            .expect("remove");
        let updated = snaps
            .updated_tree(
                base,
                &index,
                &regions(&["docs/new.md", "src/a.py", "src/deep", "src/deep/b.txt"]),
            )
            .expect("built from the regions");
        assert_eq!(updated, index.write_tree().expect("the whole index's tree"));
        assert!(
            snaps
                .repo
                .find_tree(updated)
                .expect("tree")
                .get_path(Path::new("src/deep"))
                .is_err(),
            "a folder left empty is gone, as git has it"
        );

        // A file that became a folder is a conflict libgit2 refuses: the caller writes the tree
        // from the whole index.
        index.remove_path(Path::new("e")).expect("remove");
        std::fs::remove_file(dir.path().join("e")).expect("remove");
        std::fs::create_dir(dir.path().join("e")).expect("mkdir");
        std::fs::write(dir.path().join("e/x"), "x\n").expect("write");
        index.add_path(Path::new("e/x")).expect("add");
        assert_eq!(snaps.updated_tree(updated, &index, &regions(&["e"])), None);
    }
}
