//! Figures for `prpd qa`: the wall time of four independent checks that each sleep one second,
//! run through the real binary with `--jobs 4` (target: under 1.2 s) and `--jobs 1` (about 4 s,
//! the sequential baseline). Run with `cargo bench --bench qa`.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod git;
}

use std::fmt::Write as _;
use std::path::Path;

use fixture::git::git;

fn main() {
    divan::main();
}

/// A git repository whose checklist is four blocking checks of `sleep 1`, with a test command
/// of one test.
fn sleepy_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q"]);
    let mut checklist = String::from("qa_checklist:\n  version: \"1.0.0\"\n  funcionalidade:\n");
    for index in 1..=4 {
        writeln!(
            checklist,
            "    - id: S{index}\n      criterio: sleeps one second\n      validacao: exit_code == 0\n      comando: sleep 1\n      blocking: true"
        )
        .expect("write to a String");
    }
    std::fs::write(dir.path().join("qa-checklist.yml"), checklist).expect("write checklist");
    // prpd refuses to approve a repository without tests: a test command that reports one
    // passing test (TAP) in a few milliseconds, so the four sleeps are what is measured.
    std::fs::write(
        dir.path().join("Makefile"),
        "test:\n\t@echo 1..1\n\t@echo ok 1 - the bench runs\n",
    )
    .expect("write Makefile");
    dir
}

#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark measures the real binary from outside, as a user runs it"
)]
fn run_qa(repo: &Path, jobs: usize) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_prpd"))
        .args(["qa", "--json", "--jobs", &jobs.to_string(), "--repo"])
        .arg(repo)
        .env("PRPD_LOG", "error")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run prpd");
    assert!(status.success(), "prpd qa failed: {status}");
}

#[divan::bench(args = [4, 1], sample_count = 3, sample_size = 1)]
fn qa_four_sleeping_checks(bencher: divan::Bencher, jobs: usize) {
    let repo = sleepy_repo();
    bencher.bench(|| run_qa(repo.path(), jobs));
}
