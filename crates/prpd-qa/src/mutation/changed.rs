//! The lines a change touched: the working tree (tracked files and untracked ones git does not
//! ignore) against the base commit, as a unified diff with no context lines. cargo-mutants
//! reads the diff itself (`--in-diff`); the other tools get the changed files and line ranges
//! read from the diff's hunk headers, and every tool's mutants are counted only on those lines.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{DiffFormat, DiffOptions, Repository};

use crate::method::{folder_in_workdir, is_test_path};

/// Files bigger than this are left out of the diff.
const MAX_FILE_BYTES: i64 = 1024 * 1024;

/// The lines added or changed since the base, by file (relative to the folder QA judges).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChangedLines {
    /// Inclusive, 1-based line ranges of the new side, by file; test files are left out (a
    /// test is not the code its mutants would test).
    pub(crate) files: BTreeMap<String, Vec<(u32, u32)>>,
    /// The unified diff, paths relative to the folder QA judges.
    pub(crate) diff: String,
}

impl ChangedLines {
    /// The change of the working tree of `repo` (a git working tree or a folder of one) since
    /// the commit `revision`.
    pub(crate) fn since(repo: &Path, revision: &str) -> Result<ChangedLines, git2::Error> {
        let repository = Repository::discover(repo)?;
        let base = repository.revparse_single(revision)?.peel_to_tree()?;
        let folder = folder_in_workdir(&repository, repo);
        let mut options = DiffOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true)
            .ignore_submodules(true)
            .context_lines(0)
            .max_size(MAX_FILE_BYTES);
        if !folder.as_os_str().is_empty() {
            options.pathspec(folder.as_os_str());
        }
        let diff = repository.diff_tree_to_workdir_with_index(Some(&base), Some(&mut options))?;
        let mut text = String::new();
        diff.print(DiffFormat::Patch, |_, _, line| {
            if matches!(line.origin(), '+' | '-' | ' ') {
                text.push(line.origin());
            }
            text.push_str(&String::from_utf8_lossy(line.content()));
            true
        })?;
        let prefix = folder.display().to_string();
        Ok(ChangedLines::from_diff(&relative_to(&text, &prefix)))
    }

    /// The changed lines of a unified diff with no context lines.
    pub(crate) fn from_diff(diff: &str) -> ChangedLines {
        let mut files: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in diff.lines() {
            if let Some(path) = line.strip_prefix("+++ ") {
                current = path
                    .strip_prefix("b/")
                    .filter(|path| !is_test_path(Path::new(path)))
                    .map(str::to_owned);
            } else if let (Some(file), Some(header)) = (&current, line.strip_prefix("@@ "))
                && let Some((start, count)) = new_side(header)
                && count > 0
            {
                files
                    .entry(file.clone())
                    .or_default()
                    .push((start, start + count - 1));
            }
        }
        ChangedLines {
            files,
            diff: diff.to_owned(),
        }
    }

    /// Whether `line` of `file` was added or changed.
    pub(crate) fn contains(&self, file: &str, line: u32) -> bool {
        self.files.get(file).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|(start, end)| (*start..=*end).contains(&line))
        })
    }

    /// The changed files whose name ends with one of `extensions`.
    pub(crate) fn with_extension(&self, extensions: &[&str]) -> Vec<&str> {
        self.files
            .keys()
            .map(String::as_str)
            .filter(|file| {
                Path::new(file)
                    .extension()
                    .is_some_and(|extension| extensions.iter().any(|known| extension == *known))
            })
            .collect()
    }

    /// How many lines changed in the files whose name ends with one of `extensions`.
    pub(crate) fn line_count(&self, extensions: &[&str]) -> u32 {
        self.with_extension(extensions)
            .iter()
            .flat_map(|file| &self.files[*file])
            .map(|(start, end)| end - start + 1)
            .sum()
    }
}

/// `+c,d` (or `+c`) of a hunk header `-a,b +c,d @@`: the new side's start and line count.
fn new_side(header: &str) -> Option<(u32, u32)> {
    let new = header
        .split_whitespace()
        .find_map(|part| part.strip_prefix('+'))?;
    let (start, count) = new.split_once(',').unwrap_or((new, "1"));
    Some((start.parse().ok()?, count.parse().ok()?))
}

/// `diff` with the folder `prefix` taken off the paths of its headers, so they are relative to
/// the folder QA judges (where the tools run).
fn relative_to(diff: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        return diff.to_owned();
    }
    let mut text = String::with_capacity(diff.len());
    for line in diff.split_inclusive('\n') {
        let header = ["diff --git ", "--- ", "+++ "]
            .into_iter()
            .any(|start| line.starts_with(start));
        if header {
            text.push_str(
                &line
                    .replace(&format!("a/{prefix}/"), "a/")
                    .replace(&format!("b/{prefix}/"), "b/"),
            );
        } else {
            text.push_str(line);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "\
diff --git a/calc.py b/calc.py
index 4a4b0a3..1f0d6a1 100644
--- a/calc.py
+++ b/calc.py
@@ -2,0 +3,12 @@ def add(a, b):
+
+
+def multiply(a, b):
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x = 1
-y = 2
diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -7 +7 @@ pub fn clamp
-    x
+    y
@@ -20,3 +20,0 @@
-a
-b
-c
diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1,3 @@
+def test_multiply():
";

    #[test]
    fn hunk_headers_give_the_changed_lines_of_source_files() {
        let changed = ChangedLines::from_diff(DIFF);
        assert_eq!(
            changed.files,
            BTreeMap::from([
                ("calc.py".to_owned(), vec![(3, 14)]),
                ("src/lib.rs".to_owned(), vec![(7, 7)]),
            ])
        );
        assert!(changed.contains("calc.py", 3));
        assert!(changed.contains("calc.py", 14));
        assert!(!changed.contains("calc.py", 2));
        assert!(!changed.contains("tests/test_calc.py", 1));
        assert_eq!(changed.with_extension(&["py"]), ["calc.py"]);
        assert_eq!(changed.line_count(&["rs"]), 1);
    }

    #[test]
    fn a_folder_prefix_leaves_the_headers() {
        let diff = "diff --git a/web/src/a.js b/web/src/a.js\n--- a/web/src/a.js\n+++ b/web/src/a.js\n@@ -1 +1 @@\n-a/web/x\n+b/web/y\n";
        assert_eq!(
            relative_to(diff, "web"),
            "diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-a/web/x\n+b/web/y\n"
        );
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "the test builds a fixture repository with git directly, outside prpd"
    )]
    fn git(repo: &Path, args: &[&str]) {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(repo)
            .output()
            .expect("run git");
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }

    #[test]
    fn the_working_tree_against_a_commit_untracked_files_included() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join("app")).expect("folder");
        std::fs::write(
            root.join("app/calc.py"),
            "def add(a, b):\n    return a + b\n",
        )
        .expect("file");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        std::fs::write(
            root.join("app/calc.py"),
            "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n",
        )
        .expect("file");
        std::fs::write(root.join("app/new.py"), "X = 1\n").expect("file");
        let changed = ChangedLines::since(&root.join("app"), "main").expect("a diff");
        assert_eq!(
            changed.files,
            BTreeMap::from([
                ("calc.py".to_owned(), vec![(3, 6)]),
                ("new.py".to_owned(), vec![(1, 1)]),
            ])
        );
        assert!(changed.diff.contains("+++ b/calc.py\n"), "{}", changed.diff);
        assert!(changed.diff.contains("+def neg(a):\n"), "{}", changed.diff);
    }
}
