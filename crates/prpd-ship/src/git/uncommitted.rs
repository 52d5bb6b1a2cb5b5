//! The user's uncommitted work: what `prpd run` refuses to start on (unless `--allow-dirty`),
//! because the run's base is the working tree and the user's own changes must never land in
//! the pull request. Uncommitted means what `git status` shows: tracked files modified or
//! deleted, changes staged in the index, and untracked files that are not ignored. prpd's own
//! `.prp-session/` never counts, nor does a nested repository (the snapshots leave it out).

use std::path::Path;

use git2::{Repository, Status, StatusOptions};

use prpd_base::paths::SESSION_DIR;

use super::{ShipError, git};

/// The paths `git status` would list in the repository at `root`, sorted (an untracked folder
/// as one path ending in `/`).
pub fn uncommitted(root: &Path) -> Result<Vec<String>, ShipError> {
    let repo = git(root, "open the repository", Repository::open(root))?;
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(false);
    let statuses = git(
        root,
        "list the uncommitted changes",
        repo.statuses(Some(&mut options)),
    )?;
    let mut paths: Vec<String> = statuses
        .iter()
        .filter(|entry| !entry.status().is_empty() && !entry.status().contains(Status::IGNORED))
        .filter_map(|entry| entry.path().ok().map(str::to_owned))
        .filter(|path| !path.starts_with(SESSION_DIR))
        .filter(|path| !(path.ends_with('/') && root.join(path).join(".git").exists()))
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::commit::tests::repo_with;

    #[test]
    fn modified_staged_and_untracked_files_count_and_ignored_ones_and_prpds_state_do_not() {
        let (dir, _) = repo_with(&[
            ("a.txt", "a\n"),
            ("b.txt", "b\n"),
            (".gitignore", "build/\n"),
        ]);
        let root = dir.path();
        // `repo_with` commits without touching the index: make it match HEAD first.
        let repo = Repository::open(root).expect("open");
        let head = repo.head().expect("head").peel_to_tree().expect("tree");
        let mut index = repo.index().expect("index");
        index.read_tree(&head).expect("read tree");
        index.write().expect("write index");
        for (path, text) in [
            ("a.txt", "a\n"),
            ("b.txt", "b\n"),
            (".gitignore", "build/\n"),
        ] {
            std::fs::write(root.join(path), text).expect("write");
        }
        assert_eq!(uncommitted(root).expect("status"), Vec::<String>::new());

        std::fs::write(root.join("a.txt"), "changed\n").expect("write");
        std::fs::write(root.join("new.txt"), "n\n").expect("write");
        std::fs::create_dir_all(root.join("build")).expect("mkdir");
        std::fs::write(root.join("build/out.o"), "o").expect("write");
        std::fs::create_dir_all(root.join(".prp-session")).expect("mkdir");
        std::fs::write(root.join(".prp-session/state.json"), "{}").expect("write");
        Repository::init(root.join("nested")).expect("nested repository");
        std::fs::write(root.join("nested/x.txt"), "x").expect("write");
        let blob = repo.blob(b"staged\n").expect("blob");
        let mut entry = index.get_path(Path::new("b.txt"), 0).expect("entry");
        entry.id = blob;
        index.add(&entry).expect("stage");
        index.write().expect("write index");

        assert_eq!(
            uncommitted(root).expect("status"),
            ["a.txt", "b.txt", "new.txt"]
        );
    }
}
