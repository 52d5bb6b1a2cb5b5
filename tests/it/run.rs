//! `prpd run`, `resume`, `status`, `abort` and `demo` end to end: the real binary drives real
//! agent scripts (`tests/it/agents/`) through the loop on small Node fixture repositories, and
//! the tests check what it decided from its own measurements: the summary, the exit code and the
//! artifacts under `.prp-session/`.
//!
//! Most tests use the `calc` fixture (a library that gains `multiply`) with
//! `agents/fixture-agent.mjs`, whose behaviour prpd.toml chooses per phase: honest, idle, liar,
//! cheating, malformed, hanging. The demo tests use the bundled demo and its scripted agent.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::TestRepo;

/// The agent script every `calc` fixture runs; its first argument is the behaviour.
pub(crate) const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/fixture-agent.mjs"
);

/// The upper bound for one prpd command; a run that takes longer is stuck.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(240);

pub(crate) const PRP: &str = "PRPs/multiply.md";

/// The PRP of the `calc` fixture; `extra_criteria` are added under the acceptance criteria.
pub(crate) fn prp(extra_criteria: &str) -> String {
    format!(
        "# Multiply numbers\n\n## Goal\n\nAdd `multiply(a, b)` to calc.\n\n\
         ## Success Criteria\n\n- [ ] `multiply` is exported from `src/calc.js`\n\
         - [ ] Every acceptance criterion has a test that names it\n\n\
         ## Tasks\n\n1. Write a failing test for each acceptance criterion.\n\
         2. Implement `multiply` in `src/calc.js`.\n\n\
         ## Acceptance Criteria\n\n\
         - AC-1: `multiply(a, b)` returns the product of `a` and `b`.\n{extra_criteria}"
    )
}

/// prpd.toml for the fixture agent: `behaviours` gives some phases (`red`, `green`, ...) another
/// behaviour than `honest`; `format` is `plain` or `claude`. A hanging agent gets a 2 s timeout.
pub(crate) fn prpd_toml(format: &str, behaviours: &[(&str, &str)], extra: &str) -> String {
    let mut toml = String::new();
    for phase in ["red", "green", "refactor", "document", "qa"] {
        let behaviour = behaviours
            .iter()
            .find(|(name, _)| *name == phase)
            .map_or("honest", |(_, behaviour)| *behaviour);
        let model = if phase == "qa" {
            "fixture-qa"
        } else {
            "fixture-green"
        };
        let timeout = if behaviour == "hang" { "2s" } else { "60s" };
        let _ = write!(
            toml,
            "[agents.{phase}]\ncommand = [\"node\", \"{AGENT}\", \"{behaviour}\", \"{format}\"]\n\
             model = \"{model}\"\nprompt = \"stdin\"\ntimeout = \"{timeout}\"\nenv = []\n\n"
        );
    }
    toml.push_str(extra);
    toml
}

/// prpd.toml that runs one scripted agent, `argv` (the inside of a TOML array of strings), in
/// every phase, the prompt on stdin, with `timeout`; QA's model differs from the others'.
pub(crate) fn every_phase_toml(argv: &str, timeout: &str) -> String {
    let mut toml = String::new();
    for phase in ["red", "green", "refactor", "document", "qa"] {
        let model = if phase == "qa" {
            "fixture-qa"
        } else {
            "fixture-green"
        };
        let _ = write!(
            toml,
            "[agents.{phase}]\ncommand = [{argv}]\nmodel = \"{model}\"\nprompt = \"stdin\"\n\
             timeout = \"{timeout}\"\nenv = []\n\n"
        );
    }
    toml
}

/// A committed `calc` repository: tests and lint pass, and the PRP asks for `multiply`, which
/// neither the code, the tests nor the documentation know yet.
pub(crate) fn calc_repo(prp_text: &str, config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{
  "name": "calc",
  "version": "1.0.0",
  "type": "module",
  "private": true,
  "scripts": {
    "test": "node --test",
    "lint": "node -e 0"
  }
}
"#,
    )
    .file(
        "README.md",
        "# calc\n\nSmall number helpers.\n\n- `add(a, b)`: the sum of two numbers.\n",
    )
    .file(
        "CHANGELOG.md",
        "# Changelog\n\n## [Unreleased]\n\n## [1.0.0]\n\n- `add`.\n",
    )
    .file(
        "docs/adr/0001-plain-javascript.md",
        "# 1. Plain JavaScript\n\nStatus: accepted\n\ncalc has no build step and no dependencies.\n",
    )
    .file(
        "src/calc.js",
        "/** The sum of two numbers. */\nexport function add(a, b) {\n  return a + b;\n}\n",
    )
    .file(
        "test/calc.test.js",
        "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
         import { add } from \"../src/calc.js\";\n\n\
         test(\"add sums two numbers\", () => {\n  assert.equal(add(2, 3), 5);\n});\n",
    )
    .file(PRP, prp_text)
    .file("prpd.toml", config)
    .commit("calc");
    repo
}

/// Runs prpd with `args` (which should include `--json`) in `dir`, and returns the exit code
/// and the parsed JSON output.
pub(crate) fn prpd_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(args)
        .current_dir(dir)
        .env("PRPD_LOG", "warn")
        .env_remove("GITHUB_TOKEN")
        .timeout(COMMAND_TIMEOUT)
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!(
            "prpd {args:?}: stdout is not JSON ({error}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let code = output.status.code().expect("prpd exited by itself");
    (code, value)
}

/// `prpd run PRPs/multiply.md --json`.
pub(crate) fn run(repo: &TestRepo) -> (i32, Value) {
    prpd_json(repo.path(), &["run", "--in-place", PRP, "--json"])
}

/// Runs prpd with `args`, expecting failure with `code`; returns stderr.
pub(crate) fn prpd_fails(repo: &TestRepo, args: &[&str], code: i32) -> String {
    let output = repo
        .prpd()
        .args(args)
        .timeout(COMMAND_TIMEOUT)
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(code),
        "prpd {args:?}\nstdout:\n{}\nstderr:\n{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

pub(crate) fn run_dir(repo: &Path, summary: &Value) -> PathBuf {
    repo.join(".prp-session/runs")
        .join(summary["run_id"].as_str().expect("run_id"))
}

/// The iteration directories of a run, in order, with their names (`003-green-2`).
fn iterations(repo: &Path, summary: &Value) -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<(String, PathBuf)> =
        std::fs::read_dir(run_dir(repo, summary).join("iterations"))
            .expect("iterations directory")
            .map(|entry| {
                let entry = entry.expect("dir entry");
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                )
            })
            .collect();
    dirs.sort();
    dirs
}

/// The `measured.json` of every iteration of `phase` (`green`), in order.
pub(crate) fn measured(repo: &Path, summary: &Value, phase: &str) -> Vec<Value> {
    iterations(repo, summary)
        .into_iter()
        .filter(|(name, _)| name.split('-').nth(1) == Some(phase))
        .map(|(_, dir)| json_file(&dir.join("measured.json")))
        .collect()
}

fn json_file(path: &Path) -> Value {
    let text = read(path);
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{} is not JSON ({error}):\n{text}", path.display()))
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

/// The calls the fixture agent recorded, in order.
pub(crate) fn agent_calls(repo: &Path, summary: &Value) -> Vec<Value> {
    read(&run_dir(repo, summary).join("agent-calls.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).expect("agent call is JSON"))
        .collect()
}

/// `[(attempt, verdict)]` of a summary.
pub(crate) fn verdicts(summary: &Value) -> Vec<(u64, String)> {
    summary["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|verdict| {
            (
                verdict["attempt"].as_u64().expect("attempt"),
                verdict["verdict"].as_str().expect("verdict").to_owned(),
            )
        })
        .collect()
}

pub(crate) fn iterations_in(summary: &Value, phase: &str) -> u64 {
    summary["iterations_per_phase"][phase].as_u64().unwrap_or(0)
}

/// Whether `pid` is a live process (a zombie is dead: it only waits to be reaped).
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with('Z')
    })
}

/// Kills `pid` if it still lives: cleanup of a process a failing prpd left behind, so a failed
/// assertion does not leave it running for minutes.
pub(crate) fn kill_leftover(pid: i32) {
    if alive(pid) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A new repository holding the bundled demo project, its scripted agent in `.prpd/agents/`
/// and its prpd.toml followed by `extra_config`, like `prpd demo` builds it.
pub(crate) fn demo_repo(extra_config: &str) -> TestRepo {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = TestRepo::new();
    copy_dir(&root.join("examples/demo"), repo.path());
    repo.file(
        ".prpd/agents/scripted-agent.mjs",
        &read(&root.join("examples/agents/scripted-agent.mjs")),
    );
    let config = read(&root.join("examples/agents/prpd.toml"));
    repo.file("prpd.toml", &format!("{config}\n{extra_config}"));
    repo.commit("demo project");
    repo
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read example dir") {
        let entry = entry.expect("dir entry");
        if entry.file_name() == ".prp-session" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The text of `object` (`branch:path`) in the repository at `dir`.
#[expect(
    clippy::disallowed_methods,
    reason = "the test reads the shipped branch with the real git, as a user would"
)]
fn git_show(dir: &Path, object: &str) -> String {
    let output = std::process::Command::new("git")
        .args(["show", object])
        .current_dir(dir)
        .output()
        .expect("git show");
    assert!(output.status.success(), "git show {object}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `prpd demo --dir <new dir> --json`: the temporary directory that holds the demo's
/// repository, the repository, the exit code and the summary.
fn demo() -> (tempfile::TempDir, PathBuf, i32, Value) {
    let parent = tempfile::tempdir().expect("tempdir");
    let (code, summary) = prpd_json(parent.path(), &["demo", "--json", "--dir", "demo"]);
    let dir = parent.path().join("demo").canonicalize().expect("demo dir");
    (parent, dir, code, summary)
}

#[test]
fn demo_ships_after_one_reject_then_approve() {
    let (_parent, dir, code, summary) = demo();
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&summary),
        [(1, "REJECT".to_owned()), (2, "APPROVE".to_owned())],
        "{summary:#}"
    );
    let reject = &summary["verdicts"][0];
    assert!(
        reject["blocking"].to_string().contains("AC-2"),
        "the REJECT names the missing AC-2 test: {reject:#}"
    );
    assert!(summary["guardrail"].is_null());
    assert!(summary["escalation_report"].is_null());
    assert_eq!(
        summary["agent_invocations"], summary["iterations"],
        "{summary:#}"
    );

    // The feature is on the shipped branch, tested; the demo's working tree is as it was, and
    // the run's worktree went with the run.
    let branch = summary["ship"]["branch"].as_str().expect("a branch");
    let shipped = |path: &str| git_show(&dir, &format!("{branch}:{path}"));
    assert!(shipped("src/textkit.js").contains("export function wordStats"));
    assert!(shipped("test/word-stats.test.js").contains("AC-1"));
    assert!(shipped("test/word-stats-ac2.test.js").contains("AC-2"));
    assert!(!read(&dir.join("src/textkit.js")).contains("wordStats"));
    assert!(
        !dir.join(".git/prpd/worktrees")
            .read_dir()
            .is_ok_and(|mut entries| entries.next().is_some())
    );

    // The artifacts of the run.
    let run = run_dir(&dir, &summary);
    let progress = read(&run.join("progress.md"));
    assert_eq!(
        progress
            .matches("### V4 [VERIFY] Full local CI: VERIFICATION_PASS")
            .count(),
        2,
        "the PRP's [VERIFY] task ran at both QAs: {progress}"
    );
    let pr = read(&run.join("pr.md"));
    assert!(pr.starts_with("# feat: Word statistics"), "{pr}");
    assert_eq!(json_file(&run.join("summary.json")), summary);
    let state = json_file(&run.join("state.json"));
    assert_eq!(state["run_id"], summary["run_id"]);
    let qa_state = json_file(&run.join("qa-state.json"));
    assert_eq!(qa_state["last_verdict"], "APPROVE", "{qa_state:#}");
    let breakers = json_file(&run.join("circuit-breaker.json"));
    assert_eq!(breakers["run_id"], summary["run_id"]);
    let log = read(&run.join("phase-status.log"));
    assert!(log.contains("VERDICT: REJECT"), "{log}");
    assert!(log.contains("VERDICT: APPROVE"), "{log}");
    let dirs = iterations(&dir, &summary);
    assert_eq!(
        dirs.len() as u64,
        summary["iterations"].as_u64().expect("iterations")
    );
    for (name, iteration) in &dirs {
        for file in [
            "prompt.md",
            "output.log",
            "status-block.txt",
            "measured.json",
        ] {
            assert!(iteration.join(file).is_file(), "{name} has no {file}");
        }
    }
    assert!(dirs[0].0.ends_with("-red-1"), "{dirs:?}");

    // Memory: the REJECT was recorded, the retry's GREEN prompt recalled it, and the last QA
    // report's Memory Context found it with real counts.
    let (retry, _) = dirs
        .iter()
        .rev()
        .find(|(name, _)| name.contains("-green-"))
        .map(|(name, path)| (read(&path.join("prompt.md")), name))
        .expect("a GREEN iteration after the REJECT");
    assert!(
        retry.contains("Recalled from memory: a similar REJECT earlier in this run: QA REJECT (attempt 1) of Word statistics"),
        "{retry}"
    );
    let last_qa = read(&dirs.last().expect("iterations").1.join("qa-report.md"));
    assert!(
        last_qa.contains("Asked the embedded store")
            && last_qa.contains("| Historical Bugs | 1 | QA REJECT (attempt 1) of Word statistics"),
        "{last_qa}"
    );
    assert!(log.contains("QUERIES_EXECUTED: 4"), "{log}");
    assert!(log.contains("HISTORICAL_BUGS_FOUND: 1"), "{log}");

    // The timeline beside the last QA report: QA's REJECT, GREEN visited again, the APPROVE.
    crate::receipts::assert_reject_then_approve(&dirs.last().expect("iterations").1);

    // `prpd status` reports the finished run.
    let (code, status) = prpd_json(&dir, &["status", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(status["run_id"], summary["run_id"]);
    assert_eq!(status["state"], "SHIPPED");
    assert_eq!(status["verdicts"], summary["verdicts"]);
    assert_eq!(status["driving"]["state"], "finished", "{status:#}");
    assert_eq!(status["prp"], "PRPs/word-stats.md");
    assert_eq!(status["last_verdict"]["verdict"], "APPROVE", "{status:#}");
    assert_eq!(
        Path::new(status["pull_request"].as_str().expect("pr.md")),
        run.join("pr.md")
    );
    let qa_report = Path::new(status["qa_report"].as_str().expect("a QA report"));
    assert!(qa_report.is_file(), "{status:#}");
}

#[test]
fn agents_run_in_the_repo_root_with_the_prompt_and_the_prpd_environment() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(verdicts(&summary), [(1, "APPROVE".to_owned())]);
    for phase in ["RED", "GREEN", "REFACTOR", "DOCUMENT", "QA"] {
        assert_eq!(iterations_in(&summary, phase), 1, "{summary:#}");
    }
    assert!(read(&repo.join("src/calc.js")).contains("export function multiply"));

    let root = repo.path().canonicalize().expect("repo root");
    let calls = agent_calls(repo.path(), &summary);
    let phases: Vec<&str> = calls
        .iter()
        .map(|call| call["phase"].as_str().expect("phase"))
        .collect();
    assert_eq!(phases, ["RED", "GREEN", "REFACTOR", "DOCUMENT", "QA"]);
    for call in &calls {
        assert_eq!(Path::new(call["cwd"].as_str().expect("cwd")), root);
        assert!(call["prompt_bytes"].as_u64().expect("prompt") > 0, "{call}");
        assert_eq!(call["iteration"], 1);
        assert_eq!(call["attempt"], 1);
        assert_eq!(call["run_id"], summary["run_id"]);
        assert_eq!(
            Path::new(call["prp"].as_str().expect("PRPD_PRP")),
            root.join(PRP)
        );
        assert!(call["feedback_text"].is_string(), "feedback file: {call}");
    }
    let qa = &calls[4];
    let report = Path::new(qa["qa_report"].as_str().expect("PRPD_QA_REPORT in QA"));
    assert!(read(report).contains("APPROVED"), "{}", report.display());
    assert!(calls[..4].iter().all(|call| call["qa_report"].is_null()));
}

#[test]
fn three_rejects_escalate_with_a_report_and_a_human_resume_starts_a_new_attempt() {
    // AC-2 is never tested by the agents: QA's criteria coverage check rejects every time.
    let repo = calc_repo(
        &prp("- AC-2: `multiply` of any number and zero is zero.\n"),
        &prpd_toml("plain", &[], ""),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "QA");
    let reject = "REJECT".to_owned();
    assert_eq!(
        verdicts(&summary),
        [
            (1, reject.clone()),
            (2, reject.clone()),
            (3, reject.clone())
        ]
    );
    for verdict in summary["verdicts"].as_array().expect("verdicts") {
        let blocking = verdict["blocking"].to_string();
        assert!(
            blocking.contains("F2") && blocking.contains("AC-2"),
            "{verdict:#}"
        );
    }
    assert_eq!(iterations_in(&summary, "QA"), 3);
    assert_eq!(iterations_in(&summary, "GREEN"), 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("QA rejected the work 3 times"), "{reason}");

    // The agents saw the attempt counter, and GREEN got the QA blockers as feedback.
    let calls = agent_calls(repo.path(), &summary);
    let attempts = |phase: &str| -> Vec<u64> {
        calls
            .iter()
            .filter(|call| call["phase"] == phase)
            .map(|call| call["attempt"].as_u64().expect("attempt"))
            .collect()
    };
    assert_eq!(attempts("GREEN"), [1, 2, 3]);
    assert_eq!(attempts("QA"), [1, 2, 3]);
    let second_green = calls
        .iter()
        .filter(|call| call["phase"] == "GREEN")
        .nth(1)
        .expect("a second GREEN call");
    let feedback = second_green["feedback_text"].as_str().expect("feedback");
    assert!(
        feedback.contains("AC-2") && feedback.contains("QA report"),
        "{feedback}"
    );

    let report_path = PathBuf::from(summary["escalation_report"].as_str().expect("report"));
    assert_eq!(
        report_path,
        run_dir(repo.path(), &summary).join("escalation.md")
    );
    let report = read(&report_path);
    let run_id = summary["run_id"].as_str().expect("run_id");
    for expected in [
        "QA rejected the work 3 times",
        "Attempt 1: **Reject**",
        "Attempt 2: **Reject**",
        "Attempt 3: **Reject**",
        "not covered: AC-2",
        "## Circuit breakers",
        "## Last status blocks",
        &format!("prpd resume {run_id}"),
        &format!("prpd abort {run_id}"),
    ] {
        assert!(report.contains(expected), "no {expected:?} in:\n{report}");
    }
    let qa_state = json_file(&crate::util::run_file(&repo.join(""), "qa-state.json"));
    assert_eq!(qa_state["attempt"], 3);
    assert_eq!(qa_state["last_verdict"], "REJECT");

    // A human adds the missing test and resumes: GREEN again, with a fresh attempt counter.
    repo.file(
        "test/multiply-zero.test.js",
        "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
         import { multiply } from \"../src/calc.js\";\n\n\
         test(\"AC-2: multiply by zero is zero\", () => {\n  assert.equal(multiply(7, 0), 0);\n});\n",
    );
    let (code, resumed) = prpd_json(repo.path(), &["resume", "--json"]);
    assert_eq!(resumed["state"], "SHIPPED", "{resumed:#}");
    assert_eq!(code, 0);
    assert_eq!(resumed["run_id"], summary["run_id"]);
    assert_eq!(
        verdicts(&resumed),
        [
            (1, reject.clone()),
            (2, reject.clone()),
            (3, reject),
            (1, "APPROVE".to_owned())
        ]
    );
    let calls = agent_calls(repo.path(), &resumed);
    let last_green = calls
        .iter()
        .rfind(|call| call["phase"] == "GREEN")
        .expect("GREEN after resume");
    assert_eq!(last_green["attempt"], 1, "{last_green}");
}

#[test]
fn green_agent_without_progress_opens_the_breaker_and_escalates() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", "idle")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN");
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("the GREEN breaker opened"), "{reason}");
    assert_eq!(summary["breakers"]["GREEN"]["state"], "OPEN");
    assert_eq!(iterations_in(&summary, "REFACTOR"), 0);
    // Thresholds of GREEN: 2 iterations without progress or 3 on the same error.
    let green = iterations_in(&summary, "GREEN");
    assert!((2..=4).contains(&green), "{summary:#}");
    for measured in measured(repo.path(), &summary, "green") {
        assert_ne!(measured["class"], "Progress", "{measured:#}");
        assert_eq!(measured["can_exit"], false);
    }

    let breakers = json_file(&crate::util::run_file(
        &repo.join(""),
        "circuit-breaker.json",
    ));
    assert_eq!(breakers["run_id"], summary["run_id"]);
    let history = breakers["breakers"]["GREEN"]["history"]
        .as_array()
        .expect("GREEN history");
    let last = history.last().expect("a transition");
    assert_eq!(last["to"], "OPEN", "{breakers:#}");
    assert!(last["reason"]["TRIPPED"]["phase"] == "GREEN", "{last:#}");
    assert!(
        history.iter().all(|transition| transition["at"].is_u64()),
        "{history:#?}"
    );
    let report = read(&run_dir(repo.path(), &summary).join("escalation.md"));
    assert!(report.contains("the GREEN breaker opened"), "{report}");
    assert!(report.contains("→ OPEN"), "{report}");
    assert!(report.contains("timeline.svg"), "{report}");

    // The breaker opened after a failed gate: the receipt and the timeline both say so.
    let lines = summary["receipt"]["lines"].as_array().expect("receipt");
    let last = lines.last().expect("a receipt line");
    assert_eq!(last["verdict"], "again", "{last:#}");
    assert_eq!(last["stop"]["by"], "breaker", "{last:#}");
    let timeline = crate::receipts::timeline(&run_dir(repo.path(), &summary));
    assert_eq!(timeline.visits, ["RED 1", "GREEN 1"]);
    assert_eq!(
        timeline.bars.last().map(String::as_str),
        Some("breaker GREEN")
    );
}

/// Runs GREEN with a cheating agent and checks that prpd never accepts its green.
fn assert_cheating_green_is_refused(behaviour: &str, how: &str) {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", behaviour)], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN");
    assert_eq!(iterations_in(&summary, "REFACTOR"), 0, "{summary:#}");
    assert!(summary["verdicts"].as_array().expect("verdicts").is_empty());
    let expected = format!("`test/multiply.test.js` was {how}: it is part of the test harness");
    let green = measured(repo.path(), &summary, "green");
    assert!(!green.is_empty());
    for measured in &green {
        assert_eq!(measured["can_exit"], false, "{measured:#}");
        assert!(
            measured["gate_1"].to_string().contains(&expected),
            "{measured:#}"
        );
        assert_eq!(
            measured["frozen_changes_refused"][0]["path"], "test/multiply.test.js",
            "{measured:#}"
        );
        // prpd restored RED's test before it measured: it still fails, as it must.
        assert_eq!(
            measured["observation"]["tests"]["failing"], 1,
            "{measured:#}"
        );
        assert!(measured["gate_2"].is_null(), "the agent claimed done");
    }
    assert!(
        read(&repo.join("test/multiply.test.js")).contains("calc.multiply(6, 7), 42"),
        "RED's test is back as RED wrote it"
    );
    let feedback = read(&run_dir(repo.path(), &summary).join("feedback.md"));
    assert!(feedback.contains(&expected), "{feedback}");
    let calls = agent_calls(repo.path(), &summary);
    let second_green = calls
        .iter()
        .filter(|call| call["phase"] == "GREEN")
        .nth(1)
        .expect("a second GREEN call");
    assert!(
        second_green["feedback_text"]
            .as_str()
            .is_some_and(|text| text.contains(&expected)),
        "{second_green}"
    );
    let log = read(&crate::util::run_file(&repo.join(""), "phase-status.log"));
    assert!(log.contains(&expected), "{log}");
}

#[test]
fn cheating_green_agent_that_deletes_the_red_tests_is_refused() {
    assert_cheating_green_is_refused("cheat-delete", "deleted");
}

#[test]
fn cheating_green_agent_that_weakens_the_red_tests_is_refused() {
    assert_cheating_green_is_refused("cheat-weaken", "changed");
}

#[test]
fn exit_signal_while_tests_fail_is_not_accepted() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", "liar")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN");
    assert_eq!(iterations_in(&summary, "REFACTOR"), 0, "{summary:#}");
    let green = measured(repo.path(), &summary, "green");
    assert!(!green.is_empty());
    for measured in &green {
        assert!(measured["gate_2"].is_null(), "gate 2 held: {measured:#}");
        assert_eq!(measured["can_exit"], false, "{measured:#}");
        assert!(
            measured["gate_1"].to_string().contains("failing test"),
            "{measured:#}"
        );
        assert_eq!(
            measured["observation"]["tests"]["failing"], 1,
            "{measured:#}"
        );
    }
    // The log holds the agent's claim next to prpd's own iteration blocks, which refuse it.
    let log = read(&crate::util::run_file(&repo.join(""), "phase-status.log"));
    assert!(log.contains("RECOMMENDATION: liar agent"), "{log}");
    let green_blocks: Vec<&str> = log
        .split_inclusive("---END_PRP_PHASE_STATUS---")
        .filter(|block| block.contains("PHASE: GREEN") && block.contains("DUAL_GATE:"))
        .collect();
    assert!(!green_blocks.is_empty(), "{log}");
    for block in green_blocks {
        assert!(block.contains("CAN_EXIT: false"), "{block}");
    }
}

#[test]
fn status_block_inside_claude_json_is_read_with_usage_and_cost() {
    let repo = calc_repo(&prp(""), &prpd_toml("claude", &[], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let invocations = summary["agent_invocations"].as_u64().expect("invocations");
    assert_eq!(invocations, 5, "{summary:#}");
    assert_eq!(summary["tokens"], 15 * invocations, "{summary:#}");
    let cost = summary["cost_usd"].as_f64().expect("cost");
    assert!((cost - 0.05).abs() < 1e-9, "{summary:#}");
    for (name, dir) in iterations(repo.path(), &summary) {
        let block = read(&dir.join("status-block.txt"));
        assert!(block.contains("EXIT_SIGNAL: true"), "{name}: {block}");
        assert!(read(&dir.join("output.log")).contains("\"type\":\"result\""));
        assert_eq!(json_file(&dir.join("measured.json"))["agent_end"], "Ok");
    }
}

#[test]
fn output_without_a_status_block_is_counted_as_malformed() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("red", "malformed")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "RED");
    assert_eq!(iterations_in(&summary, "GREEN"), 0, "{summary:#}");
    // RED's threshold: 3 iterations without progress, malformed ones included.
    assert_eq!(iterations_in(&summary, "RED"), 3, "{summary:#}");
    assert_eq!(summary["breakers"]["RED"]["state"], "OPEN");
    assert_eq!(summary["breakers"]["RED"]["no_progress"], 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("the RED breaker opened"), "{reason}");
    for (name, dir) in iterations(repo.path(), &summary) {
        let measured = json_file(&dir.join("measured.json"));
        assert_eq!(measured["agent_end"], "Malformed", "{name}: {measured:#}");
        assert_eq!(measured["class"], "Malformed", "{name}");
        // The failing test is there (gate 1 holds); without a block the phase does not end.
        assert!(measured["gate_1"].is_null(), "{name}: {measured:#}");
        assert_eq!(measured["can_exit"], false, "{name}");
        assert!(!dir.join("status-block.txt").exists(), "{name}");
    }
}

#[test]
fn hanging_agent_is_stopped_at_its_timeout_with_its_children() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", "hang")], ""));
    let started = Instant::now();
    let (code, summary) = run(&repo);
    let elapsed = started.elapsed();
    let pids: Vec<i32> = std::fs::read_to_string(run_dir(repo.path(), &summary).join("hang-pids"))
        .unwrap_or_default()
        .lines()
        .map(|pid| pid.parse().expect("pid"))
        .collect();
    let left: Vec<i32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
    left.iter().copied().for_each(kill_leftover);
    assert!(left.is_empty(), "processes left behind: {left:?}");

    // Two timeouts are GREEN's no-progress threshold.
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN");
    assert_eq!(iterations_in(&summary, "GREEN"), 2, "{summary:#}");
    assert_eq!(pids.len(), 4, "agent and child pid of both iterations");
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("the GREEN breaker opened"), "{reason}");
    for measured in measured(repo.path(), &summary, "green") {
        assert_eq!(measured["agent_end"], "TimedOut", "{measured:#}");
        assert_eq!(measured["class"], "Timeout");
        assert!(
            measured["agent_note"]
                .as_str()
                .is_some_and(|note| note.contains("timeout of 2s")),
            "{measured:#}"
        );
    }
    assert!(
        elapsed < Duration::from_secs(90),
        "the run took {elapsed:?}: the timeout did not stop the agent"
    );
}

/// `prpd status` while prpd (`pid`) runs GREEN's first iteration: running, with its pid.
fn assert_status_while_green_runs(repo: &Path, pid: u32) {
    let (_, status) = prpd_json(repo, &["status", "--json"]);
    assert_eq!(status["driving"]["state"], "running", "{status:#}");
    assert_eq!(status["driving"]["pid"], pid.to_string(), "{status:#}");
    assert_eq!(status["next_iteration"]["phase"], "GREEN", "{status:#}");
    assert_eq!(status["next_iteration"]["iteration"], 1, "{status:#}");
}

/// `prpd status` after the prpd running GREEN's first iteration was killed: interrupted, and
/// that iteration runs again on resume.
fn assert_status_after_green_was_killed(repo: &TestRepo) {
    let (_, status) = prpd_json(repo.path(), &["status", "--json"]);
    assert_eq!(status["state"], "GREEN", "{status:#}");
    assert_eq!(status["driving"]["state"], "interrupted", "{status:#}");
    assert_eq!(status["phase_iterations"], 0, "{status:#}");
    assert_eq!(status["next_iteration"]["iteration"], 1, "{status:#}");
    let text = repo.prpd().arg("status").output().expect("run prpd status");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("GREEN, interrupted: no prpd is driving it") && text.contains("prpd resume"),
        "{text}"
    );
    assert!(
        text.contains("Phase:        GREEN, iteration 1 next"),
        "{text}"
    );
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test must SIGKILL prpd mid-iteration, which needs the std child handle"
)]
fn kill_9_mid_iteration_then_resume_ends_like_an_uninterrupted_run() {
    let (_parent, _dir, code, uninterrupted) = demo();
    assert_eq!(uninterrupted["state"], "SHIPPED", "{uninterrupted:#}");
    assert_eq!(code, 0);

    let pause = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/agents/pause-once.mjs"
    );
    let repo = demo_repo(&format!(
        "[agents.green]\ncommand = [\"node\", \"{pause}\"]\n"
    ));
    let mut prpd = std::process::Command::new(assert_cmd::cargo::cargo_bin("prpd"))
        .args(["run", "--in-place", "PRPs/word-stats.md", "--json"])
        .current_dir(repo.path())
        .env("PRPD_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start prpd run");
    let runs = repo.join(".prp-session/runs");
    let deadline = Instant::now() + Duration::from_secs(120);
    let marker = loop {
        let found = std::fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("paused"))
            .find(|path| path.is_file());
        if let Some(marker) = found
            && read(&marker).lines().count() == 2
        {
            break marker;
        }
        if let Some(status) = prpd.try_wait().expect("poll prpd") {
            panic!("prpd ended ({status}) before GREEN paused");
        }
        assert!(Instant::now() < deadline, "GREEN never paused");
        std::thread::sleep(Duration::from_millis(100));
    };
    let pids: Vec<i32> = read(&marker)
        .lines()
        .map(|line| line.trim().parse().expect("pid"))
        .collect();
    let (escaped, paused_agent) = (pids[0], pids[1]);
    assert_status_while_green_runs(repo.path(), prpd.id());
    prpd.kill().expect("SIGKILL prpd");
    prpd.wait().expect("reap prpd");
    assert!(
        alive(paused_agent) && alive(escaped),
        "the paused agent and the process it set loose outlive the killed prpd"
    );

    assert_status_after_green_was_killed(&repo);

    let (code, resumed) = prpd_json(repo.path(), &["resume", "--json"]);
    let orphan_alive = alive(paused_agent);
    let escaped_alive = alive(escaped);
    kill_leftover(paused_agent);
    kill_leftover(escaped);
    assert_eq!(resumed["state"], "SHIPPED", "{resumed:#}");
    assert_eq!(code, 0);
    assert!(
        !orphan_alive,
        "the agent of the killed prpd (pid {paused_agent}) is still running"
    );
    assert!(
        !escaped_alive,
        "the setsid process the agent of the killed prpd started (pid {escaped}) is still running"
    );
    assert_eq!(verdicts(&resumed), verdicts(&uninterrupted));
    let blocking = |summary: &Value| -> Vec<Value> {
        summary["verdicts"]
            .as_array()
            .expect("verdicts")
            .iter()
            .map(|verdict| verdict["blocking"].clone())
            .collect()
    };
    assert_eq!(blocking(&resumed), blocking(&uninterrupted));
    assert_eq!(
        resumed["iterations_per_phase"],
        uninterrupted["iterations_per_phase"]
    );
    assert_eq!(resumed["iterations"], uninterrupted["iterations"]);
    assert!(read(&repo.join("src/textkit.js")).contains("export function wordStats"));
}

#[test]
fn guardrail_escalates_naming_it_and_blocks_new_runs_until_abort() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[], "[guardrails]\nmax_agent_invocations = 2\n"),
    );
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["agent_invocations"], 2);
    let guardrail = summary["guardrail"].as_str().expect("guardrail named");
    assert!(
        guardrail.starts_with("max_agent_invocations = 2"),
        "{guardrail}"
    );
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("max_agent_invocations"), "{reason}");
    let run = run_dir(repo.path(), &summary);
    let report = read(&run.join("escalation.md"));
    assert!(
        report.contains("Guardrail reached: `max_agent_invocations = 2"),
        "{report}"
    );
    let saved = json_file(&run.join("summary.json"));
    assert_eq!(saved["guardrail"], summary["guardrail"]);

    // `prpd status` shows the escalated run.
    let (code, status) = prpd_json(repo.path(), &["status", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(status["state"], "ESCALATED");
    assert_eq!(status["run_id"], summary["run_id"]);
    assert_eq!(status["driving"]["state"], "waits_for_human", "{status:#}");
    let text = repo.prpd().arg("status").output().expect("run prpd status");
    let text = String::from_utf8_lossy(&text.stdout);
    for expected in [
        format!("Run:          {}", summary["run_id"].as_str().expect("id")),
        "PRP:          PRPs/multiply.md".to_owned(),
        "ESCALATED, waiting for a human".to_owned(),
        "Breakers:     RED CLOSED".to_owned(),
        "Last verdict: none yet".to_owned(),
        "Escalation:   ".to_owned(),
        "Why:          ".to_owned(),
        "max_agent_invocations".to_owned(),
    ] {
        assert!(text.contains(&expected), "no {expected:?} in:\n{text}");
    }

    // No second run while this one waits for a human.
    let stderr = prpd_fails(&repo, &["run", "--in-place", PRP, "--json"], 2);
    assert!(
        stderr.contains("prpd resume") && stderr.contains("prpd abort"),
        "{stderr}"
    );

    let output = repo
        .prpd()
        .arg("abort")
        .timeout(COMMAND_TIMEOUT)
        .output()
        .expect("run prpd abort");
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("aborted"));
    let (_, status) = prpd_json(repo.path(), &["status", "--json"]);
    assert_eq!(status["state"], "ABORTED", "{status:#}");
    assert_eq!(json_file(&run.join("summary.json"))["state"], "ABORTED");
    let stderr = prpd_fails(&repo, &["resume", "--json"], 2);
    assert!(stderr.contains("nothing to resume"), "{stderr}");
}

#[test]
fn status_without_a_run_prints_null() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let (code, status) = prpd_json(repo.path(), &["status", "--json"]);
    assert_eq!(code, 0);
    assert!(status.is_null(), "{status:#}");
}

#[test]
fn same_model_for_qa_and_green_is_refused_before_the_run() {
    let repo = calc_repo(
        &prp(""),
        &format!(
            "[agents.default]\ncommand = [\"node\", \"{AGENT}\", \"honest\"]\nmodel = \"same\"\n"
        ),
    );
    let stderr = prpd_fails(&repo, &["run", "--in-place", PRP, "--json"], 2);
    assert!(stderr.contains("allow_same_model"), "{stderr}");
    assert!(stderr.contains("prpd.toml"), "{stderr}");
    assert!(crate::util::run_record(&repo.join("")).is_none());
}

#[test]
fn prp_with_nothing_to_verify_is_refused_naming_the_file_and_what_was_looked_for() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(
        "PRPs/untitled.md",
        "Multiply numbers.\n\n## Notes\n\nSomeone should write this up.\n",
    );
    let stderr = prpd_fails(
        &repo,
        &["run", "--in-place", "PRPs/untitled.md", "--json"],
        2,
    );
    // The line is the title's (the first heading, `## Notes`).
    assert!(
        stderr.contains("PRPs/untitled.md:3: nothing to verify"),
        "{stderr}"
    );
    assert!(stderr.contains("looked for success criteria"), "{stderr}");
    assert!(crate::util::run_record(&repo.join("")).is_none());
}

#[test]
fn run_without_json_prints_a_status_block_per_iteration_and_a_summary() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[], "[guardrails]\nmax_agent_invocations = 2\n"),
    );
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP])
        .timeout(COMMAND_TIMEOUT)
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    let iteration_blocks = stdout
        .split_inclusive("---END_PRP_PHASE_STATUS---")
        .filter(|block| block.contains("DUAL_GATE:"))
        .count();
    assert_eq!(iteration_blocks, 2, "{stdout}");
    assert!(stdout.contains("PHASE: RED") && stdout.contains("PHASE: GREEN"));
    assert!(
        stdout.contains("ESCALATED after 2 iterations (2 agent invocations)"),
        "{stdout}"
    );
    assert!(stdout.contains("Escalation report: "), "{stdout}");
}

/// An agent whose provider refuses its key cannot be helped by another iteration: the run
/// escalates after the first, naming the line and what to check, and no breaker counts it.
#[test]
fn an_agent_that_cannot_use_its_model_escalates_at_once_naming_the_line_and_the_setting() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("red", "no-key")], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(
        summary["agent_invocations"], 1,
        "one call, no retry: {summary:#}"
    );
    let reason = summary["escalation_reason"].as_str().expect("a reason");
    assert!(
        reason.contains("litellm.AuthenticationError")
            && reason.contains("[agents.red]")
            && reason.contains("key"),
        "{reason}"
    );
    assert_eq!(summary["breakers"]["RED"]["state"], "CLOSED", "{summary:#}");
}
