//! The test files a commit changes against its parent — for the shipped commit, exactly what
//! its pull request changes against the base it ships on (the run's start, or the moved base
//! it was replayed onto) — for the proof's test audit: each test file added, deleted, renamed
//! (git's rename detection, so a test file moved and trimmed shows as the rename it is) or
//! modified, and what the test files' text counts at each end (`proof_report::TextCounts`).

use std::path::Path;

use git2::{Delta, DiffFindOptions, Oid, Tree};

use super::{SnapshotError, Snapshots};
use crate::frozen;
use crate::proof_report::{FileChange, TestFileChange, TextCounts};

/// The test files a commit changes, and the counts of the test files before and after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestDiff {
    pub changes: Vec<TestFileChange>,
    pub at_from: TextCounts,
    pub at_to: TextCounts,
}

impl Snapshots {
    /// The test files `commit` (hex) changes against its first parent (every file is added
    /// when it has none).
    pub fn test_diff(&self, commit: &str) -> Result<TestDiff, SnapshotError> {
        let oid = self.git("read a commit id", Oid::from_str(commit))?;
        let commit = self.git("find a commit", self.repo.find_commit(oid))?;
        let to_tree = self.git("read a commit's tree", commit.tree())?;
        let from_tree = match commit.parent_count() {
            0 => None,
            _ => Some(self.git(
                "read the parent's tree",
                commit.parent(0).and_then(|parent| parent.tree()),
            )?),
        };
        let mut diff = self.git(
            "compare the shipped commit with its base",
            self.repo
                .diff_tree_to_tree(from_tree.as_ref(), Some(&to_tree), None),
        )?;
        self.git(
            "find renamed files",
            diff.find_similar(Some(DiffFindOptions::new().renames(true))),
        )?;
        let mut changes = Vec::new();
        for delta in diff.deltas() {
            let old = delta.old_file().path();
            let new = delta.new_file().path();
            let is_test = |path: Option<&Path>| path.is_some_and(frozen::is_test_file);
            if !is_test(old) && !is_test(new) {
                continue;
            }
            let change = match delta.status() {
                Delta::Added | Delta::Copied | Delta::Untracked => FileChange::Added,
                Delta::Deleted => FileChange::Deleted,
                Delta::Renamed => FileChange::Renamed,
                Delta::Modified
                | Delta::Typechange
                | Delta::Unmodified
                | Delta::Ignored
                | Delta::Unreadable
                | Delta::Conflicted => FileChange::Modified,
            };
            let Some(path) = new.or(old) else {
                continue;
            };
            changes.push(TestFileChange {
                change,
                path: path.to_path_buf(),
                from: (change == FileChange::Renamed)
                    .then(|| old.map(Path::to_path_buf))
                    .flatten(),
            });
        }
        Ok(TestDiff {
            changes,
            at_from: match &from_tree {
                Some(tree) => self.test_counts(tree)?,
                None => TextCounts::default(),
            },
            at_to: self.test_counts(&to_tree)?,
        })
    }

    /// The counts of every test file of `tree`.
    fn test_counts(&self, tree: &Tree<'_>) -> Result<TextCounts, SnapshotError> {
        let mut blobs = Vec::new();
        self.git(
            "list the test files",
            tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
                if entry.kind() == Some(git2::ObjectType::Blob)
                    && let Ok(name) = entry.name()
                    && frozen::is_test_file(Path::new(&format!("{root}{name}")))
                {
                    blobs.push(entry.id());
                }
                git2::TreeWalkResult::Ok
            }),
        )?;
        let mut counts = TextCounts::default();
        for id in blobs {
            let blob = self.git("read a test file", self.repo.find_blob(id))?;
            counts = counts.plus(TextCounts::of(&String::from_utf8_lossy(blob.content())));
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::tests::{repo_with, snapshots};

    #[test]
    fn added_deleted_renamed_and_modified_test_files_are_told_apart_and_counted() {
        let long_test = "test(\"adds\", () => {\n  assert.equal(add(1, 2), 3);\n  assert.equal(add(2, 2), 4);\n  assert.equal(add(0, 0), 0);\n});\n";
        let dir = repo_with(&[
            ("src/calc.js", "export const add = (a, b) => a + b;\n"),
            ("test/add.test.js", long_test),
            (
                "test/old.test.js",
                "test(\"old\", () => { assert(true); });\n",
            ),
            (
                "test/calc.test.js",
                "test(\"x\", () => { expect(1).toBe(1); });\n",
            ),
        ]);
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), ".prp-session/\n").expect("write");
        let snaps = snapshots(root);
        let base = snaps.record(0, None, "base").expect("record");
        std::fs::rename(root.join("test/add.test.js"), root.join("test/sum.test.js"))
            .expect("rename");
        std::fs::remove_file(root.join("test/old.test.js")).expect("rm");
        std::fs::write(
            root.join("test/calc.test.js"),
            "test(\"x\", () => { expect(1).toBe(1); expect(2).toBe(2); });\n",
        )
        .expect("write");
        std::fs::write(
            root.join("test/multiply.test.js"),
            "test(\"m\", () => { assert.equal(multiply(2, 3), 6); });\n",
        )
        .expect("write");
        std::fs::write(
            root.join("src/calc.js"),
            "export const add = (a, b) => a + b;\nexport const multiply = (a, b) => a * b;\n",
        )
        .expect("write");
        let shipped = snaps.record(1, Some(&base), "shipped").expect("record");

        let diff = snaps
            .test_diff(&shipped.commit)
            .expect("diff against its parent, the base");

        let mut found: Vec<(FileChange, String, Option<String>)> = diff
            .changes
            .iter()
            .map(|change| {
                (
                    change.change,
                    change.path.display().to_string(),
                    change.from.as_ref().map(|from| from.display().to_string()),
                )
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                (FileChange::Added, "test/multiply.test.js".to_owned(), None),
                (FileChange::Deleted, "test/old.test.js".to_owned(), None),
                (
                    FileChange::Renamed,
                    "test/sum.test.js".to_owned(),
                    Some("test/add.test.js".to_owned())
                ),
                (FileChange::Modified, "test/calc.test.js".to_owned(), None),
            ],
            "only test files, a moved file as a rename"
        );
        assert_eq!(diff.at_from.assertions, 5, "3 + 1 + 1 at the base");
        assert_eq!(diff.at_to.assertions, 6, "3 + 2 + 1 shipped");
    }
}
