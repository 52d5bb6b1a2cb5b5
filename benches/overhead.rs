//! Figures for prpd's own time per iteration: what a run costs beyond its agents and the
//! project's commands. `cargo bench --bench overhead` (optionally `-- CASES ROUNDS`, default
//! `96 3`) runs the release binary (`prpd run`, as a user does) on a fixture whose agent and
//! test command each take about a millisecond, so prpd's share is what is left.
//!
//! The fixture: a repository whose test command is a POSIX shell script that prints one TAP line
//! per case of `tests/cases.txt` (a case passes when `src/<case>` exists), and a shell agent that
//! writes every case in RED, creates one case's file per GREEN iteration (each is measurable
//! progress, so no breaker opens), adds a line to the README and the changelog in DOCUMENT and
//! approves in QA. `CASES` cases make `CASES + 4` iterations (RED, GREEN `CASES` times,
//! REFACTOR, DOCUMENT, QA); SHIP pushes to a local bare repository.
//!
//! prpd reports its own time at the end of the session in its debug log (`driver/own_time.rs`):
//! the wall time, the time its agents and commands ran, and its own steps part by part. The
//! benchmark prints those per iteration (the median of the rounds), and times the agent and the
//! test command alone for comparison.

/// The fixture pieces this benchmark shares with the others, in `benches/fixture/`.
mod fixture {
    pub mod git;
    pub mod repo;
}

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fixture::git::git;
use fixture::repo::commit_files;

/// The test command: one TAP line per case, exit 1 while one fails.
const RUN_TESTS: &str = r#"#!/bin/sh
# One TAP line per case of tests/cases.txt: a case passes when src/<case> exists.
[ -f tests/cases.txt ] || { echo "1..0"; exit 0; }
n=0
fail=0
count=0
while read -r name; do count=$((count + 1)); done < tests/cases.txt
echo "1..$count"
while read -r name; do
  n=$((n + 1))
  if [ -f "src/$name" ]; then
    echo "ok $n - AC-1 $name"
  else
    echo "not ok $n - AC-1 $name"
    fail=1
  fi
done < tests/cases.txt
exit $fail
"#;

/// The agent of every phase (its first argument: how many cases).
const AGENT: &str = r#"#!/bin/sh
cases=$1
mkdir -p tests src
done=true
case "$PRPD_PHASE" in
RED)
  i=1
  : > tests/cases.txt
  while [ $i -le $cases ]; do echo "case$i" >> tests/cases.txt; i=$((i + 1)); done ;;
GREEN)
  i=1
  while [ $i -le $cases ]; do
    if [ ! -f "src/case$i" ]; then echo "$i" > "src/case$i"; break; fi
    i=$((i + 1))
  done
  [ $i -ge $cases ] || done=false ;;
DOCUMENT)
  echo "Each case of tests/cases.txt has its file under src/." >> README.md
  echo "- One file per case." >> CHANGELOG.md ;;
esac
status=COMPLETE
exit_signal=true
if [ $done = false ]; then status=IN_PROGRESS; exit_signal=false; fi
echo "---PRP_PHASE_STATUS---"
echo "PHASE: $PRPD_PHASE"
echo "STATUS: $status"
echo "ITERATION: $PRPD_ITERATION"
if [ "$PRPD_PHASE" = QA ]; then echo "VERDICT: APPROVE"; fi
echo "EXIT_SIGNAL: $exit_signal"
echo "RECOMMENDATION: continue"
echo "---END_PRP_PHASE_STATUS---"
"#;

const PRP: &str = "# Cases\n\n## Goal\n\nAdd one file under `src/` per case of `tests/cases.txt`.\n\n\
## Success Criteria\n\n- [ ] every case passes\n\n\
## Acceptance Criteria\n\n- AC-1: each case has its file under `src/`.\n";

#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark runs the real binary, and its agent and test command alone"
)]
fn command(program: &str) -> std::process::Command {
    std::process::Command::new(program)
}

/// The fixture in `dir`: `repo/` (committed, with `origin` a bare repository beside it) and
/// `agent.sh`.
fn fixture(dir: &Path, cases: u32) {
    let repo = dir.join("repo");
    let remote = dir.join("remote.git");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(dir, &["init", "-q", "--bare", "remote.git"]);
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, AGENT).expect("write the agent");
    let config = format!(
        "[commands]\ntest = \"sh run-tests.sh\"\n\n\
         [agents.default]\ncommand = [\"sh\", {:?}, \"{cases}\"]\n\n\
         [run]\nholdout = 0\n\n\
         [guardrails]\nmax_agent_invocations = {}\nmax_calls_per_hour = 100000\n",
        agent.display().to_string(),
        cases + 10,
    );
    commit_files(
        &repo,
        &[
            ("README.md", "# cases\n"),
            ("CHANGELOG.md", "# Changelog\n"),
            ("run-tests.sh", RUN_TESTS),
            ("prpd.toml", config.as_str()),
            ("PRPs/cases.md", PRP),
        ],
        "cases",
    );
    git(
        &repo,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
}

/// One run: its wall time seen from outside, and the figures of prpd's own-time line.
struct Round {
    wall: Duration,
    figures: BTreeMap<String, f64>,
}

fn run(cases: u32) -> Round {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path(), cases);
    let started = Instant::now();
    let output = command(env!("CARGO_BIN_EXE_prpd"))
        .args(["run", "PRPs/cases.md"])
        .current_dir(dir.path().join("repo"))
        .env("PRPD_LOG", "prpd=warn,prpd_run::driver::own_time=debug")
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("run prpd");
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("SHIPPED"),
        "the run did not ship:\n{stdout}\n{stderr}"
    );
    let line = stderr
        .lines()
        .find(|line| line.contains("prpd's own time"))
        .unwrap_or_else(|| panic!("no own-time line in the log:\n{stderr}"));
    Round {
        wall,
        figures: figures(line),
    }
}

/// The `name=number` fields of the own-time line, the parts (`parts_ms=snapshot=1.2,…`) by
/// their own names.
fn figures(line: &str) -> BTreeMap<String, f64> {
    let mut figures = BTreeMap::new();
    for field in line.split_whitespace() {
        let field = field.strip_prefix("parts_ms=").unwrap_or(field);
        for pair in field.split(',') {
            if let Some((name, value)) = pair.split_once('=')
                && let Ok(value) = value.parse::<f64>()
            {
                figures.insert(name.to_owned(), value);
            }
        }
    }
    figures
}

/// The median time of `program` with `args` in `dir`, over `times` runs.
fn alone(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)], times: u32) -> Duration {
    let mut took: Vec<Duration> = (0..times)
        .map(|_| {
            let started = Instant::now();
            command(program)
                .args(args)
                .envs(env.iter().copied())
                .current_dir(dir)
                .stdout(Stdio::null())
                .status()
                .expect("run");
            started.elapsed()
        })
        .collect();
    took.sort();
    took[took.len() / 2]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let cases: u32 = args.first().map_or(96, |arg| arg.parse().expect("CASES"));
    let rounds: usize = args.get(1).map_or(3, |arg| arg.parse().expect("ROUNDS"));

    let scratch = tempfile::tempdir().expect("tempdir");
    fixture(scratch.path(), cases);
    let repo = scratch.path().join("repo");
    let agent = scratch.path().join("agent.sh").display().to_string();
    let cases_arg = cases.to_string();
    let agent_alone = alone(
        &repo,
        "sh",
        &[&agent, &cases_arg],
        &[("PRPD_PHASE", "REFACTOR"), ("PRPD_ITERATION", "1")],
        50,
    );
    let tests_alone = alone(&repo, "sh", &["-c", "sh run-tests.sh"], &[], 50);
    println!(
        "alone: the agent {:.2} ms a call, the test command {:.2} ms a run (medians of 50)",
        agent_alone.as_secs_f64() * 1000.0,
        tests_alone.as_secs_f64() * 1000.0
    );

    let runs: Vec<Round> = (0..rounds)
        .map(|round| {
            let result = run(cases);
            println!(
                "round {}: {} iterations, {:.2} s wall",
                round + 1,
                result.figures.get("iterations").copied().unwrap_or(0.0),
                result.wall.as_secs_f64()
            );
            result
        })
        .collect();
    let per_iteration = |name: &str| {
        let mut values: Vec<f64> = runs
            .iter()
            .map(|run| run.figures.get(name).copied().unwrap_or(0.0) / run.figures["iterations"])
            .collect();
        median(&mut values)
    };
    let mut walls: Vec<f64> = runs
        .iter()
        .map(|run| run.wall.as_secs_f64() * 1000.0 / run.figures["iterations"])
        .collect();
    println!("\nper iteration, medians of {rounds} rounds (ms):");
    println!(
        "  the whole process, seen from outside  {:>8.2}",
        median(&mut walls)
    );
    println!(
        "  the driving session                   {:>8.2}",
        per_iteration("wall_ms")
    );
    println!(
        "  its agents and commands               {:>8.2}",
        per_iteration("processes_ms")
    );
    println!(
        "  prpd's own                            {:>8.2}   (target: at most 20)",
        per_iteration("own_ms")
    );
    for part in [
        "snapshot", "freeze", "record", "status", "memory", "sweep", "prompt",
    ] {
        println!("    {part:<36}{:>8.2}", per_iteration(part));
    }
    println!("    {:<36}{:>8.2}", "the rest", per_iteration("other_ms"));
}
