//! Which directory a command works on. prpd measures a git repository (every verdict is about a
//! git snapshot), so a command run from a sub-directory works on the root of the repository
//! around it, found the way git finds it: the nearest directory upwards that holds a `.git`
//! directory or a `.git` file (a worktree or a submodule). A directory outside any repository
//! is refused before anything is read or written.

use std::path::{Path, PathBuf};

/// The directory is not inside a git repository.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} is not a git repository (nor inside one): prpd measures a git repository and records \
     every iteration as a git snapshot; run `git init` there and commit, or pass --repo DIR",
    dir.display()
)]
pub struct NotInRepository {
    /// The directory that was searched from.
    pub dir: PathBuf,
}

/// The root of the git repository that holds `dir` (canonical `dir` itself when it is the root).
pub fn root_of(dir: &Path) -> Result<PathBuf, NotInRepository> {
    let not_found = || NotInRepository {
        dir: dir.to_path_buf(),
    };
    let start = dir.canonicalize().map_err(|_| not_found())?;
    start
        .ancestors()
        .find(|candidate| candidate.join(".git").exists())
        .map(Path::to_path_buf)
        .ok_or_else(not_found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_directory_resolves_to_the_root_that_holds_dot_git() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join(".git")).expect("mkdir .git");
        std::fs::create_dir_all(root.join("src/deep")).expect("mkdir");
        assert_eq!(root_of(&root.join("src/deep")).expect("found"), root);
        assert_eq!(root_of(&root).expect("found"), root);
    }

    #[test]
    fn a_dot_git_file_marks_a_worktree_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join(".git"), "gitdir: /elsewhere/.git/worktrees/x\n").expect("write");
        std::fs::create_dir_all(root.join("a")).expect("mkdir");
        assert_eq!(root_of(&root.join("a")).expect("found"), root);
    }

    #[test]
    fn a_missing_directory_is_not_in_a_repository() {
        let error = root_of(Path::new("/no/such/prpd/dir")).expect_err("missing");
        assert!(
            error.to_string().contains("is not a git repository"),
            "{error}"
        );
    }
}
