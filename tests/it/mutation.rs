//! C7, test strength on the diff, through the real `prpd qa`: off until prpd.toml enables it,
//! nothing to judge without a base, a skip that names the missing tool, and (end-to-end tier)
//! mutmut's mutants of the changed lines counted, the survivors named, the tree untouched. A
//! tool that runs out of time or leaves no record is no pass.

use std::path::Path;

use serde_json::Value;

use crate::util::{TestRepo, check};

/// A Python project whose base has `add`, and whose change adds `multiply` and `clamp`. The
/// tests check `clamp` inside the range and below it, never above it nor at a bound, so the
/// mutants of both comparisons survive.
fn changed_python_project(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file("calc.py", "def add(a, b):\n    return a + b\n")
        .file(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )
        .file("prpd.toml", config)
        .commit("base");
    repo.file(
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n\n\n\
         def clamp(value, low, high):\n    if value < low:\n        return low\n    if value > high:\n        return high\n    return value\n",
    )
    .file(
        "tests/test_calc.py",
        "from calc import add, multiply, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n\
         def test_multiply():\n    assert multiply(2, 3) == 6\n\n\n\
         def test_clamp():\n    assert clamp(5, 0, 10) == 5\n    assert clamp(-1, 0, 10) == 0\n",
    );
    repo
}

/// `prpd qa --json` with `extra` arguments and `PATH` set to `path`: the report.
fn qa(repo: &TestRepo, path: &std::ffi::OsStr, extra: &[&str]) -> Value {
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .args(extra)
        .env("PATH", path)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("run prpd qa");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "prpd qa: stdout is not JSON ({error}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn detail(check: &Value) -> &str {
    check["detail"].as_str().expect("a detail")
}

#[test]
fn a_missing_mutation_tool_is_a_skip_that_names_it() {
    let repo = changed_python_project("[checks.C7]\nenabled = true\n");
    // An empty PATH hides any mutmut the machine has. The project has no stack marker, so
    // discovery finds no command and nothing else needs a program from PATH.
    let no_tools = tempfile::tempdir().expect("an empty PATH directory");
    let mutation = qa(&repo, no_tools.path().as_os_str(), &["--base", "main"]);
    let c7 = check(&mutation, "C7");
    assert_eq!(c7["status"], "skip", "{c7:#}");
    assert!(
        detail(c7).contains(
            "12 changed Python lines since main but mutmut is not installed (`mutmut` is not on PATH)"
        ),
        "{c7:#}"
    );
    assert_eq!(c7["metrics"], serde_json::json!({}), "{c7:#}");

    let no_change = qa(&repo, no_tools.path().as_os_str(), &[]);
    let c7 = check(&no_change, "C7");
    assert_eq!(c7["status"], "skip", "{c7:#}");
    assert!(detail(c7).contains("no change is under review"), "{c7:#}");

    repo.file("prpd.toml", "").commit("C7 left off");
    let off = qa(&repo, no_tools.path().as_os_str(), &["--base", "main"]);
    let c7 = check(&off, "C7");
    assert_eq!(c7["status"], "skip", "{c7:#}");
    assert!(detail(c7).contains("off by default"), "{c7:#}");
}

/// A directory holding one executable `mutmut` with `script` as its body, and the `PATH` that
/// finds it first.
fn fake_mutmut(script: &str) -> (tempfile::TempDir, std::ffi::OsString) {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = tempfile::tempdir().expect("a bin directory");
    let program = bin.path().join("mutmut");
    std::fs::write(&program, format!("#!/bin/sh\n{script}\n")).expect("the fake tool");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::join_paths([bin.path(), Path::new("/usr/bin"), Path::new("/bin")])
        .expect("a PATH");
    (bin, path)
}

#[test]
fn a_mutation_tool_that_runs_out_of_time_is_no_pass() {
    let repo = changed_python_project("[checks.C7]\nenabled = true\ntimeout = \"1s\"\n");
    let (_bin, path) = fake_mutmut("sleep 30");
    let started = std::time::Instant::now();
    let report = qa(&repo, &path, &["--base", "main"]);
    let c7 = check(&report, "C7");
    assert_eq!(c7["status"], "warn", "{c7:#}");
    assert_eq!(
        detail(c7),
        "`mutmut run` did not finish within the check's 1s limit; its process group was stopped, so there is no score (raise the check's `timeout`)"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_mutation_tool_that_leaves_no_record_fails_the_check_it_blocks() {
    let repo = changed_python_project("[checks.C7]\nenabled = true\nblocking = true\n");
    let (_bin, path) = fake_mutmut("echo 'no tests collected' >&2; exit 1");
    let report = qa(&repo, &path, &["--base", "main"]);
    let c7 = check(&report, "C7");
    assert_eq!(c7["status"], "fail", "{c7:#}");
    assert_eq!(
        detail(c7),
        "`mutmut run` exited 1 without testing a mutant; last lines: no tests collected"
    );
    assert_eq!(report["verdict"], "REJECT");
}

#[test]
#[ignore = "end-to-end tier: needs mutmut (and pytest) on PATH; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn mutmut_measures_the_changed_lines_and_names_the_survivors() {
    crate::healthy::require("mutmut", "pip install 'mutmut>=3.8,<4'");
    let repo = changed_python_project("[checks.C7]\nenabled = true\n");
    let path = std::env::var_os("PATH").expect("a PATH");
    let report = qa(&repo, &path, &["--base", "main"]);
    let c7 = check(&report, "C7");
    assert_eq!(c7["status"], "warn", "{c7:#}");
    assert_eq!(c7["command"], "mutmut run", "{c7:#}");
    let metrics = &c7["metrics"];
    assert_eq!(metrics["mutants_total"], 3.0, "{c7:#}");
    assert_eq!(metrics["mutants_killed"], 1.0, "{c7:#}");
    assert_eq!(metrics["mutants_survived"], 2.0, "{c7:#}");
    assert_eq!(metrics["mutation_score"], 33.33, "{c7:#}");
    assert!(
        detail(c7).starts_with("mutation_score is 33.33%, expected >= 60%: mutmut on the lines changed since main: 3 mutants: 1 killed, 2 survived, 0 timed out; 33.33% caught."),
        "{c7:#}"
    );
    assert!(
        detail(c7).contains(
            "Surviving (no test failed with this change): calc.py:10 `if value <= low:`; calc.py:12 `if value >= high:`"
        ),
        "{c7:#}"
    );
    assert_eq!(c7["blocking"], false, "a warning by default: {c7:#}");
    assert!(
        !repo.path().join("mutants").exists(),
        "mutmut ran in a copy"
    );
    assert!(
        !repo.join("pyproject.toml").exists(),
        "the tree is untouched"
    );
}
