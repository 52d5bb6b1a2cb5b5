//! The copy of the tree a mutation tool works in. Every tool writes into the directory it runs
//! in (mutmut its `mutants/`, Stryker its `reports/` and `.stryker-tmp/`, cargo-mutants its
//! `mutants.out/` and, `--in-place`, the mutated sources), and QA must not change the tree it
//! judges, which SHIP may commit. So prpd copies the files git would see (ignored files,
//! `.git/` and `.prp-session/` left out) into a temporary directory outside the repository
//! (where no parent `Cargo.toml` or `package.json` claims it) and links the project's
//! `node_modules/` in, which Stryker and its test runner are installed in.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use tempfile::TempDir;

/// At most this many files are copied; a bigger tree is no tree to mutate within a QA.
const MAX_FILES: usize = 20_000;

/// A temporary copy of a tree, removed when dropped.
#[derive(Debug)]
pub(crate) struct Sandbox {
    dir: TempDir,
}

/// Why the copy could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    #[error("failed to copy {} for the mutation tool", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the tree has more than {MAX_FILES} files to copy for the mutation tool")]
    TooBig,
}

impl Sandbox {
    /// Copies `repo`'s files.
    pub(crate) fn copy(repo: &Path) -> Result<Sandbox, SandboxError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SandboxError::Io { path, source }
        };
        let dir = tempfile::Builder::new()
            .prefix("prpd-mutation-")
            .tempdir()
            .map_err(io(&std::env::temp_dir()))?;
        let mut copied = 0;
        let walk = WalkBuilder::new(repo)
            .hidden(false)
            .require_git(false)
            .filter_entry(|entry| {
                !matches!(
                    entry.file_name().to_str(),
                    Some(".git" | ".prp-session" | "node_modules")
                )
            })
            .build();
        for entry in walk.flatten() {
            let Ok(relative) = entry.path().strip_prefix(repo) else {
                continue;
            };
            if relative.as_os_str().is_empty()
                || !entry.file_type().is_some_and(|kind| kind.is_file())
            {
                continue;
            }
            copied += 1;
            if copied > MAX_FILES {
                return Err(SandboxError::TooBig);
            }
            let target = dir.path().join(relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::copy(entry.path(), &target).map_err(io(entry.path()))?;
        }
        let modules = repo.join("node_modules");
        if modules.is_dir() {
            std::os::unix::fs::symlink(&modules, dir.path().join("node_modules"))
                .map_err(io(&modules))?;
        }
        Ok(Sandbox { dir })
    }

    /// Where the copy is.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_holds_what_git_sees_and_links_node_modules() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let root = repo.path();
        for (file, text) in [
            (".gitignore", "build/\n"),
            ("src/calc.js", "x\n"),
            ("build/out.js", "ignored\n"),
            (".prp-session/state.json", "{}\n"),
            ("node_modules/.bin/stryker", "#!/bin/sh\n"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("folder");
            std::fs::write(path, text).expect("file");
        }
        let sandbox = Sandbox::copy(root).expect("a copy");
        let copy = sandbox.path().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(copy.join("src/calc.js")).expect("copied"),
            "x\n"
        );
        assert!(copy.join(".gitignore").is_file());
        assert!(!copy.join("build").exists());
        assert!(!copy.join(".prp-session").exists());
        assert!(copy.join("node_modules/.bin/stryker").is_file());
        assert!(
            std::fs::symlink_metadata(copy.join("node_modules"))
                .expect("a link")
                .file_type()
                .is_symlink()
        );
        drop(sandbox);
        assert!(!copy.exists());
    }
}
