//! How long `prpd detect` takes on a large repository: a generated tree of 100,000 files,
//! most of them in `node_modules/`, `target/` and deep source folders, as in a real monorepo
//! after a build. Detection must not depend on the number of files (target: under 50 ms).
//!
//! Run with `cargo bench --bench detect`; it prints the generation time, a plain median over a
//! few runs, then divan's table for `discover::detect`.

use std::fs::{File, create_dir_all};
use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prpd_qa::discover::detect;
use prpd_qa::tools_mapping::ToolsMapping;
use tempfile::TempDir;

/// How many files the generated tree holds.
const FILES: usize = 100_000;

/// The tree, generated once per process.
static TREE: LazyLock<TempDir> = LazyLock::new(generate);

fn main() {
    let started = Instant::now();
    let repo = TREE.path();
    println!(
        "generated {FILES} files under {} in {:.1?}",
        repo.display(),
        started.elapsed()
    );
    let mapping = ToolsMapping::builtin();
    let mut runs: Vec<Duration> = (0..21)
        .map(|_| {
            let run = Instant::now();
            detect(repo, &mapping).expect("detect the generated tree");
            run.elapsed()
        })
        .collect();
    runs.sort();
    println!(
        "prpd detect on {FILES} files: median {:.2?} over {} runs (target: under 50 ms)",
        runs[runs.len() / 2],
        runs.len()
    );
    divan::main();
    // A static is never dropped, so the `TempDir` would leave 100,000 files behind.
    std::fs::remove_dir_all(repo).expect("remove the generated tree");
}

/// `discover::detect` on the generated tree, with the built-in mapping.
#[divan::bench(sample_count = 50)]
fn detect_100k_files(bencher: divan::Bencher<'_, '_>) {
    let repo = TREE.path();
    let mapping = ToolsMapping::builtin();
    bencher.bench(|| detect(divan::black_box(repo), &mapping).expect("detect"));
}

/// A repository with a root `package.json`, a Makefile with an include and a sub-make, a CI
/// workflow, three workspace packages, a Python service (a sub-project), and 100,000 files: 60% in `node_modules/`, 20% in `target/`, 20% in source folders four or more
/// levels deep.
fn generate() -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("prpd-bench-detect-")
        .tempdir()
        .expect("create temp dir");
    let root = dir.path();
    write(
        &root.join("package.json"),
        r#"{"scripts": {"test": "vitest run", "lint": "eslint ."}}"#,
    );
    write(&root.join("pnpm-lock.yaml"), "");
    write(
        &root.join("Makefile"),
        "include tools.mk\nPNPM ?= pnpm\nbuild:\n\t$(PNPM) -r build\ncheck: build\n\t$(MAKE) -C services/ml test\n",
    );
    write(&root.join("tools.mk"), "LINT = $(PNPM) exec eslint\n");
    write(
        &root.join(".github/workflows/ci.yml"),
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: CI=1 pnpm test\n      - run: pnpm exec tsc --noEmit\n",
    );
    for package in ["ui", "api-client", "docs"] {
        write(
            &root.join("packages").join(package).join("package.json"),
            "{}",
        );
    }
    write(
        &root.join("services/ml/pyproject.toml"),
        "[tool.pytest.ini_options]\n\n[tool.ruff]\nfix = true\n",
    );
    write(&root.join("services/ml/Makefile"), "test:\n\tpytest -q\n");
    let node_modules = FILES * 6 / 10;
    let target = FILES * 2 / 10;
    let deep = FILES - node_modules - target;
    fill(&root.join("node_modules"), node_modules, 60, "index.js");
    fill(&root.join("target/debug/deps"), target, 500, "lib.rlib");
    fill(
        &root.join("src/app/feature/deep/nested"),
        deep,
        200,
        "mod.ts",
    );
    dir
}

/// Creates `count` empty files under `base`, `per_dir` to a directory.
fn fill(base: &Path, count: usize, per_dir: usize, name: &str) {
    for directory_index in 0..count.div_ceil(per_dir) {
        let directory = base.join(format!("d{directory_index}"));
        create_dir_all(&directory).expect("mkdir");
        let files = per_dir.min(count - directory_index * per_dir);
        for file_index in 0..files {
            File::create(directory.join(format!("{file_index}-{name}"))).expect("create file");
        }
    }
}

fn write(path: &Path, contents: &str) {
    create_dir_all(path.parent().expect("file has a parent")).expect("mkdir");
    std::fs::write(path, contents).expect("write file");
}
