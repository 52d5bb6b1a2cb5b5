//! The file watcher against the real kernel: inotify on repositories in temporary directories,
//! each test waiting for batches with a timeout rather than sleeping. Every test that expects
//! silence ends with a control write whose path must then come alone, so a watcher that
//! reported nothing at all would fail it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::time::timeout;

use super::*;

/// Short, so the tests are quick; long enough that a burst of writes made in one go falls in
/// one window.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// How long a batch may take to come: the debounce, a tick, and a loaded machine.
const PATIENCE: Duration = Duration::from_secs(10);

/// How long silence must last to count: several debounce windows.
const QUIET: Duration = Duration::from_millis(800);

/// A repository in a temporary directory, with its canonical root.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new(files: &[(&str, &str)]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        let repo = Repo { _dir: dir, root };
        for (file, text) in files {
            repo.write(file, text);
        }
        repo
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn paths(&self, relatives: &[&str]) -> Vec<PathBuf> {
        relatives
            .iter()
            .map(|relative| self.path(relative))
            .collect()
    }

    fn start(&self) -> (FileWatcher, UnboundedReceiver<Vec<PathBuf>>) {
        let (sender, receiver) = unbounded_channel();
        let watcher = FileWatcher::start(&self.root, DEBOUNCE, sender).unwrap();
        (watcher, receiver)
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "the test commits in its fixture repository with git directly, as a user would"
    )]
    fn git(&self, args: &[&str]) {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&self.root)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }
}

/// The next batch, failing the test when none comes in time.
async fn next_batch(changes: &mut UnboundedReceiver<Vec<PathBuf>>) -> Vec<PathBuf> {
    timeout(PATIENCE, changes.recv())
        .await
        .expect("a batch within the patience")
        .expect("the watcher still runs")
}

/// The paths of the batches that come until every expected path came and then none for the
/// quiet time (deduplicated, sorted), failing the test when the expected paths do not come in
/// time. A burst of writes that straddles the end of a debounce window comes in two batches,
/// which may name the same path (its creation in one, its last write in the other), so the
/// tests take a burst's batches together.
async fn settled_changes(
    changes: &mut UnboundedReceiver<Vec<PathBuf>>,
    expected: &[PathBuf],
) -> Vec<PathBuf> {
    let mut seen = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "batches kept coming for the whole patience: {seen:?}"
        );
        let covered = expected.iter().all(|path| seen.contains(path));
        let wait = if covered { QUIET } else { PATIENCE };
        match timeout(wait, changes.recv()).await {
            Ok(Some(batch)) => {
                let sorted = batch.windows(2).all(|pair| pair[0] < pair[1]);
                assert!(sorted, "a batch is sorted and deduplicated: {batch:?}");
                seen.extend(batch);
            }
            Ok(None) => panic!("the watcher stopped"),
            Err(_) if covered => return seen.into_iter().collect(),
            Err(elapsed) => panic!("expected {expected:?}, got {seen:?} ({elapsed})"),
        }
    }
}

/// Fails the test if a batch comes within the quiet time.
async fn assert_quiet(changes: &mut UnboundedReceiver<Vec<PathBuf>>) {
    if let Ok(batch) = timeout(QUIET, changes.recv()).await {
        panic!("expected no batch, got {batch:?}");
    }
}

#[tokio::test]
async fn several_writes_to_a_kept_file_make_one_batch() {
    let repo = Repo::new(&[("src/lib.rs", "fn a() {}\n")]);
    let (_watcher, mut changes) = repo.start();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.path("src/lib.rs"))
        .unwrap();
    for line in 0..5 {
        std::io::Write::write_all(&mut file, format!("// {line}\n").as_bytes()).unwrap();
    }
    drop(file);
    assert_eq!(next_batch(&mut changes).await, repo.paths(&["src/lib.rs"]));
    assert_quiet(&mut changes).await;
}

#[tokio::test]
async fn writes_under_ignored_directories_send_nothing_and_spend_no_watch() {
    let repo = Repo::new(&[
        (".gitignore", "target/\nnode_modules/\n"),
        ("src/lib.rs", ""),
        ("node_modules/left-pad/lib/index.js", ""),
        ("node_modules/left-pad/test/index.js", ""),
    ]);
    let (watcher, mut changes) = repo.start();
    assert_eq!(watcher.watched_dirs(), 2, "the root and src/");
    for index in 0..600 {
        repo.write(
            &format!("target/debug/deps/unit{}/out{index}.o", index % 7),
            "o",
        );
        repo.write(&format!("node_modules/left-pad/lib/f{index}.js"), "js");
    }
    repo.write("node_modules/new-package/index.js", "js");
    assert_quiet(&mut changes).await;
    assert_eq!(
        watcher.watched_dirs(),
        2,
        "no watch under target/ or node_modules/"
    );
    repo.write("src/lib.rs", "fn control() {}\n");
    let expected = repo.paths(&["src/lib.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn an_ignored_file_in_a_kept_directory_is_dropped_and_a_whitelisted_one_reported() {
    let repo = Repo::new(&[(".gitignore", "*.log\n!keep.log\n"), ("src/lib.rs", "")]);
    let (_watcher, mut changes) = repo.start();
    repo.write("debug.log", "noise");
    repo.write("src/debug.log", "noise");
    repo.write("keep.log", "kept");
    repo.write("src/keep.log", "kept");
    let expected = repo.paths(&["keep.log", "src/keep.log"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_git_commit_sends_nothing() {
    let repo = Repo::new(&[("src/lib.rs", "fn a() {}\n"), ("README.md", "# r\n")]);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "first"]);
    repo.write("src/lib.rs", "fn b() {}\n");
    let (_watcher, mut changes) = repo.start();
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "second"]);
    repo.git(&["status", "--short"]);
    repo.git(&["log", "--oneline"]);
    assert_quiet(&mut changes).await;
    repo.write("README.md", "# control\n");
    let expected = repo.paths(&["README.md"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn the_session_directory_is_never_watched_even_without_an_exclude_line() {
    let repo = Repo::new(&[("src/lib.rs", ""), (".prp-session/runs/r1/log", "")]);
    let exclude = std::fs::read_to_string(repo.path(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains("prp-session"));
    let (watcher, mut changes) = repo.start();
    assert_eq!(watcher.watched_dirs(), 2, "the root and src/");
    repo.write(".prp-session/runs/r1/log", "more");
    repo.write(".prp-session/runs/r2/status.json", "{}");
    repo.write(".prp-session/prpd.lock", "1");
    std::fs::remove_dir_all(repo.path(".prp-session")).unwrap();
    repo.write(".prp-session/runs/r3/log", "made again");
    assert_quiet(&mut changes).await;
    assert_eq!(watcher.watched_dirs(), 2);
    repo.write("src/lib.rs", "fn control() {}\n");
    let expected = repo.paths(&["src/lib.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn hidden_directories_are_the_projects_and_are_watched() {
    let repo = Repo::new(&[(".github/workflows/ci.yml", "on: push\n")]);
    let (watcher, mut changes) = repo.start();
    assert_eq!(
        watcher.watched_dirs(),
        3,
        "the root, .github/ and .github/workflows/"
    );
    repo.write(".github/workflows/ci.yml", "on: [push, pull_request]\n");
    let expected = repo.paths(&[".github/workflows/ci.yml"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_new_directory_tree_is_reported_and_then_watched() {
    let repo = Repo::new(&[("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    repo.write("new/deep/f.rs", "fn f() {}\n");
    let expected = repo.paths(&["new", "new/deep", "new/deep/f.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 4);
    repo.write("new/deep/g.rs", "fn g() {}\n");
    let expected = repo.paths(&["new/deep/g.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_new_directory_keeps_the_ignore_rules_inside_it() {
    let repo = Repo::new(&[(".gitignore", "*.log\n")]);
    let (watcher, mut changes) = repo.start();
    repo.write("pkg/.gitignore", "dist/\n");
    repo.write("pkg/dist/bundle.js", "");
    repo.write("pkg/run.log", "");
    repo.write("pkg/index.js", "");
    let expected = repo.paths(&["pkg", "pkg/.gitignore", "pkg/index.js"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(
        watcher.watched_dirs(),
        2,
        "the root and pkg/, not pkg/dist/"
    );
    repo.write("pkg/dist/bundle.js", "again");
    repo.write("pkg/index.js", "again");
    let expected = repo.paths(&["pkg/index.js"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_gitignore_that_stops_ignoring_a_directory_makes_its_writes_reported() {
    let repo = Repo::new(&[(".gitignore", "gen/\n"), ("gen/api.rs", "")]);
    let (watcher, mut changes) = repo.start();
    assert_eq!(watcher.watched_dirs(), 1);
    repo.write("gen/api.rs", "ignored still");
    repo.write(".gitignore", "# nothing ignored\n");
    let expected = repo.paths(&[".gitignore"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 2);
    repo.write("gen/api.rs", "kept now");
    let expected = repo.paths(&["gen/api.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_gitignore_that_starts_ignoring_a_directory_drops_its_watch() {
    let repo = Repo::new(&[("gen/api.rs", ""), ("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    assert_eq!(watcher.watched_dirs(), 3);
    repo.write(".gitignore", "gen/\n");
    let expected = repo.paths(&[".gitignore"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 2);
    repo.write("gen/api.rs", "ignored now");
    assert_quiet(&mut changes).await;
    repo.write("src/lib.rs", "fn control() {}\n");
    let expected = repo.paths(&["src/lib.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_removed_directory_loses_its_watches_and_a_new_one_of_the_same_name_gets_them() {
    let repo = Repo::new(&[("dist/js/app.js", ""), ("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    assert_eq!(watcher.watched_dirs(), 4);
    std::fs::remove_dir_all(repo.path("dist")).unwrap();
    let batch = settled_changes(&mut changes, &repo.paths(&["dist"])).await;
    assert!(
        batch.iter().all(|path| path.starts_with(repo.path("dist"))),
        "{batch:?}"
    );
    assert_eq!(watcher.watched_dirs(), 2);
    repo.write("dist/js/app.js", "rebuilt");
    let expected = repo.paths(&["dist", "dist/js", "dist/js/app.js"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 4);
}

#[tokio::test]
async fn a_directory_deleted_and_made_again_within_one_window_is_watched_anew() {
    let repo = Repo::new(&[("dist/app.js", ""), ("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    std::fs::remove_dir_all(repo.path("dist")).unwrap();
    repo.write("dist/app.js", "rebuilt");
    let expected = repo.paths(&["dist", "dist/app.js"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 3);
    repo.write("dist/app.js", "rebuilt again");
    let expected = repo.paths(&["dist/app.js"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_renamed_directory_is_reported_under_both_names_and_watched_under_the_new_one() {
    let repo = Repo::new(&[("old/mod.rs", ""), ("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    std::fs::rename(repo.path("old"), repo.path("new")).unwrap();
    let expected = repo.paths(&["new", "new/mod.rs", "old"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
    assert_eq!(watcher.watched_dirs(), 3);
    repo.write("new/mod.rs", "fn moved() {}\n");
    let expected = repo.paths(&["new/mod.rs"]);
    assert_eq!(settled_changes(&mut changes, &expected).await, expected);
}

#[tokio::test]
async fn a_dropped_watcher_sends_nothing_more_and_its_thread_ends() {
    let repo = Repo::new(&[("src/lib.rs", "")]);
    let (watcher, mut changes) = repo.start();
    repo.write("src/lib.rs", "written just before the drop");
    drop(watcher);
    while changes.try_recv().is_ok() {}
    repo.write("src/lib.rs", "written after the drop");
    let end = timeout(PATIENCE, changes.recv())
        .await
        .expect("the channel closes once the debouncer's thread has ended");
    assert_eq!(end, None, "no batch after the drop");
}

#[test]
fn a_repository_that_is_not_there_is_refused_with_its_path() {
    let (sender, _receiver) = unbounded_channel();
    let error = FileWatcher::start(Path::new("/nonexistent/prpd-repo"), DEBOUNCE, sender)
        .expect_err("no such directory");
    assert!(matches!(error, WatchError::Repository { .. }), "{error:?}");
    assert!(
        error.to_string().contains("/nonexistent/prpd-repo"),
        "{error}"
    );
}

#[test]
fn the_watch_limit_error_says_what_to_raise_and_how_many_were_wanted() {
    let refused = Refused {
        dir: PathBuf::from("/r/deep"),
        wanted: 9000,
        watched: 8190,
        error: notify::Error::new(notify::ErrorKind::MaxFilesWatch),
    };
    let message = start_error(Path::new("/r"), refused).to_string();
    assert!(message.contains("fs.inotify.max_user_watches"), "{message}");
    assert!(
        message.contains("after 8190 of the 9000 directories"),
        "{message}"
    );
    assert!(message.starts_with("failed to watch /r:"), "{message}");
}
