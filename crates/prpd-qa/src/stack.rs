//! Stack detection: which stacks (Node, Python, Go, Rust, …) a repository holds and where,
//! from the marker files of the tools mapping (DESIGN §6.2).
//!
//! Theory of operation. A repository may hold one stack at its root, several side by side, or
//! a monorepo of stacks in sub-folders (`web/` Node, `api/` Python). prpd looks at the entries
//! of the root and of its sub-directories down to [`MAX_DEPTH`] levels, and never at anything
//! deeper: the walk lists directories only, skips hidden ones (`.git`, `.venv`,
//! `.prp-session`), vendored and generated ones ([`SKIPPED_DIRS`]) and whatever the
//! repository's ignore files exclude, so its cost depends on the shape of the top of the tree
//! and not on the number of files in it. A repository of 100,000 files under `node_modules/`
//! and deep source trees is detected in a few milliseconds.
//!
//! A stack found inside a directory that already holds the same stack is a member of that
//! stack's workspace (a crate of a Cargo workspace, a package of an npm workspace) and is not
//! reported again; its commands are the workspace's.
//!
//! Order, which makes the first stack the primary one: stacks at the root first, then by the
//! mapping's priority order, then shallower before deeper, then by path.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use serde::{Deserialize, Serialize};

use crate::tools_mapping::{EntryKind, StackTools, ToolsMapping};

/// How many directory levels below the root may hold a stack (`a/b/c/package.json`).
pub const MAX_DEPTH: usize = 3;

/// Directories that hold dependencies, build output or virtual environments: never a stack of
/// the project, and often huge. Hidden directories (`.git`, `.venv`, `.prp-session`, `.tox`)
/// are skipped as well.
pub const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    "third_party",
    "target",
    "dist",
    "build",
    "out",
    "venv",
    "env",
    "site-packages",
    "__pycache__",
    "coverage",
    "_build",
    "deps",
    "Pods",
];

/// A stack found in the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stack {
    /// The stack's id in the tools mapping, such as `python`.
    pub id: String,
    /// The directory that holds it, relative to the repository root; `.` for the root.
    pub path: PathBuf,
}

impl Stack {
    /// Whether the stack sits at the repository root.
    pub fn is_root(&self) -> bool {
        self.path == Path::new(".")
    }
}

/// Every stack of `repo`, primary first (see the module docs for the order).
pub fn detect_stacks(repo: &Path, mapping: &ToolsMapping) -> Vec<Stack> {
    let mut found: Vec<(usize, usize, Stack)> = Vec::new();
    for directory in candidate_directories(repo) {
        let relative = relative_path(repo, &directory);
        let depth = relative.components().count();
        let entries = entries(&directory);
        for (priority, stack) in mapping.stacks().iter().enumerate() {
            if !has_marker(&entries, stack) {
                continue;
            }
            let inside_same_stack = found.iter().any(|(_, _, outer)| {
                outer.id == stack.id() && (outer.is_root() || relative.starts_with(&outer.path))
            });
            if !inside_same_stack {
                found.push((
                    priority,
                    depth,
                    Stack {
                        id: stack.id().to_owned(),
                        path: if depth == 0 {
                            PathBuf::from(".")
                        } else {
                            relative.clone()
                        },
                    },
                ));
            }
        }
    }
    found.sort_by(|(priority_a, depth_a, a), (priority_b, depth_b, b)| {
        (!a.is_root(), priority_a, depth_a, &a.path).cmp(&(
            !b.is_root(),
            priority_b,
            depth_b,
            &b.path,
        ))
    });
    found.into_iter().map(|(_, _, stack)| stack).collect()
}

/// The root and its non-skipped sub-directories down to [`MAX_DEPTH`], shallower first, so that
/// a workspace root is always seen before its members.
fn candidate_directories(repo: &Path) -> Vec<PathBuf> {
    let mut directories: Vec<(usize, PathBuf)> = WalkBuilder::new(repo)
        .max_depth(Some(MAX_DEPTH))
        .hidden(true)
        .filter_entry(|entry| {
            entry.file_type().is_some_and(|kind| kind.is_dir())
                && !SKIPPED_DIRS
                    .iter()
                    .any(|skipped| entry.file_name() == *skipped)
        })
        .build()
        .filter_map(|entry| match entry {
            Ok(entry) => Some((entry.depth(), entry.into_path())),
            Err(error) => {
                tracing::debug!(%error, "skipping an unreadable directory during stack detection");
                None
            }
        })
        .collect();
    directories.sort();
    directories.into_iter().map(|(_, path)| path).collect()
}

fn relative_path(repo: &Path, directory: &Path) -> PathBuf {
    directory
        .strip_prefix(repo)
        .map_or_else(|_| directory.to_path_buf(), Path::to_path_buf)
}

/// The names of `directory`'s entries and whether each is a directory; empty when it cannot
/// be read (a directory prpd may not list holds no stack it could check).
fn entries(directory: &Path) -> Vec<(String, EntryKind)> {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let is_dir = match entry.file_type() {
                Ok(kind) if kind.is_symlink() => entry.path().is_dir(),
                Ok(kind) => kind.is_dir(),
                Err(_) => false,
            };
            let kind = if is_dir {
                EntryKind::Dir
            } else {
                EntryKind::Other
            };
            Some((name, kind))
        })
        .collect()
}

/// Whether one of `entries` is a marker of `stack`.
fn has_marker(entries: &[(String, EntryKind)], stack: &StackTools) -> bool {
    entries.iter().any(|(name, kind)| {
        stack
            .markers()
            .iter()
            .any(|marker| marker.matches(name, *kind))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .prefix("stack-")
            .tempdir()
            .expect("temp dir");
        for file in files {
            let path = dir.path().join(file);
            if let Some(directory) = file.strip_suffix('/') {
                std::fs::create_dir_all(dir.path().join(directory)).expect("mkdir");
            } else {
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(path, "{}").expect("write");
            }
        }
        dir
    }

    fn detected(files: &[&str]) -> Vec<(String, String)> {
        let dir = tree(files);
        detect_stacks(dir.path(), &ToolsMapping::builtin())
            .into_iter()
            .map(|stack| (stack.id, stack.path.display().to_string()))
            .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(id, path)| ((*id).to_owned(), (*path).to_owned()))
            .collect()
    }

    #[test]
    fn stacks_are_found_by_names_globs_and_directory_markers_primary_first() {
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
        let cases: &[Case<'_>] = &[
            (&[], &[]),
            (&["package.json"], &[("node_typescript", ".")]),
            (&["go.mod", "Makefile"], &[("golang", ".")]),
            (&["demo-1.0-1.rockspec"], &[("lua", ".")]),
            (&["lua/"], &[("lua", ".")]),
            (&["src/lua"], &[]),
            (
                &["pyproject.toml", "package.json"],
                &[("node_typescript", "."), ("python", ".")],
            ),
            (
                &["api/pyproject.toml", "web/package.json"],
                &[("node_typescript", "web"), ("python", "api")],
            ),
            (
                &["services/b/go.mod", "tools/go.mod", "Cargo.toml"],
                &[("rust", "."), ("golang", "tools"), ("golang", "services/b")],
            ),
            (
                &["Cargo.toml", "crates/a/Cargo.toml", "crates/b/Cargo.toml"],
                &[("rust", ".")],
            ),
            (
                &["web/package.json", "web/packages/ui/package.json"],
                &[("node_typescript", "web")],
            ),
            (&["a/b/c/go.mod"], &[("golang", "a/b/c")]),
            (&["a/b/c/d/go.mod"], &[]),
            (
                &[
                    "node_modules/x/package.json",
                    "target/package.json",
                    "vendor/go.mod",
                    ".venv/pyproject.toml",
                    ".prp-session/package.json",
                ],
                &[],
            ),
        ];
        for (files, expected) in cases {
            assert_eq!(detected(files), pairs(expected), "{files:?}");
        }
    }

    #[test]
    fn gitignored_folders_are_skipped() {
        let dir = tree(&["generated/package.json", "app/go.mod"]);
        std::fs::create_dir(dir.path().join(".git")).expect("mkdir .git");
        std::fs::write(dir.path().join(".gitignore"), "generated/\n").expect("write");
        let stacks = detect_stacks(dir.path(), &ToolsMapping::builtin());
        assert_eq!(
            stacks,
            [Stack {
                id: "golang".to_owned(),
                path: PathBuf::from("app")
            }]
        );
    }
}
