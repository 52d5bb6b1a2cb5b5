//! Figures for the file watcher alone, in process (`benches/watch.rs` measures the whole
//! daemon), on a generated repository: 50,000 kept files (500 directories of 100) beside
//! 20,000 ignored ones (`target/` and `node_modules/`, 1,100
//! directories). It prints how long the start takes (the walk and one watch per kept
//! directory), how many directories are watched, the process's resident memory before and
//! after, how long one write takes to come out as a batch with the default debounce (500 ms),
//! and what a burst of 1,000 writes and a new tree of 1,000 files give. Target: RSS under
//! 20 MB with the repository watched. Run with `cargo bench --bench watcher` (optionally
//! `-- 50000 10`: the number of kept files, and how many to a directory).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prpd_watch::files::FileWatcher;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const DEBOUNCE: Duration = Duration::from_millis(500);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A repository of `kept` files, `per_dir` to a directory, and 20,000 ignored ones.
fn generated_repo(kept: usize, per_dir: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    git2::Repository::init(&root).expect("git init");
    write(&root.join(".gitignore"), "target/\nnode_modules/\n");
    for index in 0..kept {
        write(
            &root.join(format!("src/d{}/f{index}.rs", index / per_dir)),
            "fn f() {}\n",
        );
    }
    for index in 0..10_000 {
        write(
            &root.join(format!("target/debug/u{}/o{index}.o", index / 100)),
            "o",
        );
        write(
            &root.join(format!("node_modules/p{}/lib/i{index}.js", index / 10)),
            "js",
        );
    }
    (dir, root)
}

/// A line of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with(field))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn mib(kib: u64) -> String {
    format!("{}.{} MiB", kib / 1024, kib % 1024 * 10 / 1024)
}

/// Every batch until none comes for two debounce windows: how many, and how many paths.
async fn drain(changes: &mut UnboundedReceiver<Vec<PathBuf>>) -> (usize, usize) {
    let mut batches = 0;
    let mut paths = 0;
    while let Ok(Some(batch)) = tokio::time::timeout(DEBOUNCE * 2, changes.recv()).await {
        batches += 1;
        paths += batch.len();
    }
    (batches, paths)
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let kept = numbers.first().copied().unwrap_or(50_000);
    let per_dir = numbers.get(1).copied().unwrap_or(100).max(1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let (_dir, root) = generated_repo(kept, per_dir);
    let before = status_kib("VmRSS:");
    let (sender, mut changes) = unbounded_channel();
    let started = Instant::now();
    let watcher = FileWatcher::start(&root, DEBOUNCE, sender).expect("start");
    let start_time = started.elapsed();
    let after = status_kib("VmRSS:");
    println!("{kept} kept files ({per_dir} to a directory), 20000 ignored");
    println!(
        "start (walk + watches)        {:>9.1} ms",
        start_time.as_secs_f64() * 1000.0
    );
    println!(
        "watched directories           {:>9}",
        watcher.watched_dirs()
    );
    println!("RSS before start              {:>9}", mib(before));
    println!("RSS with the repository watched {:>7}", mib(after));

    runtime.block_on(async {
        let written = Instant::now();
        write(&root.join("src/d0/f0.rs"), "fn changed() {}\n");
        let batch = changes.recv().await.expect("a batch");
        println!(
            "one write to its batch        {:>9.1} ms ({} path, debounce {} ms)",
            written.elapsed().as_secs_f64() * 1000.0,
            batch.len(),
            DEBOUNCE.as_millis()
        );

        for index in 0..1_000.min(kept) {
            write(
                &root.join(format!("src/d{}/f{index}.rs", index / per_dir)),
                "fn burst() {}\n",
            );
        }
        let (batches, paths) = drain(&mut changes).await;
        println!("burst of 1,000 writes         {batches:>9} batches, {paths} paths");

        for index in 0..1_000 {
            write(
                &root.join(format!("new/n{}/f{index}.rs", index / 10)),
                "fn new() {}\n",
            );
        }
        let (batches, paths) = drain(&mut changes).await;
        println!("new tree of 1,000 files       {batches:>9} batches, {paths} paths");
        println!(
            "watched directories after     {:>9}",
            watcher.watched_dirs()
        );
    });
    println!(
        "RSS at the end                {:>9}",
        mib(status_kib("VmRSS:"))
    );
    println!(
        "peak RSS                      {:>9}",
        mib(status_kib("VmHWM:"))
    );
}
