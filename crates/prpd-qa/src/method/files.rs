//! How the methods read the repository: which files a walk visits, which of them are tests,
//! and how much of a file is read. Every method goes through these helpers, so the limits on
//! a method's cost (file size, files and bytes read, vendored folders) are set in one place.
//!
//! The files are what git tracks (the index: what the snapshot holds and what the run staged)
//! and the files the run created that git does not ignore, listed by name without reading them
//! ([`listed`]); outside a git repository, the folder is walked with its ignore files
//! honoured. Naming the files costs little even for 100,000 of them, so the list is never cut:
//! a method picks the files it wants by name first ([`Reader::matching`]), and the cost is
//! bounded by what it then reads ([`Budget`]). When a budget runs out, the reader says how
//! many matching files were left unread ([`Reader::limit`]), and the method says so in its
//! detail: a silent cap where a name happens to sort would be a false verdict.

use std::path::{Path, PathBuf};

use git2::{Repository, Status, StatusOptions};

use crate::stack::SKIPPED_DIRS;

/// Files bigger than this are not read: no README, test or source file a person maintains is
/// this large, and reading generated blobs would make QA slow.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

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

/// Every file of `repo` a method may read, sorted by name, absolute: see [`listed`]. The list
/// is not cut; read the files through a [`Reader`] to bound the cost.
pub(crate) fn walk(repo: &Path) -> Vec<PathBuf> {
    listed(repo)
        .into_iter()
        .map(|relative| repo.join(relative))
        .collect()
}

/// Every file of `repo` a method may read, relative, sorted by name: what git tracks plus the
/// untracked files it does not ignore, or, outside a git repository, what a walk honouring the
/// ignore files finds; vendored and generated folders ([`SKIPPED_DIRS`]) and hidden ones
/// (`.git`, `.venv`, `.prp-session`) left out either way.
fn listed(repo: &Path) -> Vec<PathBuf> {
    let mut paths = tracked_and_new(repo).unwrap_or_else(|| walked(repo));
    paths.retain(|path| is_kept(path));
    paths.sort();
    paths.dedup();
    paths
}

/// Whether no folder or name on `relative` is hidden or vendored.
fn is_kept(relative: &Path) -> bool {
    relative.components().all(|component| {
        let name = component.as_os_str().to_string_lossy();
        !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref())
    })
}

/// The mode git gives a submodule in the index.
const GITLINK: u32 = 0o160_000;

/// The index's files (a submodule is not a file) and the untracked, not ignored ones, when
/// `repo` is the top of a git work tree; `None` otherwise.
fn tracked_and_new(repo: &Path) -> Option<Vec<PathBuf>> {
    let git = Repository::open(repo).ok()?;
    let workdir = git.workdir()?.canonicalize().ok()?;
    if workdir != repo.canonicalize().ok()? {
        return None;
    }
    let index = git.index().ok()?;
    let mut paths: Vec<PathBuf> = index
        .iter()
        .filter(|entry| entry.mode != GITLINK)
        .filter_map(|entry| String::from_utf8(entry.path).ok().map(PathBuf::from))
        .collect();
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_unmodified(false)
        .exclude_submodules(true);
    let statuses = git.statuses(Some(&mut options)).ok()?;
    paths.extend(
        statuses
            .iter()
            .filter(|entry| entry.status().contains(Status::WT_NEW))
            .filter_map(|entry| entry.path().ok().map(PathBuf::from)),
    );
    Some(paths)
}

/// The files under `repo` a walk finds with `.gitignore` honoured, relative.
fn walked(repo: &Path) -> Vec<PathBuf> {
    ignore::WalkBuilder::new(repo)
        .require_git(false)
        .filter_entry(|entry| !SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| entry.path().strip_prefix(repo).ok().map(Path::to_path_buf))
        .collect()
}

/// How much one method may read: a number of files and of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) files: usize,
    pub(crate) bytes: u64,
}

impl Budget {
    /// What a method reads at most unless it says otherwise: far more than the tests or
    /// sources of any project a person maintains, and a few seconds of reading.
    pub(crate) const DEFAULT: Budget = Budget {
        files: 20_000,
        bytes: 256 * 1024 * 1024,
    };
}

/// The text files a method chose by name, read in name order within a [`Budget`]; an iterator
/// of each file's path (absolute) and text. A file that is missing, too big or not text is
/// passed over without counting.
#[derive(Debug)]
pub(crate) struct Reader {
    paths: std::vec::IntoIter<PathBuf>,
    budget: Budget,
    files_read: usize,
    bytes_read: u64,
    /// The matching files left unread when the budget ran out.
    unread: usize,
}

impl Reader {
    /// The files of `repo` ([`walk`]) whose relative path `wanted` accepts, within
    /// [`Budget::DEFAULT`]. `wanted` sees names only: nothing is read to choose.
    pub(crate) fn matching(repo: &Path, wanted: impl Fn(&Path) -> bool) -> Reader {
        let paths: Vec<PathBuf> = listed(repo)
            .into_iter()
            .filter(|relative| wanted(relative))
            .map(|relative| repo.join(relative))
            .collect();
        Reader {
            paths: paths.into_iter(),
            budget: Budget::DEFAULT,
            files_read: 0,
            bytes_read: 0,
            unread: 0,
        }
    }

    /// The same files within `budget`.
    pub(crate) fn within(self, budget: Budget) -> Reader {
        Reader { budget, ..self }
    }

    /// How many files were read so far.
    pub(crate) fn files_read(&self) -> usize {
        self.files_read
    }

    /// When the budget ran out, what was left unread, in words a method's detail can carry:
    /// "read 2,000 files (the limit); 340 more were not read". `None` while every matching
    /// file was read.
    pub(crate) fn limit(&self) -> Option<String> {
        (self.unread > 0).then(|| {
            let megabytes = self.budget.bytes / (1024 * 1024);
            format!(
                "stopped reading at the limit of {} files or {megabytes} MiB after {} file{} \
                 ({} KiB); {} more matching file{} not read",
                self.budget.files,
                self.files_read,
                if self.files_read == 1 { "" } else { "s" },
                self.bytes_read / 1024,
                self.unread,
                if self.unread == 1 { " was" } else { "s were" },
            )
        })
    }
}

impl Iterator for Reader {
    type Item = (PathBuf, String);

    fn next(&mut self) -> Option<(PathBuf, String)> {
        loop {
            if self.files_read >= self.budget.files || self.bytes_read >= self.budget.bytes {
                self.unread += self.paths.len();
                self.paths = Vec::new().into_iter();
                return None;
            }
            let path = self.paths.next()?;
            let Some(text) = read_text(&path) else {
                continue;
            };
            self.files_read += 1;
            self.bytes_read += text.len() as u64;
            return Some((path, text));
        }
    }
}

/// Folders whose files are tests.
const TEST_DIRECTORIES: &[&str] = &["test", "tests", "spec", "specs", "__tests__"];

/// A file that holds tests judged by its path alone: under a test folder, or named like a test
/// (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`, `x_spec.lua`, `XTest.java`), but not
/// merely containing the letters (`latest.rs`, `contest.go`).
pub fn is_test_path(relative: &Path) -> bool {
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

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Commits every file of the work tree at `root` that git does not ignore.
    fn commit_all(root: &Path) {
        let repo = Repository::open(root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = git2::Signature::now("prpd", "dev@prpd.invalid").unwrap();
        repo.commit(Some("HEAD"), &signature, &signature, "fixture", &tree, &[])
            .unwrap();
    }

    #[test]
    fn a_big_repository_lists_every_tracked_and_new_file_whatever_their_names_sort_after() {
        const DATA_FILES: usize = 25_000;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        Repository::init(root).unwrap();
        for number in 0..DATA_FILES {
            write(
                root,
                &format!("data/{:03}/{number}.csv", number % 100),
                "1\n",
            );
        }
        write(root, "tests/test_calculator.py", "def test_ac_1(): pass\n");
        write(root, ".gitignore", "*.log\nscratch/\n");
        commit_all(root);
        // What the run created after the snapshot: one new test file, and ignored output.
        write(root, "tests/test_new.py", "def test_ac_2(): pass\n");
        write(root, "run.log", "noise\n");
        write(root, "scratch/tmp.py", "x = 1\n");
        write(root, "node_modules/left/index.js", "x\n");

        let started = std::time::Instant::now();
        let tests: Vec<PathBuf> = Reader::matching(root, is_test_path)
            .map(|(path, _)| path.strip_prefix(root).unwrap().to_path_buf())
            .collect();
        let listed = listed(root);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            tests,
            [
                PathBuf::from("tests/test_calculator.py"),
                PathBuf::from("tests/test_new.py")
            ]
        );
        assert_eq!(listed.len(), DATA_FILES + 2, "{:?}", &listed[..3]);
        for left_out in [
            "run.log",
            "scratch/tmp.py",
            "node_modules/left/index.js",
            ".gitignore",
        ] {
            assert!(!listed.contains(&PathBuf::from(left_out)), "{left_out}");
        }
    }

    #[test]
    fn a_tracked_file_deleted_by_the_run_is_not_read_and_outside_git_the_ignore_files_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        Repository::init(root).unwrap();
        write(root, "src/gone.rs", "fn a() {}\n");
        write(root, "src/kept.rs", "fn b() {}\n");
        commit_all(root);
        std::fs::remove_file(root.join("src/gone.rs")).unwrap();
        let read: Vec<PathBuf> = Reader::matching(root, |_| true)
            .map(|(path, _)| path)
            .collect();
        assert_eq!(read, [root.join("src/kept.rs")]);

        let plain = tempfile::tempdir().unwrap();
        write(plain.path(), ".gitignore", "generated/\n");
        write(plain.path(), "generated/big.rs", "fn g() {}\n");
        write(plain.path(), "src/lib.rs", "fn l() {}\n");
        assert_eq!(walk(plain.path()), [plain.path().join("src/lib.rs")]);
    }

    #[test]
    fn a_reader_that_runs_out_of_budget_says_how_much_it_left_unread() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c", "d", "e"] {
            write(dir.path(), &format!("tests/test_{name}.py"), "0123456789");
        }
        let cases = [
            (
                Budget {
                    files: 2,
                    bytes: 1024,
                },
                2,
                Some("3 more matching files were not read"),
            ),
            (
                Budget {
                    files: 10,
                    bytes: 25,
                },
                3,
                Some("2 more matching files were not read"),
            ),
            (
                Budget {
                    files: 4,
                    bytes: 1024,
                },
                4,
                Some("1 more matching file was not read"),
            ),
            (
                Budget {
                    files: 5,
                    bytes: 1024,
                },
                5,
                None,
            ),
        ];
        for (budget, expected_read, expected_limit) in cases {
            let mut reader = Reader::matching(dir.path(), is_test_path).within(budget);
            let read = reader.by_ref().count();
            assert_eq!(read, expected_read, "{budget:?}");
            assert_eq!(reader.files_read(), expected_read, "{budget:?}");
            let limit = reader.limit();
            match expected_limit {
                Some(expected) => {
                    let limit = limit.unwrap_or_default();
                    assert!(limit.contains(expected), "{budget:?}: {limit}");
                    assert!(limit.contains("stopped reading at the limit"), "{limit}");
                }
                None => assert_eq!(limit, None, "{budget:?}"),
            }
        }
    }

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
