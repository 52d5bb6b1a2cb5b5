//! Figures for the per-iteration measurement cost: recording a git-native snapshot of generated
//! repositories of 1k, 100k and 300k files (first snapshot, an unchanged one, and one after 100
//! files changed), by the full scan and from the list of changed paths a watcher gives, then
//! the frozen-file comparison (listing the snapshot's blob ids, afresh and from the last
//! listing with the difference of the two trees), and a snapshot after a build wrote 10,000
//! files into the ignored `target/`. Target:
//! an unchanged 100k-file tree in under 100 ms, and a cost that grows with the changed files,
//! not all files. Prints peak RSS at the end. Run with `cargo bench --bench snapshot`
//! (optionally `-- 1000 100000` to pick sizes).

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod git;
}

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use prpd_run::snapshot::{Changes, Snapshot, Snapshots};

use fixture::git::git;

/// A committed repository of `count` small files, 100 to a directory.
fn generated_repo(count: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for index in 0..count {
        let folder = dir.path().join(format!("src/d{}", index / 100));
        if index % 100 == 0 {
            std::fs::create_dir_all(&folder).expect("mkdir");
        }
        std::fs::write(
            folder.join(format!("f{index}.py")),
            format!("value = {index}\n"),
        )
        .expect("write");
    }
    std::fs::write(dir.path().join(".gitignore"), "/.prp-session/\n/target/\n").expect("write");
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "base",
        ],
    );
    dir
}

fn timed<T>(label: &str, count: usize, work: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = work();
    println!(
        "{count:>7} files  {label:<34} {:>9.1} ms",
        start.elapsed().as_secs_f64() * 1000.0
    );
    value
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Times the snapshot after a build wrote 10,000 files into the ignored `target/` of `root`,
/// from the changed paths, on `last`.
fn after_a_build(root: &Path, snapshots: &Snapshots, last: &Snapshot, count: usize) {
    let mut built = BTreeSet::from([PathBuf::from("target")]);
    for index in 0..10_000 {
        let path = PathBuf::from(format!("target/d{}/f{index}.o", index / 100));
        if index % 100 == 0 {
            std::fs::create_dir_all(root.join(path.parent().expect("parent"))).expect("mkdir");
        }
        std::fs::write(root.join(&path), "object\n").expect("write");
        built.insert(path);
    }
    let after = timed("10,000 ignored files written", count, || {
        snapshots
            .record_changes(3, Some(last), "built", &Changes::Paths(built))
            .expect("record")
    });
    assert_eq!(after.tree, last.tree, "ignored files change nothing");
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 100_000, 300_000]
    } else {
        sizes
    };
    for count in sizes {
        let repo = generated_repo(count);
        let index = repo.path().join(".prp-session/snapshot.index");
        let snapshots = Snapshots::open(repo.path(), "bench", &index).expect("open");
        let first = timed("first snapshot", count, || {
            snapshots.record(0, None, "first").expect("record")
        });
        let unchanged = timed("unchanged snapshot", count, || {
            snapshots
                .record(1, Some(&first), "unchanged")
                .expect("record")
        });
        assert_eq!(first.tree, unchanged.tree);
        for index in 0..100.min(count) {
            let path = repo
                .path()
                .join(format!("src/d{}/f{index}.py", index / 100));
            std::fs::write(path, format!("value = {index} + 1\n")).expect("write");
        }
        let changed = timed("snapshot after 100 changed files", count, || {
            snapshots
                .record(2, Some(&unchanged), "changed")
                .expect("record")
        });
        timed("frozen-file comparison (blob ids)", count, || {
            snapshots.files(&changed).expect("files").len()
        });
        let by_paths = repo.path().join(".prp-session/paths.index");
        let by_paths = Snapshots::open(repo.path(), "paths", &by_paths).expect("open");
        let first = by_paths.record(0, None, "first").expect("record");
        let unchanged = timed("unchanged, from changed paths", count, || {
            by_paths
                .record_changes(
                    1,
                    Some(&first),
                    "unchanged",
                    &Changes::Paths(BTreeSet::new()),
                )
                .expect("record")
        });
        assert_eq!(first.tree, unchanged.tree);
        let mut paths = BTreeSet::new();
        for index in (count.saturating_sub(100))..count {
            let path = PathBuf::from(format!("src/d{}/f{index}.py", index / 100));
            std::fs::write(repo.path().join(&path), format!("value = {index} + 2\n"))
                .expect("write");
            paths.insert(path);
        }
        let known = by_paths.files(&unchanged).expect("files");
        let from_paths = timed("after 100 changed, from changed paths", count, || {
            by_paths
                .record_changes(2, Some(&unchanged), "changed", &Changes::Paths(paths))
                .expect("record")
        });
        let listed = timed("its files, from the last listing", count, || {
            by_paths
                .files_since(&known, &unchanged, &from_paths)
                .expect("files since")
        });
        assert_eq!(
            listed,
            by_paths.files(&from_paths).expect("files"),
            "the listing from the tree difference is the listing"
        );
        after_a_build(repo.path(), &by_paths, &from_paths, count);
        let scanned = snapshots
            .record(3, Some(&changed), "scanned")
            .expect("record");
        assert_eq!(
            from_paths.tree, scanned.tree,
            "both routes see the same tree"
        );
        by_paths.remove_snapshot_refs().expect("remove refs");
        snapshots.remove_snapshot_refs().expect("remove refs");
    }
    if let Some(peak) = peak_rss_kib() {
        println!("peak RSS {} MiB", peak / 1024);
    }
}
