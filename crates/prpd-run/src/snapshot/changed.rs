//! Snapshots from the paths that changed: when prpd knows which paths may differ from the
//! run's index (a watcher saw them), only those entries are brought up to date, so an
//! unchanged tree costs no file system access at all and k changed files cost O(k) plus the
//! trees of their folders: the index stays in memory between snapshots (see `snapshot.rs`).
//!
//! Theory of operation. The run's index already holds the tree of the last snapshot, with
//! git's stat cache. For each changed path, git's view of it is recomputed exactly as the full
//! scan (`add_all` + `update_all`) would: a file that is gone leaves the index (and so does
//! everything under a directory that is gone); a tracked file or link is read again; an
//! untracked one is added unless the repository's ignore rules or [`Snapshots::left_out`]
//! keep it out; a directory is rescanned under it (its vanished entries removed, the rest by
//! `add_all` limited to it), since a watcher cannot promise an event for each file of a
//! directory that was moved in or filled before its watch was set. A path is first replaced
//! by its nearest ancestor that is not a plain directory (a link, a file, nothing), since git
//! sees that ancestor, not what is under it.
//!
//! Correctness comes before speed: whatever changes the rules themselves (a `.gitignore`,
//! `.gitattributes`, `.gitmodules`, git's exclude file), a path prpd cannot take literally, a
//! change inside a nested repository or a submodule git tracks, or a file that is neither a
//! file, a link nor a directory makes the whole snapshot a full scan, and the debug log says
//! why. The property test below checks the two routes against each other after random edits.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use std::sync::atomic::Ordering;

use git2::{Index, IndexAddOption};

use super::{SnapshotError, Snapshots};

/// What prpd knows about how the working tree changed since the last snapshot the run's index
/// recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// Nothing is known (no watcher, or it overflowed): scan the whole tree.
    All,
    /// Only these paths, relative to the working tree, may differ; a directory stands for
    /// everything under it. An empty set means the tree is unchanged.
    Paths(BTreeSet<PathBuf>),
}

/// How a snapshot brought the run's index up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Scan {
    /// The whole tree, for this reason.
    Full(&'static str),
    /// Only the changed paths: the index changed at most in these regions, each a path and
    /// everything under it.
    Paths(BTreeSet<PathBuf>),
}

/// What one changed path needed.
enum Step {
    /// Nothing: it is one a snapshot never holds, or inside a nested repository.
    Nothing,
    /// The index entries at this path and under it were brought up to date.
    Region(PathBuf),
    /// A full scan, for this reason.
    Full(&'static str),
}

/// The files whose change changes which files a snapshot holds or how git reads them.
const RULE_FILES: &[&str] = &[".gitignore", ".gitattributes", ".gitmodules"];

impl Snapshots {
    /// Brings the entries of `paths` in the run's index up to the working tree, or answers
    /// that only a full scan will do.
    pub(super) fn update_paths(
        &self,
        index: &mut Index,
        paths: &BTreeSet<PathBuf>,
    ) -> Result<Scan, SnapshotError> {
        if let Some(reason) = paths.iter().find_map(|path| needs_full_scan(path)) {
            return Ok(Scan::Full(reason));
        }
        let mut regions = BTreeSet::new();
        let mut ignored = IgnoredFolders::default();
        for path in paths {
            if self.in_ignored_folder(index, path, &mut ignored)? {
                continue;
            }
            match self.update_path(index, path)? {
                Step::Nothing => {}
                Step::Region(region) => {
                    regions.insert(region);
                }
                Step::Full(reason) => return Ok(Scan::Full(reason)),
            }
        }
        Ok(Scan::Paths(regions))
    }

    fn update_path(&self, index: &mut Index, path: &Path) -> Result<Step, SnapshotError> {
        if path
            .components()
            .any(|component| component.as_os_str() == ".git")
        {
            return Ok(Step::Nothing);
        }
        let mut target = path;
        let ancestors: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .filter(|ancestor| !ancestor.as_os_str().is_empty())
            .collect();
        for ancestor in ancestors.into_iter().rev() {
            match std::fs::symlink_metadata(self.workdir.join(ancestor)) {
                Ok(metadata) if metadata.is_dir() => {
                    if self.is_nested_repository(ancestor) {
                        return Ok(nested(index, ancestor));
                    }
                }
                Ok(_) | Err(_) => {
                    target = ancestor;
                    break;
                }
            }
        }
        let on_disk = self.workdir.join(target);
        match std::fs::symlink_metadata(&on_disk) {
            Err(_) => {
                self.remove_entries(index, target, Entries::File)?;
                self.remove_entries(index, target, Entries::Folder)?;
                Ok(Step::Region(target.to_path_buf()))
            }
            Ok(metadata) if metadata.is_dir() => {
                if index
                    .get_path(target, 0)
                    .is_some_and(|entry| entry.mode == GITLINK)
                {
                    return Ok(Step::Full("a submodule changed"));
                }
                if self.is_nested_repository(target) {
                    return Ok(nested(index, target));
                }
                self.remove_entries(index, target, Entries::File)?;
                self.rescan(index, target)?;
                Ok(Step::Region(target.to_path_buf()))
            }
            Ok(metadata) if metadata.is_file() || metadata.is_symlink() => {
                self.remove_entries(index, target, Entries::Folder)?;
                let tracked = index.get_path(target, 0);
                if tracked
                    .as_ref()
                    .is_some_and(|entry| same_content(entry, &on_disk, &metadata))
                {
                    return Ok(Step::Region(target.to_path_buf()));
                }
                if tracked.is_some()
                    || !(Snapshots::left_out(target)
                        || self.git("read the ignore rules", self.repo.is_path_ignored(target))?)
                {
                    self.git("add a file to the snapshot index", index.add_path(target))?;
                }
                Ok(Step::Region(target.to_path_buf()))
            }
            Ok(_) => Ok(Step::Full(
                "a changed path is neither a file, a link nor a folder",
            )),
        }
    }

    /// Whether `path` is, or is under, a folder git ignores and holds nothing of: a build writes
    /// thousands of files into `target/` or `__pycache__/`, and each would be looked at for
    /// nothing. Such a path changes nothing the snapshot holds, exactly as `update_path` would
    /// find, one stat and one ignore check per folder instead of per file.
    fn in_ignored_folder(
        &self,
        index: &Index,
        path: &Path,
        ignored: &mut IgnoredFolders,
    ) -> Result<bool, SnapshotError> {
        if ignored
            .last
            .as_ref()
            .is_some_and(|folder| path.starts_with(folder))
        {
            return Ok(true);
        }
        for folder in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
            if folder.as_os_str().is_empty() {
                continue;
            }
            let skipped = if let Some(known) = ignored.seen.get(folder) {
                *known
            } else {
                let skipped = std::fs::symlink_metadata(self.workdir.join(folder))
                    .is_ok_and(|metadata| metadata.is_dir())
                    && self.git("read the ignore rules", self.repo.is_path_ignored(folder))?
                    && !holds_entries(index, folder);
                ignored.seen.insert(folder.to_path_buf(), skipped);
                skipped
            };
            if skipped {
                ignored.last = Some(folder.to_path_buf());
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Rescans the directory `folder`: entries whose file is gone leave the index, and
    /// `add_all` limited to the folder does the rest as the full scan would.
    fn rescan(&self, index: &mut Index, folder: &Path) -> Result<(), SnapshotError> {
        let prefix = format!("{}/", folder.display());
        let gone: Vec<PathBuf> = entries_under(index, folder)
            .map(|entry| PathBuf::from(String::from_utf8_lossy(&entry.path).into_owned()))
            .filter(|path| {
                !std::fs::symlink_metadata(self.workdir.join(path))
                    .is_ok_and(|metadata| metadata.is_file() || metadata.is_symlink())
            })
            .collect();
        for path in &gone {
            self.remove_entries(index, path, Entries::File)?;
        }
        self.git(
            "add a folder to the snapshot index",
            index.add_all(
                [prefix.as_str()].iter(),
                IndexAddOption::DEFAULT,
                Some(&mut |path: &Path, _: &[u8]| i32::from(Snapshots::left_out(path))),
            ),
        )
    }

    /// Removes the entry at `path` (a file) or the entries under it (a folder). Whether any went
    /// is remembered until the index file is next written: the file is a cache of the stat
    /// data, but also of which files are tracked, and an entry it kept after memory lost it
    /// would make a file git ignores tracked again in the next session's first snapshot.
    fn remove_entries(
        &self,
        index: &mut Index,
        path: &Path,
        entries: Entries,
    ) -> Result<(), SnapshotError> {
        let before = index.len();
        match entries {
            Entries::File => self.git(
                "remove a file from the snapshot index",
                index.remove_path(path),
            )?,
            Entries::Folder => self.git(
                "remove a folder from the snapshot index",
                index.remove_dir(path, 0),
            )?,
        }
        if index.len() < before {
            self.index_lost_entries.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn is_nested_repository(&self, folder: &Path) -> bool {
        std::fs::symlink_metadata(self.workdir.join(folder).join(".git")).is_ok()
    }
}

/// A submodule's mode in the index.
const GITLINK: u32 = 0o160_000;

/// What [`Snapshots::remove_entries`] removes at a path.
#[derive(Clone, Copy)]
enum Entries {
    /// The entry of the file there.
    File,
    /// The entries under the folder there.
    Folder,
}

/// The folders one snapshot found ignored and empty of entries (or not), by path, and the last
/// one skipped (the paths come in order, so the ones under it follow it).
#[derive(Default)]
struct IgnoredFolders {
    seen: std::collections::HashMap<PathBuf, bool>,
    last: Option<PathBuf>,
}

/// Whether the index has an entry at `folder` or under it.
fn holds_entries(index: &Index, folder: &Path) -> bool {
    index.get_path(folder, 0).is_some() || entries_under(index, folder).next().is_some()
}

/// The entries of `index` under the folder `folder`, in the index's order.
pub(super) fn entries_under<'index>(
    index: &'index Index,
    folder: &Path,
) -> impl Iterator<Item = git2::IndexEntry> + 'index {
    use std::os::unix::ffi::OsStrExt as _;
    let prefix = [folder.as_os_str().as_bytes(), b"/"].concat();
    let start = index.find_prefix(prefix.as_slice()).ok();
    start
        .into_iter()
        .flat_map(move |start| (start..).map_while(move |position| index.get(position)))
        .take_while(move |entry| entry.path.starts_with(&prefix))
}

/// Whether the file or link at `on_disk` is what the index `entry` holds, by its mode and the
/// hash of its bytes, computed without writing anything: `add_path` writes every file it reads
/// to a temporary object first, and the frozen files are read again at every snapshot. The
/// bytes are hashed as they are: where a clean filter applies (line endings, LFS), a file can
/// differ from its blob and still be unchanged, and `add_path` runs as before; and bytes equal
/// to the blob are content that is clean already, which git's filters leave as it is.
fn same_content(entry: &git2::IndexEntry, on_disk: &Path, metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::PermissionsExt as _;
    let mode = if metadata.is_symlink() {
        0o120_000
    } else if metadata.permissions().mode() & 0o100 != 0 {
        0o100_755
    } else {
        0o100_644
    };
    if entry.mode != mode {
        return false;
    }
    let id = if metadata.is_symlink() {
        std::fs::read_link(on_disk).ok().and_then(|target| {
            git2::Oid::hash_object(git2::ObjectType::Blob, target.as_os_str().as_bytes()).ok()
        })
    } else {
        git2::Oid::hash_file(git2::ObjectType::Blob, on_disk).ok()
    };
    id == Some(entry.id)
}

/// A change inside the nested repository `folder`: the full scan leaves it out too, unless
/// git tracks something there (a submodule, files added before the nested `git init`).
fn nested(index: &Index, folder: &Path) -> Step {
    let tracked_inside = holds_entries(index, folder);
    if tracked_inside {
        Step::Full("a change inside a nested repository or submodule git tracks files of")
    } else {
        Step::Nothing
    }
}

/// Why `path` alone makes the snapshot a full scan, if it does.
fn needs_full_scan(path: &Path) -> Option<&'static str> {
    if path.as_os_str().is_empty()
        || !path
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
    {
        return Some("a changed path that is not inside the tree");
    }
    if path == Path::new(".git/info/exclude") {
        return Some("git's exclude file changed");
    }
    if path
        .file_name()
        .is_some_and(|name| RULE_FILES.iter().any(|rule| name == *rule))
    {
        return Some("an ignore or attributes file changed");
    }
    let Some(text) = path.to_str() else {
        return Some("a changed path that is not UTF-8");
    };
    if text.contains(['*', '?', '[', '\\']) {
        return Some("a changed path with pathspec characters");
    }
    None
}

#[cfg(test)]
mod tests {
    //! The property: after any sequence of edits, creations, renames, deletions, links, mode
    //! changes, nested repositories, `.gitignore` edits and watcher overflows, the snapshot
    //! from the changed paths has the tree id of the full scan over a second index kept the
    //! way the run's index is kept today. The watcher is simulated at its worst: for a folder
    //! moved in, filled or removed, only the folder's own path is reported, and it reports
    //! paths that did not change too.

    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::Changes;
    use crate::snapshot::tests::repo_with;
    use crate::snapshot::{Snapshot, Snapshots};

    /// A small seeded generator (xorshift64*): the same seed gives the same sequence, so a
    /// failure names the seed that reproduces it.
    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let value = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33;
            usize::try_from(value).expect("fits") % bound
        }

        fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
            if items.is_empty() {
                None
            } else {
                Some(&items[self.below(items.len())])
            }
        }
    }

    const NAMES: &[&str] = &["a.py", "b.txt", "c.log", "d.md", "keep.log", "e"];
    const FOLDERS: &[&str] = &["src", "src/deep", "build", "docs", "gen", "lib/x", "tmp"];
    const PATTERNS: &[&str] = &["*.log", "build/", "gen/", "!keep.log", "docs/*.md", "e"];

    /// The files and folders of the tree, relative, leaving out `.git` and prpd's state.
    fn walk(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut files = Vec::new();
        let mut folders = Vec::new();
        let mut pending = vec![PathBuf::new()];
        while let Some(folder) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(root.join(&folder)) else {
                continue;
            };
            for entry in entries {
                let entry = entry.expect("entry");
                let relative = folder.join(entry.file_name());
                if relative.starts_with(".git") || relative.starts_with(".prp-session") {
                    continue;
                }
                let kind = entry.file_type().expect("file type");
                if kind.is_dir() {
                    if !relative.ends_with(".git") {
                        folders.push(relative.clone());
                        pending.push(relative);
                    }
                } else {
                    files.push(relative);
                }
            }
        }
        files.sort();
        folders.sort();
        (files, folders)
    }

    fn write(root: &Path, path: &Path, text: &str) {
        if let Some(parent) = root.join(path).parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        let _ = std::fs::remove_dir_all(root.join(path));
        std::fs::write(root.join(path), text).expect("write");
    }

    /// One random change to the tree; returns the paths a watcher reports for it, or `None`
    /// for an overflow.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per kind of change reads best"
    )]
    fn change(root: &Path, random: &mut Random, step: usize) -> Option<Vec<PathBuf>> {
        let (files, folders) = walk(root);
        let new_path = |random: &mut Random| {
            let folder = random.pick(FOLDERS).expect("folders");
            let name = random.pick(NAMES).expect("names");
            if random.below(3) == 0 {
                PathBuf::from(name)
            } else {
                Path::new(folder).join(name)
            }
        };
        let reported = match random.below(14) {
            0 | 1 => {
                let path = random.pick(&files)?.clone();
                // Not through a link: the watcher would report the file it points to.
                if std::fs::symlink_metadata(root.join(&path)).is_ok_and(|meta| meta.is_symlink()) {
                    return Some(vec![path]);
                }
                let _ = std::fs::OpenOptions::new()
                    .append(true)
                    .open(root.join(&path))
                    .and_then(|mut file| {
                        std::io::Write::write_all(&mut file, format!("edit {step}\n").as_bytes())
                    });
                vec![path]
            }
            2 | 3 => {
                let path = new_path(random);
                let existed: Vec<PathBuf> = path
                    .ancestors()
                    .skip(1)
                    .filter(|folder| !folder.as_os_str().is_empty() && root.join(folder).is_dir())
                    .map(Path::to_path_buf)
                    .collect();
                write(root, &path, &format!("new {step}\n"));
                let topmost_new = path
                    .ancestors()
                    .skip(1)
                    .filter(|folder| {
                        !folder.as_os_str().is_empty() && !existed.contains(&folder.to_path_buf())
                    })
                    .last()
                    .map(Path::to_path_buf);
                match topmost_new {
                    Some(folder) if random.below(2) == 0 => vec![folder],
                    Some(folder) => vec![folder, path],
                    None => vec![path],
                }
            }
            4 => {
                let path = random.pick(&files)?.clone();
                std::fs::remove_file(root.join(&path)).expect("rm");
                vec![path]
            }
            5 => {
                let from = random.pick(&files)?.clone();
                let to = new_path(random);
                if let Some(parent) = root.join(&to).parent() {
                    std::fs::create_dir_all(parent).expect("mkdir");
                }
                let _ = std::fs::remove_dir_all(root.join(&to));
                // A file moved onto a folder holding it is gone with the folder: either way
                // the watcher reports both paths.
                let _ = std::fs::rename(root.join(&from), root.join(&to));
                vec![from, to]
            }
            6 => {
                let from = random.pick(&folders)?.clone();
                let to = PathBuf::from(format!("moved{step}"));
                std::fs::rename(root.join(&from), root.join(&to)).expect("rename folder");
                vec![from, to]
            }
            7 => {
                let folder = random.pick(&folders)?.clone();
                std::fs::remove_dir_all(root.join(&folder)).expect("rm folder");
                vec![folder]
            }
            8 => {
                let folder = if random.below(3) == 0 {
                    PathBuf::new()
                } else {
                    PathBuf::from(random.pick(FOLDERS).expect("folders"))
                };
                let path = folder.join(".gitignore");
                let patterns: Vec<&str> = PATTERNS
                    .iter()
                    .copied()
                    .filter(|_| random.below(2) == 0)
                    .collect();
                let mut text = patterns.join("\n");
                if folder.as_os_str().is_empty() {
                    text.push_str("\n.prp-session/\n");
                }
                write(root, &path, &text);
                vec![path]
            }
            9 => {
                let path = new_path(random);
                let target = random.pick(NAMES).expect("names");
                if let Some(parent) = root.join(&path).parent() {
                    std::fs::create_dir_all(parent).expect("mkdir");
                }
                let _ = std::fs::remove_dir_all(root.join(&path));
                let _ = std::fs::remove_file(root.join(&path));
                std::os::unix::fs::symlink(target, root.join(&path)).expect("symlink");
                vec![path]
            }
            10 => {
                use std::os::unix::fs::PermissionsExt as _;
                let path = random.pick(&files)?.clone();
                let on_disk = root.join(&path);
                if let Ok(metadata) = std::fs::symlink_metadata(&on_disk)
                    && metadata.is_file()
                {
                    let mode = metadata.permissions().mode() ^ 0o111;
                    std::fs::set_permissions(&on_disk, std::fs::Permissions::from_mode(mode))
                        .expect("chmod");
                }
                vec![path]
            }
            11 => {
                let path = random.pick(&files)?.clone();
                std::fs::remove_file(root.join(&path)).expect("rm");
                write(root, &path.join("inner.py"), "inner\n");
                vec![path]
            }
            12 => {
                let folder = PathBuf::from(format!("nested{}", step % 3));
                git2::Repository::init(root.join(&folder)).expect("nested init");
                write(root, &folder.join("x.py"), &format!("nested {step}\n"));
                vec![folder.clone(), folder.join("x.py")]
            }
            _ => return None,
        };
        let mut reported = reported;
        if random.below(4) == 0
            && let Some(unchanged) = random.pick(&files)
        {
            reported.push(unchanged.clone());
        }
        Some(reported)
    }

    fn run(seed: u64, steps: usize) {
        let dir = repo_with(&[
            (".gitignore", ".prp-session/\n*.log\n"),
            ("src/a.py", "a\n"),
            ("src/deep/b.txt", "b\n"),
            ("docs/d.md", "d\n"),
            ("e", "e\n"),
        ]);
        let root = dir.path();
        let changed = Snapshots::open(root, "changed", &root.join(".prp-session/changed.index"))
            .expect("open");
        let full =
            Snapshots::open(root, "full", &root.join(".prp-session/full.index")).expect("open");
        let mut last_changed: Option<Snapshot> = None;
        let mut last_full: Option<Snapshot> = None;
        let mut pending = Some(BTreeSet::new());
        let mut random = Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut number = 0;
        let mut history = Vec::new();
        for step in 0..steps {
            if let Some(paths) = change(root, &mut random, step) {
                history.push(format!("{paths:?}"));
                if let Some(pending) = &mut pending {
                    pending.extend(paths);
                }
            } else {
                history.push("overflow".to_owned());
                pending = None;
            }
            if random.below(3) != 0 {
                continue;
            }
            let known = pending.take().map_or(Changes::All, Changes::Paths);
            let by_paths = changed
                .record_changes(number, last_changed.as_ref(), "changed", &known)
                .expect("changed-path snapshot");
            let by_scan = full
                .record(number, last_full.as_ref(), "full")
                .expect("full snapshot");
            assert_eq!(
                by_paths.tree,
                by_scan.tree,
                "seed {seed}, step {step}: the changed-path snapshot differs from the full \
                 scan; changes since the start: {history:#?}; listed: {:#?} vs {:#?}",
                changed.files(&by_paths).expect("files"),
                full.files(&by_scan).expect("files"),
            );
            last_changed = Some(by_paths);
            last_full = Some(by_scan);
            pending = Some(BTreeSet::new());
            number += 1;
        }
    }

    #[test]
    fn a_changed_path_snapshot_equals_a_full_scan_after_random_changes() {
        for seed in 1..=24 {
            run(seed, 80);
        }
    }

    #[test]
    fn an_unchanged_tree_touches_no_file_and_keeps_its_tree() {
        let dir = repo_with(&[("src/a.py", "a\n")]);
        let snaps = crate::snapshot::tests::snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        std::fs::write(dir.path().join("src/a.py"), "changed behind prpd's back\n").expect("write");
        let unchanged = snaps
            .record_changes(1, Some(&first), "same", &Changes::Paths(BTreeSet::new()))
            .expect("record");
        assert_eq!(
            first.tree, unchanged.tree,
            "an empty list of changes reads nothing from the tree"
        );
        let seen = snaps
            .record_changes(
                2,
                Some(&unchanged),
                "seen",
                &Changes::Paths(BTreeSet::from([PathBuf::from("src/a.py")])),
            )
            .expect("record");
        assert_ne!(first.tree, seen.tree);
    }

    #[test]
    fn paths_in_an_ignored_folder_are_skipped_unless_it_holds_a_tracked_file() {
        let dir = repo_with(&[("src/a.py", "a\n"), ("build/keep.txt", "kept\n")]);
        let root = dir.path();
        // Ignored after `build/keep.txt` was committed: git keeps tracking it.
        std::fs::write(root.join(".gitignore"), "build/\ngen/\n.prp-session/\n").expect("write");
        let snaps = crate::snapshot::tests::snapshots(root);
        let first = snaps.record(0, None, "base").expect("record");
        let mut written = BTreeSet::from([PathBuf::from("gen")]);
        for path in ["build/keep.txt", "build/out.o", "gen/x.o", "gen/deep/y.o"] {
            let path = PathBuf::from(path);
            std::fs::create_dir_all(root.join(path.parent().expect("parent"))).expect("mkdir");
            std::fs::write(root.join(&path), "written by a build\n").expect("write");
            written.insert(path);
        }
        let by_paths = snaps
            .record_changes(1, Some(&first), "build", &Changes::Paths(written))
            .expect("record");
        let full = Snapshots::open(root, "full", &root.join(".prp-session/full.index"))
            .expect("open")
            .record(0, None, "full")
            .expect("record");
        assert_eq!(by_paths.tree, full.tree, "the same tree as a full scan");
        let files = snaps.files(&by_paths).expect("files");
        assert!(files.contains_key(Path::new("build/keep.txt")), "{files:?}");
        assert_ne!(
            files.get(Path::new("build/keep.txt")),
            snaps
                .files(&first)
                .expect("files")
                .get(Path::new("build/keep.txt")),
            "the tracked file's change is in the snapshot"
        );
        assert!(
            files
                .keys()
                .all(|path| !path.starts_with("gen") && path != Path::new("build/out.o")),
            "{files:?}"
        );
    }

    #[test]
    fn a_tracked_file_git_ignores_once_deleted_stays_out_in_the_next_session() {
        let dir = repo_with(&[("src/a.py", "a\n"), ("dist/app.js", "built\n")]);
        let root = dir.path();
        // `dist/` ignored after `dist/app.js` was committed: git keeps tracking it.
        std::fs::write(root.join(".gitignore"), "dist/\n.prp-session/\n").expect("write");
        let snaps = crate::snapshot::tests::snapshots(root);
        let first = snaps.record(0, None, "base").expect("record");
        let app = PathBuf::from("dist/app.js");
        assert!(snaps.files(&first).expect("files").contains_key(&app));
        std::fs::remove_file(root.join(&app)).expect("remove");
        let paths = Changes::Paths(BTreeSet::from([app.clone()]));
        let deleted = snaps
            .record_changes(1, Some(&first), "deleted", &paths)
            .expect("record");
        // Built again: ignored and no longer tracked, so no snapshot holds it.
        std::fs::write(root.join(&app), "built again\n").expect("write");
        let rebuilt = snaps
            .record_changes(2, Some(&deleted), "rebuilt", &paths)
            .expect("record");
        assert_eq!(rebuilt.tree, deleted.tree);
        // The next session starts from the index file, with a full scan.
        let resumed = crate::snapshot::tests::snapshots(root)
            .record(3, Some(&rebuilt), "resumed")
            .expect("record");
        assert_eq!(
            resumed.tree, rebuilt.tree,
            "the index file does not track the deleted file again"
        );
    }

    #[test]
    fn the_index_stays_in_memory_and_a_new_value_scans_the_whole_tree() {
        let dir = repo_with(&[("src/a.py", "a\n")]);
        let index_file = dir.path().join(".prp-session/snapshot.index");
        let snaps = crate::snapshot::tests::snapshots(dir.path());
        let first = snaps.record(0, None, "base").expect("record");
        let written = std::fs::read(&index_file).expect("the full scan writes the index file");
        std::fs::write(dir.path().join("src/a.py"), "a changed\n").expect("write");
        let seen = snaps
            .record_changes(
                1,
                Some(&first),
                "seen",
                &Changes::Paths(BTreeSet::from([PathBuf::from("src/a.py")])),
            )
            .expect("record");
        assert_ne!(first.tree, seen.tree, "the change is in the snapshot");
        assert_eq!(
            std::fs::read(&index_file).expect("read"),
            written,
            "a snapshot from changed paths leaves the index file alone"
        );
        // A new value has only the older file: a list of paths changed since another value's
        // snapshot does not describe it, so it scans everything.
        std::fs::write(dir.path().join("src/b.py"), "b\n").expect("write");
        let reopened = crate::snapshot::tests::snapshots(dir.path());
        let scanned = reopened
            .record_changes(2, Some(&seen), "reopened", &Changes::Paths(BTreeSet::new()))
            .expect("record");
        let files = reopened.files(&scanned).expect("files");
        assert!(files.contains_key(Path::new("src/b.py")), "{files:?}");
        assert_eq!(
            files.get(Path::new("src/a.py")),
            snaps
                .files(&seen)
                .expect("files")
                .get(Path::new("src/a.py")),
        );
    }
}
