//! How the methods read the repository: which files a walk visits, which of them are tests,
//! and how much of a file is read. Every method goes through these helpers, so the limits on
//! a method's cost (file size, number of files, vendored folders) are set in one place.

use std::path::{Path, PathBuf};

use crate::qa::stack::SKIPPED_DIRS;

/// Files bigger than this are not read: no README, test or source file a person maintains is
/// this large, and reading generated blobs would make QA slow.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Walks stop after this many files, so a huge repository costs a bounded time.
const MAX_WALKED_FILES: usize = 20_000;

/// Reads a text file of bounded size; `None` when it is missing, too big or not text.
pub(super) fn read_text(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

pub(super) fn display(repo: &Path, path: &Path) -> String {
    path.strip_prefix(repo)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every file under `repo` that git would track: `.gitignore` and hidden folders honoured,
/// vendored folders skipped, sorted by name, at most [`MAX_WALKED_FILES`].
pub(crate) fn walk(repo: &Path) -> Vec<PathBuf> {
    ignore::WalkBuilder::new(repo)
        .require_git(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .filter_entry(|entry| !SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(ignore::DirEntry::into_path)
        .take(MAX_WALKED_FILES)
        .collect()
}

/// Folders whose files are tests.
const TEST_DIRECTORIES: &[&str] = &["test", "tests", "spec", "specs", "__tests__"];

/// A file that holds tests judged by its path alone: under a test folder, or named like a test
/// (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`, `x_spec.lua`, `XTest.java`), but not
/// merely containing the letters (`latest.rs`, `contest.go`).
pub(crate) fn is_test_path(relative: &Path) -> bool {
    let in_test_directory = relative.parent().is_some_and(|parent| {
        parent.components().any(|component| {
            TEST_DIRECTORIES.contains(&component.as_os_str().to_string_lossy().as_ref())
        })
    });
    let name = relative
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or("");
    let lower = stem.to_lowercase();
    let named_like_a_test = ["test", "tests", "spec"].contains(&lower.as_str())
        || ["test_", "test-"]
            .iter()
            .any(|prefix| lower.starts_with(prefix))
        || ["_test", "-test", "_tests", "_spec", "-spec"]
            .iter()
            .any(|suffix| lower.ends_with(suffix))
        || ["Test", "Tests", "Spec"]
            .iter()
            .any(|suffix| stem.ends_with(suffix))
        || [".test.", ".spec."]
            .iter()
            .any(|infix| name.to_lowercase().contains(infix));
    in_test_directory || named_like_a_test
}

pub(super) fn extension(path: &Path) -> String {
    path.extension()
        .map(|extension| extension.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognised_by_folder_or_name() {
        for test in [
            "tests/limits.rs",
            "src/__tests__/a.js",
            "pkg/limiter_test.go",
            "test_app.py",
            "web/a.test.ts",
            "web/a.spec.js",
            "spec/x_spec.lua",
            "src/main/java/LimiterTest.java",
        ] {
            assert!(is_test_path(Path::new(test)), "{test}");
        }
        for source in [
            "src/latest.rs",
            "contest.go",
            "src/attestation.py",
            "web/app.ts",
        ] {
            assert!(!is_test_path(Path::new(source)), "{source}");
        }
    }
}
