//! The kept part of a repository's tree: the directories (and, when asked, the files) git does
//! not ignore, found by ripgrep's `ignore` walker. The walker never enters an ignored
//! directory, so a `node_modules/` of 100,000 files costs one entry of its parent, and the
//! watcher spends an inotify watch only on what it keeps.
//!
//! The walk sees hidden files (`.github/` is the project's) but never enters `.git/` or
//! `.prp-session/`, whatever the ignore files say. A subtree (a directory that appeared while
//! the daemon runs) is walked with the rules of the directories above it too.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use crate::ignored::is_git_or_session_name;

/// Whether a walk lists the kept files too, or only the directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Files {
    Listed,
    Skipped,
}

/// What one walk found, each path absolute.
#[derive(Debug, Default)]
pub(super) struct KeptTree {
    /// The kept directories, the walk's top first.
    pub(super) dirs: Vec<PathBuf>,
    /// The kept files (symbolic links included), when the walk listed them.
    pub(super) files: Vec<PathBuf>,
}

/// Walks `top` (the repository `root` or a directory under it) the way git sees it. An
/// unreadable entry below the top is skipped with a warning: one directory prpd cannot read
/// should not blind the watcher to the rest.
pub(super) fn walk(root: &Path, top: &Path, files: Files) -> KeptTree {
    let mut builder = WalkBuilder::new(top);
    builder
        .hidden(false)
        .ignore(false)
        .parents(top != root)
        .require_git(false)
        .follow_links(false)
        .current_dir(root)
        .filter_entry(|entry| !is_git_or_session_name(entry.file_name()));
    let mut tree = KeptTree::default();
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                tracing::warn!(
                    top = %top.display(),
                    %error,
                    "the file watcher skips what it cannot read",
                );
                continue;
            }
        };
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        if is_dir {
            tree.dirs.push(entry.into_path());
        } else if files == Files::Listed {
            tree.files.push(entry.into_path());
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ignored::{IgnoreRules, Kind};

    fn write(root: &Path, file: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x\n").unwrap();
    }

    fn relative(root: &Path, paths: &[PathBuf]) -> Vec<String> {
        let mut names: Vec<String> = paths
            .iter()
            .map(|path| path.strip_prefix(root).unwrap().display().to_string())
            .collect();
        names.sort();
        names
    }

    fn repository() -> (tempfile::TempDir, PathBuf) {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\nnode_modules/\n*.log\n").unwrap();
        std::fs::write(root.join(".git/info/exclude"), "/scratch/\n").unwrap();
        for file in [
            "src/lib.rs",
            "src/debug.log",
            ".github/workflows/ci.yml",
            "target/debug/out",
            "node_modules/left-pad/index.js",
            "scratch/notes.md",
            ".prp-session/runs/r/log",
            "vendor/lib/.gitignore",
            "vendor/lib/a.rs",
            "vendor/lib/gen/x.rs",
        ] {
            write(&root, file);
        }
        std::fs::write(root.join("vendor/lib/.gitignore"), "gen/\n").unwrap();
        (repo, root)
    }

    #[test]
    fn the_walk_keeps_hidden_dirs_and_skips_ignored_git_and_session_dirs() {
        let (_repo, root) = repository();
        let tree = walk(&root, &root, Files::Listed);
        assert_eq!(
            relative(&root, &tree.dirs),
            [
                "",
                ".github",
                ".github/workflows",
                "src",
                "vendor",
                "vendor/lib"
            ]
        );
        assert_eq!(
            relative(&root, &tree.files),
            [
                ".github/workflows/ci.yml",
                ".gitignore",
                "src/lib.rs",
                "vendor/lib/.gitignore",
                "vendor/lib/a.rs"
            ]
        );
        assert!(walk(&root, &root, Files::Skipped).files.is_empty());
    }

    #[test]
    fn a_subtree_walk_honours_the_rules_above_it() {
        let (_repo, root) = repository();
        write(&root, "vendor/lib/debug.log");
        let tree = walk(&root, &root.join("vendor"), Files::Listed);
        assert_eq!(relative(&root, &tree.dirs), ["vendor", "vendor/lib"]);
        assert_eq!(
            relative(&root, &tree.files),
            ["vendor/lib/.gitignore", "vendor/lib/a.rs"]
        );
    }

    #[test]
    fn the_walk_and_the_rules_agree_on_every_path() {
        let (_repo, root) = repository();
        let tree = walk(&root, &root, Files::Listed);
        let rules = IgnoreRules::load(&root, &tree.dirs);
        for dir in &tree.dirs {
            assert!(!rules.is_ignored(dir, Kind::Directory), "{}", dir.display());
        }
        for file in &tree.files {
            assert!(!rules.is_ignored(file, Kind::File), "{}", file.display());
        }
        for ignored in [
            "target",
            "node_modules",
            "scratch",
            ".prp-session",
            "vendor/lib/gen",
        ] {
            assert!(
                rules.is_ignored(&root.join(ignored), Kind::Directory),
                "{ignored}"
            );
        }
        assert!(rules.is_ignored(&root.join("src/debug.log"), Kind::File));
    }
}
