//! Honest work ships on every stack, on its first QA attempt: one honest scripted agent
//! (`agents/stack-agent.py`) adds `clamp` against the PRP's AC-1 and AC-2 — tests named after
//! the ids, a correct implementation, the README documenting it — to a small npm package with
//! no linter installed, a Rust crate whose tests are an integration test file, and a Go module
//! tested with plain `go test ./...`. Each once failed before QA: REFACTOR held the npm package
//! to prpd's guessed `npx --no eslint .` (and the Go module to `golangci-lint`) that cannot run,
//! GREEN's proof did not know cargo's `(test "clamp")` build failure, and go's one `ok` line per
//! package was counted as one test against RED's two. Beside them, the rule that was loosened
//! still holds: a linter the project declares must run, missing or not.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::run::{PRP, every_phase_toml, iterations_in, measured, read, run_dir, verdicts};
use crate::util::TestRepo;

const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/stack-agent.py"
);

/// The upper bound for one run; a Rust run compiles the crate a few times.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// The PRP: `function` is the name the stack gives `clamp`.
fn prp(function: &str) -> String {
    format!(
        "# Clamp numbers\n\n## Goal\n\nAdd `{function}(value, low, high)` to numkit.\n\n\
         ## Tasks\n\n1. Write a failing test for each acceptance criterion.\n\
         2. Implement `{function}`.\n3. Document it in the README.\n\n\
         ## Acceptance Criteria\n\n\
         - AC-1: `{function}` raises a value below `low` to `low`.\n\
         - AC-2: `{function}` lowers a value above `high` to `high`.\n"
    )
}

/// The agents' configuration: the honest agent of `stack` in every phase.
fn prpd_toml(stack: &str) -> String {
    every_phase_toml(&format!("\"python3\", \"{AGENT}\", \"{stack}\""), "120s")
}

/// An npm package without a lint script and without eslint installed; `package_json` is its
/// manifest.
fn npm_repo(package_json: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file("package.json", package_json)
        .file(
            "index.js",
            "/** The value `t` of the way from `a` to `b`. */\n\
             export function lerp(a, b, t) {\n  return a + (b - a) * t;\n}\n",
        )
        .file(
            "test/lerp.test.js",
            "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
             import { lerp } from \"../index.js\";\n\n\
             test(\"lerp halfway\", () => {\n  assert.equal(lerp(0, 10, 0.5), 5);\n});\n",
        )
        .file("README.md", "# numkit\n\nSmall number helpers.\n")
        .file(PRP, &prp("clamp"))
        .file("prpd.toml", &prpd_toml("npm"))
        .commit("numkit");
    repo
}

const NPM_PACKAGE: &str = "{\n  \"name\": \"numkit\",\n  \"version\": \"1.0.0\",\n  \
    \"type\": \"module\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n";

/// A library crate whose tests are integration test files in `tests/`.
fn rust_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "Cargo.toml",
        "[package]\nname = \"numkit\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .file(
        "src/lib.rs",
        "//! Small number helpers.\n\n\
         /// The value `t` of the way from `a` to `b`.\n\
         pub fn lerp(a: f64, b: f64, t: f64) -> f64 {\n    a + (b - a) * t\n}\n",
    )
    .file(
        "tests/lerp.rs",
        "use numkit::lerp;\n\n#[test]\nfn lerp_halfway() {\n    assert!((lerp(0.0, 10.0, 0.5) - 5.0).abs() < 1e-9);\n}\n",
    )
    .file("README.md", "# numkit\n\nSmall number helpers.\n")
    .file(".gitignore", "/target\n")
    .file(PRP, &prp("clamp"))
    .file("prpd.toml", &prpd_toml("rust"))
    .commit("numkit");
    repo
}

/// A Go module with a test, no Makefile: its test command is the default `go test ./...`.
fn go_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/numkit\n\ngo 1.19\n")
        .file(
            "numkit.go",
            "// Package numkit has small number helpers.\npackage numkit\n\n\
             // Abs is the absolute value of value.\nfunc Abs(value int) int {\n\
             \tif value < 0 {\n\t\treturn -value\n\t}\n\treturn value\n}\n",
        )
        .file(
            "numkit_test.go",
            "package numkit\n\nimport \"testing\"\n\n\
             func TestAbs(t *testing.T) {\n\tif got := Abs(-3); got != 3 {\n\
             \t\tt.Fatalf(\"Abs(-3) = %d, want 3\", got)\n\t}\n}\n",
        )
        .file("README.md", "# numkit\n\nSmall number helpers.\n")
        .file(PRP, &prp("Clamp"))
        .file("prpd.toml", &prpd_toml("go"))
        .commit("numkit");
    repo
}

/// `prpd run` on the PRP: the exit code and the summary. The crate under test builds in its
/// own `target/`, not in the one this test binary was built in.
fn run(repo: &TestRepo) -> (i32, Value) {
    let output = repo
        .prpd()
        .args(["run", PRP, "--json"])
        .env_remove("CARGO_TARGET_DIR")
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (
        output.status.code().expect("prpd exited by itself"),
        summary,
    )
}

/// The directories of the iterations of `phase` (`refactor`), in order.
fn iteration_dirs(repo: &Path, summary: &Value, phase: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(run_dir(repo, summary).join("iterations"))
        .expect("iterations directory")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.split('-').nth(1) == Some(phase))
        })
        .collect();
    dirs.sort();
    dirs
}

/// The run shipped on its first QA attempt, every phase in one iteration; returns the QA
/// report.
fn assert_shipped_first_time(repo: &TestRepo, stack: &str) -> (Value, String) {
    let (code, summary) = run(repo);
    let qa = iteration_dirs(repo.path(), &summary, "qa");
    let report = qa
        .last()
        .map(|dir| read(&dir.join("qa-report.md")))
        .unwrap_or_default();
    let gates: Vec<String> = ["red", "green", "refactor", "document"]
        .iter()
        .flat_map(|phase| measured(repo.path(), &summary, phase))
        .map(|measured| format!("{}: {}", measured["phase"], measured["gate_1"]))
        .collect();
    assert_eq!(
        summary["state"], "SHIPPED",
        "{stack}: {summary:#}\n{gates:#?}\n{report}"
    );
    assert_eq!(code, 0, "{stack}");
    assert_eq!(
        verdicts(&summary),
        [(1, "APPROVE".to_owned())],
        "{stack}: {summary:#}"
    );
    for phase in ["RED", "GREEN", "REFACTOR", "DOCUMENT"] {
        assert_eq!(
            iterations_in(&summary, phase),
            1,
            "{stack}: {phase} in one iteration: {summary:#}"
        );
    }
    (summary, report)
}

/// The lint log of the REFACTOR iteration.
fn refactor_lint_log(repo: &TestRepo, summary: &Value) -> String {
    let refactor = iteration_dirs(repo.path(), summary, "refactor");
    read(&refactor[0].join("lint.log"))
}

#[test]
fn an_honest_npm_package_ships_without_a_linter_installed() {
    let repo = npm_repo(NPM_PACKAGE);
    let (summary, report) = assert_shipped_first_time(&repo, "npm");
    let lint = refactor_lint_log(&repo, &summary);
    assert!(
        lint.starts_with("prpd did not run `npx --no eslint .`: the tool is missing: `eslint` is neither in node_modules/.bin nor on PATH"),
        "{lint}"
    );
    assert!(
        lint.contains("this is prpd's default (qa-tools-mapping.yml default (node_typescript))"),
        "the reason names the guess: {lint}"
    );
    assert!(report.contains("C1"), "{report}");
}

#[test]
fn an_honest_rust_crate_with_integration_tests_ships() {
    let repo = rust_repo();
    let (summary, report) = assert_shipped_first_time(&repo, "rust");
    let green = measured(repo.path(), &summary, "green");
    assert_eq!(
        green[0]["observation"]["tests"]["passing"], 3,
        "the older test and RED's two: {green:#?}"
    );
    assert!(
        report.contains("without the feature the tests do not build: error: could not compile `numkit` (test \"clamp\")"),
        "F2P names the target that did not build: {report}"
    );
}

#[test]
#[ignore = "end-to-end tier: needs Go; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn an_honest_go_module_on_plain_go_test_ships() {
    let repo = go_repo();
    let (summary, report) = assert_shipped_first_time(&repo, "go");
    let red = measured(repo.path(), &summary, "red");
    assert_eq!(
        red[0]["observation"]["tests"],
        serde_json::json!({"passing": 1, "failing": 2}),
        "{red:#?}"
    );
    let green = measured(repo.path(), &summary, "green");
    assert_eq!(
        green[0]["observation"]["tests"],
        serde_json::json!({"passing": 3, "failing": 0}),
        "each test counted, not the package: {green:#?}"
    );
    let green_dir = &iteration_dirs(repo.path(), &summary, "green")[0];
    let tests = read(&green_dir.join("tests-2.log"));
    assert!(
        tests.contains("--- PASS: TestAC1ClampRaisesAValueBelowLow"),
        "the test is named: {tests}"
    );
    let lint = refactor_lint_log(&repo, &summary);
    assert!(lint.contains("golangci-lint"), "{lint}");
    let qa_dir = &iteration_dirs(repo.path(), &summary, "qa")[0];
    let qa_tests = read(&qa_dir.join("checks/F1.log"));
    assert!(
        qa_tests.contains("--- PASS: TestAC2ClampLowersAValueAboveHigh"),
        "QA's test run names the tests too: {qa_tests}\n{report}"
    );
}

/// The loosened rule's other side: the project's own lint script runs a linter that is not
/// installed. That is no guess of prpd's to skip: REFACTOR cannot pass, and says why.
#[test]
fn a_linter_the_project_declares_must_run_even_when_missing() {
    let repo = npm_repo(
        "{\n  \"name\": \"numkit\",\n  \"version\": \"1.0.0\",\n  \"type\": \"module\",\n  \
         \"scripts\": {\n    \"test\": \"node --test\",\n    \"lint\": \"prpd-test-linter-on-no-path .\"\n  }\n}\n",
    );
    let (code, summary) = run(&repo);
    assert_ne!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "REFACTOR", "{summary:#}");
    let gate = measured(repo.path(), &summary, "refactor")[0]["gate_1"].to_string();
    assert!(
        gate.contains("lint cannot run: the tool is missing: `npm run lint` could not run its program (exit 127"),
        "{gate}"
    );
    assert!(
        gate.contains("the project declares this command (package.json scripts.lint)"),
        "{gate}"
    );
}
