//! Discovery follows a recipe or script that calls another task runner (issue 9): one fixture
//! repository per trap, each refused by `prpd detect` with the chain named, and the honest
//! chains beside them, still picked and, where the machine has the tools, run by `prpd qa`.

use serde_json::Value;

use crate::util::{TestRepo, check, declared, detect_json, qa_json};

/// The "Skipped as unsafe" lines of `prpd detect` on `repo`.
fn skipped(repo: &TestRepo) -> String {
    let output = repo
        .prpd()
        .args(["detect", "--repo"])
        .arg(repo.path())
        .output()
        .expect("run prpd detect");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.split_once("Skipped as unsafe:")
        .map_or_else(String::new, |(_, lines)| lines.to_owned())
}

fn assert_refused(repo: &TestRepo, line: &str) {
    let skipped = skipped(repo);
    assert!(
        skipped.lines().any(|skipped| skipped == line),
        "missing {line:?} in:\n{skipped}"
    );
}

/// A checklist with the test check alone, so that `prpd qa` runs just the test command.
const TEST_ONLY: &str = "qa_checklist:\n  replace_builtin: true\n  funcionalidade:\n    - id: F1\n      criterio: tests pass\n      validacao: exit_code == 0\n      comando: \"{detected_test_command}\"\n      blocking: true\n";

// --- Traps: each refused, naming the chain ---------------------------------------------------

#[test]
fn make_test_running_a_script_that_rewrites_files_is_refused() {
    let repo = TestRepo::new();
    repo.file("Makefile", "test: ; npm run check\n").file(
        "package.json",
        r#"{"scripts": {"check": "prettier --write . && jest"}}"#,
    );
    assert_ne!(
        detect_json(&repo)["commands"]["test"]["command"],
        "make test"
    );
    assert_refused(
        &repo,
        "- Test: `make test` (Makefile target test): it runs `npm run check` (package.json scripts.check), which rewrites files (`--write`)",
    );
}

#[test]
fn a_test_script_running_make_check_that_fixes_is_refused() {
    let repo = TestRepo::new();
    repo.file("package.json", r#"{"scripts": {"test": "make check"}}"#)
        .file("Makefile", "check: ; ruff check --fix .\n");
    assert_eq!(detect_json(&repo)["commands"]["test"], Value::Null);
    assert_refused(
        &repo,
        "- Test: `npm test` (package.json scripts.test): it runs `make check` (Makefile target check), which rewrites files (`--fix`)",
    );
}

#[test]
fn scripts_calling_scripts_through_every_package_manager_are_followed() {
    let cases = [
        ("npm run fix", "`npm run fix` (package.json scripts.fix)"),
        (
            "npm run-script fix",
            "`npm run-script fix` (package.json scripts.fix)",
        ),
        ("pnpm run fix", "`pnpm run fix` (package.json scripts.fix)"),
        ("pnpm fix", "`pnpm fix` (package.json scripts.fix)"),
        ("yarn fix", "`yarn fix` (package.json scripts.fix)"),
        ("yarn run fix", "`yarn run fix` (package.json scripts.fix)"),
        ("bun run fix", "`bun run fix` (package.json scripts.fix)"),
        ("npm test", "`npm test` (package.json scripts.test)"),
    ];
    for (lint, chain) in cases {
        let repo = TestRepo::new();
        repo.file(
            "package.json",
            &format!(
                r#"{{"scripts": {{"lint": "{lint}", "fix": "eslint --fix .", "test": "prettier --write ."}}}}"#
            ),
        );
        assert_ne!(
            detect_json(&repo)["commands"]["lint"]["command"],
            "npm run lint",
            "{lint}"
        );
        let reason = if lint == "npm test" {
            "rewrites files (`--write`)"
        } else {
            "rewrites files (`--fix`)"
        };
        assert_refused(
            &repo,
            &format!(
                "- Lint: `npm run lint` (package.json scripts.lint): it runs {chain}, which {reason}"
            ),
        );
    }
}

#[test]
fn a_justfile_recipe_running_just_again_or_a_variable_is_followed() {
    let repo = TestRepo::new();
    repo.file(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
    )
    .file(
        "justfile",
        "fmt_cmd := \"black .\"\n\ntest:\n    just fmt\n\nlint:\n    {{just_executable()}} fmt\n\nfmt:\n    {{fmt_cmd}}\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["test"]["source"],
        "qa-tools-mapping.yml default (rust)"
    );
    assert_eq!(
        commands["lint"]["source"],
        "qa-tools-mapping.yml default (rust)"
    );
    for (kind, recipe) in [("Test", "test"), ("Lint", "lint")] {
        assert_refused(
            &repo,
            &format!(
                "- {kind}: `just {recipe}` (justfile recipe {recipe}): it runs `just fmt` (justfile recipe fmt), which formats files (`black` without `--check`)"
            ),
        );
    }
}

#[test]
fn calls_into_a_sub_directory_read_its_files() {
    let repo = TestRepo::new();
    repo.file(
        "Makefile",
        "lint:\n\tcd sub && make lint\ncheck:\n\t$(MAKE) -C sub lint\ntest:\n\tnpm --prefix sub run lint\nbuild:\n\t(cd sub; npm run lint)\n",
    )
    .file("sub/Makefile", "lint: ; eslint --fix .\n")
    .file("sub/package.json", r#"{"scripts": {"lint": "eslint --fix ."}}"#);
    let lines = [
        "- Lint: `make lint` (Makefile target lint): it runs `cd sub && make lint` (sub/Makefile target lint), which rewrites files (`--fix`)",
        "- Test: `make test` (Makefile target test): it runs `npm --prefix sub run lint` (sub/package.json scripts.lint), which rewrites files (`--fix`)",
        "- Test: `make check` (Makefile target check): it runs `make -C sub lint` (sub/Makefile target lint), which rewrites files (`--fix`)",
        "- Build: `make build` (Makefile target build): it runs `cd sub && npm run lint` (sub/package.json scripts.lint), which rewrites files (`--fix`)",
    ];
    for line in lines {
        assert_refused(&repo, line);
    }
}

#[test]
fn a_cycle_or_a_chain_past_the_cap_is_refused_quickly_by_name() {
    let repo = TestRepo::new();
    let deep: Vec<String> = (0..20)
        .map(|level| format!("\"d{level}\": \"npm run d{}\"", level + 1))
        .collect();
    repo.file(
        "package.json",
        &format!(
            r#"{{"scripts": {{"test": "npm run a", "a": "npm run b", "b": "npm run a", "lint": "npm run d0", {}, "d20": "eslint ."}}}}"#,
            deep.join(", ")
        ),
    );
    let started = std::time::Instant::now();
    let commands = detect_json(&repo)["commands"].clone();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(commands["test"], Value::Null);
    assert_refused(
        &repo,
        "- Test: `npm test` (package.json scripts.test): it could not be judged: `npm run a` calls itself (`npm run a` → `npm run b` → `npm run a`)",
    );
    assert_refused(
        &repo,
        "- Lint: `npm run lint` (package.json scripts.lint): it could not be judged: its task-runner calls go more than 16 deep (`npm run d0` → … → `npm run d16`)",
    );
}

#[test]
fn a_call_prpd_cannot_read_is_refused_not_assumed_safe() {
    let repo = TestRepo::new();
    repo.file("package.json", r#"{"scripts": {"lint": "npm run fix"}}"#)
        .file(
            "Makefile",
            "test: ; $(MAKE) -C missing test\ncheck: ; $(MAKE) unit\nbuild: ; just build\n",
        )
        .file("typecheck/README", "no Makefile here\n");
    let lines = [
        "- Lint: `npm run lint` (package.json scripts.lint): it runs `npm run fix`, which prpd cannot read: package.json has no script `fix`",
        "- Test: `make test` (Makefile target test): it runs `make -C missing test`, which prpd cannot read: the folder missing/ is not there",
        "- Test: `make check` (Makefile target check): it runs `make unit`, which prpd cannot read: Makefile has no target `unit`",
        "- Build: `make build` (Makefile target build): it runs `just build`, which prpd cannot read: there is no justfile in the repository root or above it",
    ];
    for line in lines {
        assert_refused(&repo, line);
    }
}

// --- Honest controls: still picked, and run as before -----------------------------------------

#[test]
fn honest_chains_are_still_picked() {
    let repo = TestRepo::new();
    repo.file("Makefile", "test: ; npm test\n").file(
        "package.json",
        r#"{"scripts": {"test": "jest", "pretest": "tsc --noEmit", "posttest": "echo done", "lint": "eslint ."}}"#,
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["test"],
        declared("npm test", "package.json scripts.test")
    );
    assert_eq!(
        commands["lint"],
        declared("npm run lint", "package.json scripts.lint")
    );
    assert_eq!(skipped(&repo), "");

    let make_first = TestRepo::new();
    make_first
        .file("Makefile", "test: ; cd web && npm test\n")
        .file(
            "web/package.json",
            r#"{"scripts": {"test": "jest", "pretest": "tsc --noEmit"}}"#,
        );
    assert_eq!(
        detect_json(&make_first)["commands"]["test"],
        declared("make test", "Makefile target test"),
        "make test → npm test → jest"
    );

    let just = TestRepo::new();
    just.file("Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\n")
        .file("justfile", "test:\n    cargo test\nfmt:\n    {{just_executable()}} rustfmt-check\nrustfmt-check:\n    cargo fmt --check\n");
    let commands = &detect_json(&just)["commands"];
    assert_eq!(
        commands["test"],
        declared("just test", "justfile recipe test")
    );
    assert_eq!(
        commands["format_check"],
        declared("just fmt", "justfile recipe fmt"),
        "a fmt recipe is a format check when the recipe it calls checks"
    );

    let implicit = TestRepo::new();
    implicit
        .file("calc.c", "int main(void) { return 0; }\n")
        .file("Makefile", "check:\n\t$(MAKE) calc && ./calc\n");
    assert_eq!(
        detect_json(&implicit)["commands"]["test"],
        declared("make check", "Makefile target check"),
        "make's built-in rule builds calc from calc.c, as before"
    );
}

#[test]
fn a_pretest_that_rewrites_is_a_trap_behind_make_too() {
    let repo = TestRepo::new();
    repo.file("Makefile", "test: ; npm test\n").file(
        "package.json",
        r#"{"scripts": {"test": "jest", "pretest": "prettier --write ."}}"#,
    );
    assert_eq!(detect_json(&repo)["commands"]["test"], Value::Null);
    assert_refused(
        &repo,
        "- Test: `make test` (Makefile target test): it runs `npm test` (package.json scripts.test), which rewrites files (`--write`)",
    );
}

#[test]
fn make_test_through_npm_test_to_node_runs_in_qa() {
    let repo = TestRepo::new();
    repo.file("Makefile", "test:\n\tcd web && npm test\n")
        .file(
            "web/package.json",
            r#"{"name": "pad", "scripts": {"test": "node --test", "pretest": "node -e \"process.exit(0)\""}}"#,
        )
        .file(
            "web/test/pad.test.js",
            "const { test } = require(\"node:test\");\ntest(\"pads\", () => {});\n",
        )
        .file("qa-checklist.yml", TEST_ONLY)
        .commit("pad");
    let (code, report) = qa_json(&repo, &[]);
    let test = check(&report, "F1");
    assert_eq!(test["command"], "make test", "{report:#}");
    assert_eq!(test["status"], "pass", "{test:#}");
    assert_eq!(code, 0, "{report:#}");
}

#[test]
#[ignore = "end-to-end tier: needs pytest; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn npm_test_through_make_test_to_pytest_runs_in_qa() {
    let repo = TestRepo::new();
    repo.file("package.json", r#"{"scripts": {"test": "make test"}}"#)
        .file("Makefile", "test:\n\tpython3 -m pytest -q\n")
        .file("test_sum.py", "def test_sum():\n    assert 1 + 1 == 2\n")
        .file("qa-checklist.yml", TEST_ONLY)
        .commit("sum");
    assert_eq!(
        detect_json(&repo)["commands"]["test"],
        declared("npm test", "package.json scripts.test")
    );
    let (code, report) = qa_json(&repo, &[]);
    let test = check(&report, "F1");
    assert_eq!(test["status"], "pass", "{test:#}");
    assert_eq!(code, 0, "{report:#}");
}
