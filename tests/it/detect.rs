//! `prpd detect`: stacks, package manager and discovered commands of fixture repositories,
//! checked through the real binary's JSON and table output.

use serde_json::{Value, json};

use crate::util::{TestRepo, declared, detect_json, fallback};

#[test]
fn node_with_npm_lockfile_runs_scripts_through_npm() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"name": "app", "scripts": {"test": "jest", "lint": "eslint .", "build": "tsc -p ."}}"#,
    )
    .file("package-lock.json", "{}");
    assert_eq!(
        detect_json(&repo),
        json!({
            "stacks": [{"id": "node_typescript", "path": "."}],
            "package_manager": "npm",
            "commands": {
                "test": declared("npm test", "package.json scripts.test"),
                "lint": declared("npm run lint", "package.json scripts.lint"),
                "typecheck": fallback("node_typescript", "npx --no tsc --noEmit"),
                "build": declared("npm run build", "package.json scripts.build"),
                "format_check": fallback("node_typescript", "npx --no prettier --check ."),
                "complexity": fallback(
                    "node_typescript",
                    "npx --no eslint . --rule 'complexity: [error, 10]'"
                ),
                "duplication": fallback("node_typescript", "npx --no jscpd --threshold 5 ."),
            },
            "subprojects": [],
        })
    );
}

#[test]
fn node_with_pnpm_lockfile_runs_scripts_through_pnpm() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"scripts": {"test": "vitest run", "lint": "eslint .", "check-types": "tsc --noEmit"}}"#,
    )
    .file("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    let detection = detect_json(&repo);
    assert_eq!(detection["package_manager"], "pnpm");
    assert_eq!(
        detection["commands"]["test"],
        declared("pnpm test", "package.json scripts.test")
    );
    assert_eq!(
        detection["commands"]["lint"],
        declared("pnpm run lint", "package.json scripts.lint")
    );
    assert_eq!(
        detection["commands"]["typecheck"],
        declared("pnpm run check-types", "package.json scripts.check-types")
    );
}

#[test]
fn package_manager_field_wins_over_a_stray_lockfile() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"packageManager": "pnpm@9.1.0", "scripts": {"build": "vite build"}}"#,
    )
    .file("package-lock.json", "{}");
    let detection = detect_json(&repo);
    assert_eq!(detection["package_manager"], "pnpm");
    assert_eq!(
        detection["commands"]["build"],
        declared("pnpm run build", "package.json scripts.build")
    );
}

#[test]
fn typescript_typecheck_and_format_scripts_run_through_yarn() {
    let repo = TestRepo::new();
    repo.file("tsconfig.json", r#"{"compilerOptions": {"strict": true}}"#)
        .file(
            "package.json",
            r#"{"scripts": {"typecheck": "tsc --noEmit", "format:check": "prettier --check ."}}"#,
        )
        .file("yarn.lock", "");
    let detection = detect_json(&repo);
    assert_eq!(
        detection["stacks"],
        json!([{"id": "node_typescript", "path": "."}])
    );
    assert_eq!(detection["package_manager"], "yarn");
    assert_eq!(
        detection["commands"]["typecheck"],
        declared("yarn typecheck", "package.json scripts.typecheck")
    );
    assert_eq!(
        detection["commands"]["format_check"],
        declared("yarn format:check", "package.json scripts.format:check")
    );
    assert_eq!(
        detection["commands"]["test"],
        fallback("node_typescript", "yarn test")
    );
    assert_eq!(
        detection["commands"]["lint"],
        fallback("node_typescript", "yarn run eslint .")
    );
}

#[test]
fn python_pyproject_tool_tables_give_pytest_ruff_and_mypy() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[project]\nname = \"app\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n",
    );
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "python", "path": "."}]));
    assert_eq!(detection["package_manager"], Value::Null);
    let commands = &detection["commands"];
    assert_eq!(
        commands["test"],
        declared("pytest", "pyproject.toml [tool.pytest.ini_options]")
    );
    assert_eq!(
        commands["lint"],
        declared("ruff check .", "pyproject.toml [tool.ruff]")
    );
    assert_eq!(
        commands["typecheck"],
        declared("mypy .", "pyproject.toml [tool.mypy]")
    );
    assert_eq!(
        commands["format_check"],
        fallback("python", "ruff format --check .")
    );
    assert_eq!(commands["build"], Value::Null);
}

#[test]
fn python_setup_py_with_tox_uses_tox_environments() {
    let repo = TestRepo::new();
    repo.file("setup.py", "from setuptools import setup\nsetup(name='app')\n")
        .file("requirements.txt", "requests\n")
        .file(
            "tox.ini",
            "[tox]\nenvlist = py, lint\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n\n[testenv:lint]\ndeps = flake8\ncommands = flake8 src\n",
        );
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "python", "path": "."}]));
    assert_eq!(
        detection["commands"]["test"],
        declared("tox -e py", "tox.ini [testenv]")
    );
    assert_eq!(
        detection["commands"]["lint"],
        declared("tox -e lint", "tox.ini env lint")
    );
}

#[test]
fn python_setup_py_with_makefile_uses_make_targets() {
    let repo = TestRepo::new();
    repo.file("setup.py", "from setuptools import setup\nsetup(name='app')\n")
        .file("requirements.txt", "pytest\n")
        .file(
            "Makefile",
            ".PHONY: test lint\nPYTHON ?= python3\n\ntest:\n\t$(PYTHON) -m pytest -q\n\nlint:\n\tflake8 src\n",
        );
    let detection = detect_json(&repo);
    assert_eq!(
        detection["commands"]["test"],
        declared("make test", "Makefile target test")
    );
    assert_eq!(
        detection["commands"]["lint"],
        declared("make lint", "Makefile target lint")
    );
    assert_eq!(
        detection["commands"]["typecheck"],
        fallback("python", "mypy .")
    );
}

#[test]
fn go_with_makefile_uses_targets_then_go_defaults() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n\ngo 1.22\n")
        .file(
            "Makefile",
            "test:\n\tgo test ./...\nlint:\n\tgolangci-lint run\nfmt:\n\tgofmt -w .\n",
        );
    assert_eq!(
        detect_json(&repo),
        json!({
            "stacks": [{"id": "golang", "path": "."}],
            "package_manager": null,
            "commands": {
                "test": declared("make test", "Makefile target test"),
                "lint": declared("make lint", "Makefile target lint"),
                "typecheck": null,
                "build": fallback("golang", "go build ./..."),
                "format_check": fallback("golang", "! gofmt -l . | grep ."),
                "complexity": fallback("golang", "gocyclo -over 10 ."),
                "duplication": fallback("golang", "dupl -threshold 50 ."),
            },
            "subprojects": [],
        })
    );
}

#[test]
fn rust_workspace_is_one_stack_with_cargo_commands() {
    let repo = TestRepo::new();
    repo.file(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
    )
    .file(
        "crates/core/Cargo.toml",
        "[package]\nname = \"core\"\nversion = \"0.1.0\"\n",
    )
    .file(
        "crates/cli/Cargo.toml",
        "[package]\nname = \"cli\"\nversion = \"0.1.0\"\n",
    );
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "rust", "path": "."}]));
    let commands = &detection["commands"];
    assert_eq!(commands["test"], fallback("rust", "cargo test"));
    assert_eq!(
        commands["lint"],
        fallback("rust", "cargo clippy --all-targets -- -D warnings")
    );
    assert_eq!(
        commands["format_check"],
        fallback("rust", "cargo fmt --check")
    );
    assert_eq!(commands["build"], fallback("rust", "cargo build"));
}

#[test]
fn lua_rockspec_with_busted_and_luacheck() {
    let repo = TestRepo::new();
    repo.file(
        "demo-1.0-1.rockspec",
        "package = \"demo\"\nversion = \"1.0-1\"\n",
    )
    .file(".busted", "return { default = { ROOT = {\"spec\"} } }\n")
    .file(".luacheckrc", "std = \"max\"\n")
    .file("lua/demo/init.lua", "return {}\n")
    .file("spec/demo_spec.lua", "describe('demo', function() end)\n");
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "lua", "path": "."}]));
    assert_eq!(detection["commands"]["test"], fallback("lua", "busted"));
    assert_eq!(detection["commands"]["lint"], fallback("lua", "luacheck ."));
    assert_eq!(
        detection["commands"]["complexity"],
        fallback("lua", "luacheck . --max-cyclomatic-complexity 10")
    );
}

#[test]
fn monorepo_reports_both_stacks_and_runs_commands_in_their_folder() {
    let repo = TestRepo::new();
    repo.file(
        "web/package.json",
        r#"{"scripts": {"test": "vitest run", "lint": "eslint src"}}"#,
    )
    .file("web/package-lock.json", "{}")
    .file(
        "api/pyproject.toml",
        "[project]\nname = \"api\"\n\n[tool.pytest.ini_options]\n\n[tool.mypy]\n",
    )
    .file("README.md", "# monorepo\n");
    let detection = detect_json(&repo);
    assert_eq!(
        detection["stacks"],
        json!([{"id": "node_typescript", "path": "web"}, {"id": "python", "path": "api"}])
    );
    assert_eq!(detection["package_manager"], "npm");
    let commands = &detection["commands"];
    assert_eq!(
        commands["test"],
        declared("cd web && npm test", "web/package.json scripts.test")
    );
    assert_eq!(
        commands["lint"],
        declared("cd web && npm run lint", "web/package.json scripts.lint")
    );
    assert_eq!(
        commands["typecheck"],
        fallback("node_typescript", "cd web && npx --no tsc --noEmit")
    );
}

#[test]
fn monorepo_falls_back_to_a_sub_folder_for_kinds_the_primary_lacks() {
    let repo = TestRepo::new();
    repo.file(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
    )
    .file(
        "site/package.json",
        r#"{"scripts": {"complexity": "eslint . --rule 'complexity: [error, 8]'"}}"#,
    );
    let detection = detect_json(&repo);
    assert_eq!(
        detection["stacks"],
        json!([{"id": "rust", "path": "."}, {"id": "node_typescript", "path": "site"}])
    );
    assert_eq!(
        detection["commands"]["complexity"],
        declared(
            "cd site && npm run complexity",
            "site/package.json scripts.complexity"
        )
    );
    assert_eq!(
        detection["commands"]["test"],
        fallback("rust", "cargo test")
    );
}

#[test]
fn makefile_only_repo_has_no_stack_and_make_commands() {
    let repo = TestRepo::new();
    repo.file(
        "Makefile",
        "all: build\nbuild:\n\t./build.sh\ncheck:\n\t./run-tests.sh\nlint:\n\tshellcheck *.sh\n",
    );
    assert_eq!(
        detect_json(&repo),
        json!({
            "stacks": [],
            "package_manager": null,
            "commands": {
                "test": declared("make check", "Makefile target check"),
                "lint": declared("make lint", "Makefile target lint"),
                "typecheck": null,
                "build": declared("make build", "Makefile target build"),
                "format_check": null,
                "complexity": null,
                "duplication": null,
            },
            "subprojects": [],
        })
    );
}

#[test]
fn justfile_recipes_are_commands() {
    let repo = TestRepo::new();
    repo.file(
        "justfile",
        "set shell := [\"bash\", \"-c\"]\n\n# Run the tests.\ntest *args:\n    ./test.sh {{args}}\n\nlint:\n    shellcheck *.sh\n\nfmt-check:\n    shfmt -d .\n\nrelease version:\n    ./release.sh {{version}}\n",
    );
    let detection = detect_json(&repo);
    let commands = &detection["commands"];
    assert_eq!(
        commands["test"],
        declared("just test", "justfile recipe test")
    );
    assert_eq!(
        commands["lint"],
        declared("just lint", "justfile recipe lint")
    );
    assert_eq!(
        commands["format_check"],
        declared("just fmt-check", "justfile recipe fmt-check")
    );
    assert_eq!(commands["build"], Value::Null);
}

#[test]
fn github_workflow_named_run_step_gives_the_matching_line() {
    let repo = TestRepo::new();
    repo.file("Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\n")
        .file(
            ".github/workflows/ci.yml",
            "name: CI\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Install nextest\n        run: cargo install cargo-nextest\n      - name: Run tests\n        run: |\n          cargo build --workspace\n          cargo nextest run --workspace\n      - run: cargo clippy --workspace -- -D warnings\n",
        );
    let detection = detect_json(&repo);
    let commands = &detection["commands"];
    assert_eq!(
        commands["test"],
        declared(
            "cargo nextest run --workspace",
            ".github/workflows/ci.yml step \"Run tests\""
        )
    );
    assert_eq!(
        commands["build"],
        declared(
            "cargo build --workspace",
            ".github/workflows/ci.yml step \"Run tests\""
        )
    );
    assert_eq!(
        commands["lint"],
        declared(
            "cargo clippy --workspace -- -D warnings",
            ".github/workflows/ci.yml step \"cargo clippy --workspace -- -D warnings\""
        )
    );
}

#[test]
fn gitlab_ci_job_scripts_are_commands() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n").file(
        ".gitlab-ci.yml",
        "stages: [test]\nunit:\n  stage: test\n  script:\n    - go mod download\n    - go test -race ./...\n",
    );
    assert_eq!(
        detect_json(&repo)["commands"]["test"],
        declared("go test -race ./...", ".gitlab-ci.yml job unit")
    );
}

#[test]
fn lint_script_that_fixes_files_is_not_picked() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"scripts": {"test": "jest", "lint": "eslint --fix .", "format:check": "prettier --write ."}}"#,
    );
    let detection = detect_json(&repo);
    assert_eq!(
        detection["commands"]["lint"],
        fallback("node_typescript", "npx --no eslint .")
    );
    assert_eq!(
        detection["commands"]["format_check"],
        fallback("node_typescript", "npx --no prettier --check .")
    );

    let output = repo
        .prpd()
        .args(["detect", "--repo"])
        .arg(repo.path())
        .output()
        .expect("run prpd detect");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("`npm run lint` (package.json scripts.lint): it rewrites files (`--fix`)"),
        "{table}"
    );
}

#[test]
fn package_json_inside_node_modules_is_not_a_stack() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n")
        .file(
            "node_modules/left-pad/package.json",
            r#"{"scripts": {"test": "node test.js"}}"#,
        )
        .file("vendor/github.com/x/y/go.mod", "module github.com/x/y\n")
        .file("tools/node_modules/z/package.json", "{}");
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "golang", "path": "."}]));
    assert_eq!(detection["package_manager"], Value::Null);
    assert_eq!(
        detection["commands"]["test"],
        fallback("golang", "go test ./...")
    );
}

#[test]
fn gitignored_folder_is_not_a_stack() {
    let repo = TestRepo::new();
    repo.file(".gitignore", "generated/\n")
        .file("generated/package.json", r#"{"scripts": {"test": "jest"}}"#)
        .file("service/go.mod", "module example.com/service\n");
    let detection = detect_json(&repo);
    assert_eq!(
        detection["stacks"],
        json!([{"id": "golang", "path": "service"}])
    );
}

#[test]
fn human_output_is_a_quality_commands_table() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"scripts": {"test": "jest", "lint": "eslint ."}}"#,
    )
    .file("pnpm-lock.yaml", "");
    let output = repo
        .prpd()
        .args(["detect", "--repo"])
        .arg(repo.path())
        .output()
        .expect("run prpd detect");
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "Stacks: node_typescript (.)",
        "Package manager: pnpm",
        "| Type | Command | Source |",
        "| Test | `pnpm test` | package.json scripts.test |",
        "| Lint | `pnpm run lint` | package.json scripts.lint |",
        "| TypeCheck | `pnpm exec tsc --noEmit` | fallback: qa-tools-mapping.yml default (node_typescript) |",
        "| Build | Not found | - |",
    ] {
        assert!(
            table.contains(expected),
            "missing {expected:?} in:\n{table}"
        );
    }
}

#[test]
fn malformed_package_json_exits_2_naming_file_and_line() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        "{\n  \"name\": \"app\",\n  \"scripts\": {\"test\": \"jest\",}\n}\n",
    );
    let output = repo
        .detect_json_command()
        .output()
        .expect("run prpd detect");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("package.json:3:"), "{stderr}");
    assert!(stderr.contains("malformed package.json"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing on stdout: {output:?}");
}

#[test]
fn repo_mapping_file_overrides_a_default_command() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n").file(
        "qa-tools-mapping.yml",
        "qa_tools:\n  stacks:\n    golang:\n      lint: \"go vet ./...\"\n",
    );
    let detection = detect_json(&repo);
    assert_eq!(
        detection["commands"]["lint"],
        json!({
            "command": "go vet ./...",
            "source": "qa-tools-mapping.yml stacks.golang.lint",
            "fallback": false,
            "configured": true
        })
    );
    assert_eq!(
        detection["commands"]["test"],
        fallback("golang", "go test ./...")
    );
}
