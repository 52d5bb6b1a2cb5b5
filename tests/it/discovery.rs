//! Discovery you can trust: fixture repositories shaped like real projects, one per unsafe
//! pattern prpd must refuse (a recipe that expands to `docker run`, ruff configured to fix,
//! a lint script that runs a fix script, …), the package manager's own exec, script-name
//! synonyms, Python builds and tox, cleaned CI lines, C/C++ stacks and sub-projects, all
//! through the real binary.

use serde_json::{Value, json};

use crate::util::{TestRepo, check, declared, detect_json, fallback, qa_json};

/// `prpd detect` (the human table) on `repo`.
fn detect_text(repo: &TestRepo) -> String {
    let output = repo
        .prpd()
        .args(["detect", "--repo"])
        .arg(repo.path())
        .output()
        .expect("run prpd detect");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn assert_contains(text: &str, expected: &str) {
    assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
}

// --- One trap per unsafe pattern -------------------------------------------------------------

#[test]
fn make_build_whose_variable_expands_to_docker_run_is_refused() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n\ngo 1.22\n").file(
        "Makefile",
        "DOCKER_IMAGE ?= golang:1.22\nDOCKER_RUN = docker run --rm -v $(CURDIR):/src -w /src $(DOCKER_IMAGE)\n\n.PHONY: build test\nbuild:\n\t${DOCKER_RUN} go build -o bin/app ./cmd/app\ntest:\n\tgo test ./...\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(commands["build"], fallback("golang", "go build ./..."));
    assert_eq!(
        commands["test"],
        declared("make test", "Makefile target test")
    );
    assert_contains(
        &detect_text(&repo),
        "- Build: `make build` (Makefile target build): it runs containers (`docker`)",
    );
}

#[test]
fn a_variable_from_an_included_makefile_is_expanded() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n")
        .file(
            "Makefile",
            "include tools.mk\n\nlint:\n\t$(GOLANGCI) run ./...\n",
        )
        .file(
            "tools.mk",
            "GOLANGCI = docker run --rm -v $(PWD):/app golangci/golangci-lint:v1.59 golangci-lint\n",
        );
    assert_eq!(
        detect_json(&repo)["commands"]["lint"],
        fallback("golang", "golangci-lint run")
    );
}

#[test]
fn a_makefile_whose_expansion_explodes_is_refused_fast_by_name() {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = (0..12)
        .map(|level| {
            let next = format!("$(V{})", level + 1);
            format!("V{level} = {}", [next.as_str(); 10].join(" "))
        })
        .collect();
    lines.push("V12 = go\nSELF = $(SELF) $(SELF) -v\n".to_owned());
    let variables = lines.join("\n");
    repo.file("go.mod", "module example.com/app\n")
        .file(
            "Makefile",
            "include vars.mk\ninclude loop.mk\n\ntest:\n\t$(V0) test ./...\nlint:\n\tgo vet $(SELF) ./...\n",
        )
        .file("vars.mk", &variables)
        .file("loop.mk", "include vars.mk\ninclude loop.mk\n");
    let started = std::time::Instant::now();
    let commands = detect_json(&repo)["commands"].clone();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "detect took {:?}",
        started.elapsed()
    );
    assert_eq!(commands["test"], fallback("golang", "go test ./..."));
    assert_eq!(
        commands["lint"],
        declared("make lint", "Makefile target lint")
    );
    assert_contains(
        &detect_text(&repo),
        "- Test: `make test` (Makefile target test): it could not be judged: its variables expand to more than 64 KiB",
    );
}

#[test]
fn a_makefile_that_includes_past_the_cap_is_refused_by_name() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n")
        .file("Makefile", "include inc0.mk\n\ntest:\n\tgo test ./...\n");
    for level in 0..12 {
        repo.file(
            &format!("inc{level}.mk"),
            &format!("include inc{}.mk\n", level + 1),
        );
    }
    assert_eq!(
        detect_json(&repo)["commands"]["test"],
        fallback("golang", "go test ./...")
    );
    assert_contains(
        &detect_text(&repo),
        "- Test: `make test` (Makefile target test): it could not be judged: its variables come from more included files than prpd reads (64 files, 8 levels)",
    );
}

#[test]
fn a_sub_make_that_starts_a_container_is_refused() {
    let repo = TestRepo::new();
    repo.file(
        "setup.py",
        "from setuptools import setup\nsetup(name='app')\n",
    )
    .file("Makefile", "test:\n\t$(MAKE) -C ci test\n")
    .file(
        "ci/Makefile",
        "test:\n\tdocker compose run --rm app pytest\n",
    );
    let detection = detect_json(&repo);
    assert_eq!(detection["commands"]["test"], fallback("python", "pytest"));
}

#[test]
fn ruff_configured_to_fix_runs_with_no_fix() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[project]\nname = \"plugin\"\n\n[tool.ruff]\nfix = true\nline-length = 100\n",
    )
    .file("Makefile", "lint:\n\truff check src tests\n");
    let detection = detect_json(&repo);
    assert_eq!(
        detection["commands"]["lint"],
        declared("ruff check --no-fix .", "pyproject.toml [tool.ruff]")
    );
    assert_contains(
        &detect_text(&repo),
        "- Lint: `make lint` (Makefile target lint): it rewrites files (`ruff check` with `fix = true` in pyproject.toml)",
    );
}

#[test]
fn ruff_toml_that_fixes_also_changes_the_stack_default() {
    let repo = TestRepo::new();
    repo.file(
        "setup.py",
        "from setuptools import setup\nsetup(name='app')\n",
    )
    .file("ruff.toml", "fix = true\n");
    assert_eq!(
        detect_json(&repo)["commands"]["lint"],
        fallback("python", "ruff check --no-fix .")
    );
}

#[test]
fn a_lint_script_that_runs_the_fix_script_is_refused_and_lint_check_wins() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"scripts": {"lint": "npm run lint:fix", "lint:fix": "eslint --fix .", "lint:check": "eslint .", "test": "node --test"}}"#,
    );
    let detection = detect_json(&repo);
    assert_eq!(
        detection["commands"]["lint"],
        declared("npm run lint:check", "package.json scripts.lint:check")
    );
    assert_contains(
        &detect_text(&repo),
        "- Lint: `npm run lint` (package.json scripts.lint): it rewrites files (`lint:fix`)",
    );
}

#[test]
fn make_fmt_is_a_format_check_only_when_it_checks() {
    let rewriting = TestRepo::new();
    rewriting
        .file(
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
        )
        .file("Makefile", "fmt:\n\tcargo fmt --all\n");
    assert_eq!(
        detect_json(&rewriting)["commands"]["format_check"],
        fallback("rust", "cargo fmt --check")
    );

    let checking = TestRepo::new();
    checking
        .file(
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
        )
        .file("Makefile", "fmt:\n\tcargo fmt --all -- --check\n");
    assert_eq!(
        detect_json(&checking)["commands"]["format_check"],
        declared("make fmt", "Makefile target fmt")
    );
}

#[test]
fn a_ci_formatter_without_its_check_flag_runs_in_check_mode() {
    let repo = TestRepo::new();
    repo.file("pyproject.toml", "[project]\nname = \"app\"\n")
        .file(
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  style:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Format\n        run: |\n          black src tests\n          git diff --exit-code\n",
        );
    assert_eq!(
        detect_json(&repo)["commands"]["format_check"],
        declared(
            "black --check src tests",
            ".github/workflows/ci.yml step \"Format\""
        )
    );
}

#[test]
fn a_build_that_uploads_is_refused() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
    )
    .file(
        "Makefile",
        "build:\n\tpython -m build && twine upload dist/*\n",
    );
    assert_eq!(detect_json(&repo)["commands"]["build"], Value::Null);
    assert_contains(
        &detect_text(&repo),
        "- Build: `make build` (Makefile target build): it publishes (`twine upload`)",
    );
}

#[test]
fn a_python_build_is_what_the_project_runs_not_its_build_system_table() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"lib\"\n",
    );
    assert_eq!(detect_json(&repo)["commands"]["build"], Value::Null);
    repo.file(
        ".github/workflows/release.yml",
        "on: push\njobs:\n  dist:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Build\n        run: |\n          python -m pip install build\n          python -m build --sdist --wheel\n",
    );
    assert_eq!(
        detect_json(&repo)["commands"]["build"],
        declared(
            "python -m build --sdist --wheel",
            ".github/workflows/release.yml step \"Build\""
        )
    );
}

#[test]
fn make_all_builds_and_is_never_the_test_command() {
    let repo = TestRepo::new();
    repo.file(
        "Makefile",
        "CC ?= cc\nall: calc\ncalc: calc.c\n\t$(CC) -o calc calc.c\n\t./calc --self-test\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(commands["test"], Value::Null);
    assert_eq!(
        commands["build"],
        declared("make all", "Makefile target all")
    );
}

// --- The package manager's own exec, script-name synonyms ------------------------------------

#[test]
fn defaults_run_through_the_package_managers_own_exec() {
    let cases = [
        ("pnpm-lock.yaml", "{}", "pnpm exec eslint .", "pnpm test"),
        (
            "bun.lockb",
            "{}",
            "bunx --no-install eslint .",
            "bun run test",
        ),
        (
            "package-lock.json",
            r#"{"packageManager": "yarn@4.1.0"}"#,
            "yarn run eslint .",
            "yarn test",
        ),
        ("package-lock.json", "{}", "npx --no eslint .", "npm test"),
    ];
    for (lockfile, package_json, lint, test) in cases {
        let repo = TestRepo::new();
        repo.file("package.json", package_json).file(lockfile, "");
        let commands = &detect_json(&repo)["commands"];
        assert_eq!(
            commands["lint"],
            fallback("node_typescript", lint),
            "{lockfile} {package_json}"
        );
        assert_eq!(commands["test"], fallback("node_typescript", test));
    }
}

#[test]
fn script_name_synonyms_are_understood() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{"scripts": {"test": "vitest run", "check:lint": "eslint src", "check:types": "tsc --noEmit", "testformat": "prettier --check .", "format": "prettier --write ."}}"#,
    )
    .file("pnpm-lock.yaml", "");
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["lint"],
        declared("pnpm run check:lint", "package.json scripts.check:lint")
    );
    assert_eq!(
        commands["typecheck"],
        declared("pnpm run check:types", "package.json scripts.check:types")
    );
    assert_eq!(
        commands["format_check"],
        declared("pnpm run testformat", "package.json scripts.testformat")
    );

    let types = TestRepo::new();
    types.file(
        "package.json",
        r#"{"scripts": {"test": "ava", "test:types": "tsd", "lint:check": "xo"}}"#,
    );
    let commands = &detect_json(&types)["commands"];
    assert_eq!(
        commands["typecheck"],
        declared("npm run test:types", "package.json scripts.test:types")
    );
    assert_eq!(
        commands["lint"],
        declared("npm run lint:check", "package.json scripts.lint:check")
    );
}

// --- Python builds and tox ---------------------------------------------------------------

#[test]
fn poetry_project_builds_with_poetry_and_tox_in_pyproject_runs_the_tests() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[tool.poetry]\nname = \"lib\"\nversion = \"1.0.0\"\n\n[build-system]\nrequires = [\"poetry-core\"]\nbuild-backend = \"poetry.core.masonry.api\"\n\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[tox]\nenvlist = py3, lint\n\n[testenv]\ncommands = pytest {posargs}\n\n[testenv:lint]\ncommands = flake8 lib\n\"\"\"\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["build"],
        declared("poetry build", "pyproject.toml [tool.poetry]")
    );
    assert_eq!(
        commands["test"],
        declared("tox -e py", "pyproject.toml [tool.tox] [testenv]")
    );
    assert_eq!(
        commands["lint"],
        declared("tox -e lint", "pyproject.toml [tool.tox] env lint")
    );
}

#[test]
fn uv_project_builds_with_uv_and_native_tox_toml_is_read() {
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[project]\nname = \"app\"\n\n[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n",
    )
    .file("uv.lock", "version = 1\n")
    .file(
        "tox.toml",
        "env_list = [\"3.12\", \"type\"]\n\n[env_run_base]\ncommands = [[\"pytest\"]]\n\n[env.type]\ncommands = [[\"mypy\", \"src\"]]\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(commands["build"], declared("uv build", "uv.lock"));
    assert_eq!(
        commands["test"],
        declared("tox -e py", "tox.toml [testenv]")
    );
    assert_eq!(
        commands["typecheck"],
        declared("tox -e type", "tox.toml env type")
    );
}

// --- CI as prpd can run it -----------------------------------------------------------------

#[test]
fn ci_lines_lose_environment_prefixes_cross_targets_and_other_systems() {
    let repo = TestRepo::new();
    repo.file("Cargo.toml", "[package]\nname = \"tool\"\nversion = \"0.1.0\"\n")
        .file(
            ".github/workflows/ci.yml",
            "on: [push]\njobs:\n  windows:\n    runs-on: windows-latest\n    steps:\n      - run: cargo test --no-default-features\n  test:\n    runs-on: ${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, macos-latest]\n        target: [x86_64-unknown-linux-gnu]\n    steps:\n      - if: runner.os == 'macOS'\n        run: cargo build --features mac\n      - name: Test\n        run: RUST_BACKTRACE=1 cross test --locked --target ${{ matrix.target }}\n      - name: Lint\n        run: env RUSTFLAGS=-Dwarnings cargo clippy --all-targets\n",
        );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["test"],
        declared(
            "cargo test --locked",
            ".github/workflows/ci.yml step \"Test\""
        )
    );
    assert_eq!(
        commands["lint"],
        declared(
            "cargo clippy --all-targets",
            ".github/workflows/ci.yml step \"Lint\""
        )
    );
    assert_eq!(commands["build"], fallback("rust", "cargo build"));
}

#[test]
fn travis_and_sourcehut_files_are_read() {
    let travis = TestRepo::new();
    travis
        .file("setup.py", "from setuptools import setup\nsetup(name='app')\n")
        .file(
            ".travis.yml",
            "language: python\ninstall: pip install -e .\nscript:\n  - python -m pytest -q tests\n  - flake8 app\n",
        );
    let commands = &detect_json(&travis)["commands"];
    assert_eq!(
        commands["test"],
        declared("python -m pytest -q tests", ".travis.yml script")
    );
    assert_eq!(
        commands["lint"],
        declared("flake8 app", ".travis.yml script")
    );

    let sourcehut = TestRepo::new();
    sourcehut
        .file("go.mod", "module git.sr.ht/~someone/tool\n")
        .file(
            ".build.yml",
            "image: alpine/edge\npackages: [go]\nsources:\n  - https://git.sr.ht/~someone/tool\ntasks:\n  - test: |\n      cd tool\n      go test -race ./...\n",
        );
    assert_eq!(
        detect_json(&sourcehut)["commands"]["test"],
        declared("go test -race ./...", ".build.yml task test")
    );
}

// --- C and C++ -----------------------------------------------------------------------------

const CMAKE_PROJECT: &str = "cmake_minimum_required(VERSION 3.16)\nproject(calc C)\nenable_testing()\nadd_executable(calc_test calc_test.c)\nadd_test(NAME calc COMMAND calc_test)\n";

#[test]
#[ignore = "end-to-end tier: needs CMake and a C compiler; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn cmake_project_configures_builds_and_runs_ctest() {
    let repo = TestRepo::new();
    repo.file("CMakeLists.txt", CMAKE_PROJECT).file(
        "calc_test.c",
        "int add(int a, int b) { return a + b; }\nint main(void) { return add(2, 2) == 4 ? 0 : 1; }\n",
    );
    let detection = detect_json(&repo);
    assert_eq!(detection["stacks"], json!([{"id": "cmake", "path": "."}]));
    let test = "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure --no-tests=error";
    assert_eq!(detection["commands"]["test"], fallback("cmake", test));
    assert_eq!(
        detection["commands"]["build"],
        fallback("cmake", "cmake -S . -B build && cmake --build build")
    );
    assert!(
        which("cmake") && which("ctest"),
        "cmake and ctest are needed for this test: apt-get install cmake (.ci/run installs it)"
    );
    let output = run_shell(&repo, test);
    assert!(output.status.success(), "{output:?}");
    assert_contains(
        &String::from_utf8_lossy(&output.stdout),
        "100% tests passed",
    );
}

#[test]
fn meson_and_plain_make_c_projects() {
    let meson = TestRepo::new();
    meson.file(
        "meson.build",
        "project('calc', 'c')\nexe = executable('calc_test', 'calc_test.c')\ntest('calc', exe)\n",
    );
    let commands = &detect_json(&meson)["commands"];
    assert_eq!(
        commands["test"],
        fallback("meson", "meson setup build && meson test -C build")
    );

    let make = TestRepo::new();
    make.file("calc.c", "int main(void) { return 0; }\n").file(
        "Makefile",
        "CFLAGS += -Wall\nall: calc\ncalc: calc.c\n\t$(CC) $(CFLAGS) -o $@ $<\ncheck: calc\n\t./tests/run.sh\n",
    );
    let commands = &detect_json(&make)["commands"];
    assert_eq!(
        commands["test"],
        declared("make check", "Makefile target check")
    );
    assert_eq!(
        commands["build"],
        declared("make all", "Makefile target all")
    );
}

/// Runs `command` with `sh -c` in `repo`, as QA would.
#[expect(
    clippy::disallowed_methods,
    reason = "the test runs a discovered command itself, to prove it works on a real project"
)]
fn run_shell(repo: &TestRepo, command: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(repo.path())
        .output()
        .expect("run the discovered command")
}

/// Whether `program` is on PATH.
fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

// --- Sub-projects ----------------------------------------------------------------------------

fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "web/package.json",
        r#"{"scripts": {"test": "node -e \"process.exit(1)\"", "lint": "eslint src"}}"#,
    )
    .file("web/pnpm-lock.yaml", "")
    .file(
        "api/pyproject.toml",
        "[project]\nname = \"api\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    )
    .file(
        "api/tests/test_health.py",
        "def test_health():\n    assert 1 + 1 == 2\n",
    )
    .file(
        "qa-checklist.yml",
        "qa_checklist:\n  version: \"1.0.0\"\n  funcionalidade:\n    - id: F1\n      criterio: tests pass\n      validacao: exit_code == 0\n      comando: \"{detected_test_command}\"\n      blocking: true\n",
    );
    repo
}

#[test]
fn sub_projects_are_listed_with_their_own_commands() {
    let repo = monorepo();
    let detection = detect_json(&repo);
    assert_eq!(
        detection["subprojects"],
        json!([
            {
                "path": "web",
                "stacks": ["node_typescript"],
                "package_manager": "pnpm",
                "commands": {
                    "test": declared("cd web && pnpm test", "web/package.json scripts.test"),
                    "lint": declared("cd web && pnpm run lint", "web/package.json scripts.lint"),
                    "typecheck": fallback("node_typescript", "cd web && pnpm exec tsc --noEmit"),
                    "build": null,
                    "format_check": fallback("node_typescript", "cd web && pnpm exec prettier --check ."),
                    "complexity": fallback("node_typescript", "cd web && pnpm exec eslint . --rule 'complexity: [error, 10]'"),
                    "duplication": fallback("node_typescript", "cd web && pnpm exec jscpd --threshold 5 ."),
                },
            },
            {
                "path": "api",
                "stacks": ["python"],
                "package_manager": null,
                "commands": {
                    "test": declared("cd api && pytest", "api/pyproject.toml [tool.pytest.ini_options]"),
                    "lint": fallback("python", "cd api && ruff check ."),
                    "typecheck": fallback("python", "cd api && mypy ."),
                    "build": null,
                    "format_check": fallback("python", "cd api && ruff format --check ."),
                    "complexity": fallback("python", "cd api && radon cc . -a -nc"),
                    "duplication": fallback("python", "cd api && jscpd --threshold 5 ."),
                },
            },
        ])
    );
    let text = detect_text(&repo);
    assert_contains(&text, "## Sub-projects");
    assert_contains(&text, "### api (python; package manager: none)");
    assert_contains(
        &text,
        "| Test | `cd api && pytest` | api/pyproject.toml [tool.pytest.ini_options] |",
    );
    assert_contains(&text, "Gate it alone: `prpd qa --path api`");
}

#[test]
#[ignore = "end-to-end tier: needs pytest; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn qa_path_gates_one_sub_project() {
    let repo = monorepo();
    let (code, whole) = qa_json(&repo, &[]);
    assert_eq!(
        code, 1,
        "web's failing test decides the whole repository: {whole:#}"
    );
    assert_eq!(whole["checks"][0]["command"], "cd web && pnpm test");

    let (code, api) = qa_json(&repo, &["--path", "api"]);
    assert_eq!(api["checks"][0]["command"], "cd api && pytest", "{api:#}");
    assert_eq!(api["checks"][0]["status"], "pass", "{api:#}");
    assert_eq!(code, 0, "{api:#}");
}

#[test]
fn qa_path_outside_the_repository_is_a_usage_error() {
    let repo = monorepo();
    let output = repo
        .prpd()
        .args(["qa", "--repo"])
        .arg(repo.path())
        .args(["--path", "nope"])
        .output()
        .expect("run prpd qa");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        "--path nope: not a folder of the repository",
    );
}

// --- A fallback's failure says so ------------------------------------------------------------

#[test]
fn a_failing_fallback_says_prpd_guessed_it() {
    let repo = TestRepo::new();
    repo.file("go.mod", "module example.com/app\n").file(
        "qa-checklist.yml",
        "qa_checklist:\n  version: \"1.0.0\"\n  funcionalidade:\n    - id: L1\n      criterio: lint passes\n      validacao: exit_code == 0\n      comando: \"{detected_lint_command}\"\n      blocking: true\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1, "{report:#}");
    let lint = check(&report, "L1");
    assert_eq!(lint["status"], "fail", "{lint:#}");
    assert_contains(
        lint["detail"].as_str().expect("detail"),
        "`golangci-lint run` is a fallback prpd guessed (qa-tools-mapping.yml default (golang)): the project declares no lint command",
    );
}

// --- Nothing is downloaded -------------------------------------------------------------------

#[test]
fn an_npx_from_ci_never_downloads_and_its_missing_tool_is_named() {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        "{\"name\": \"pad\", \"scripts\": {\"test\": \"node --test\"}}\n",
    )
    .file(
        "test/pad.test.js",
        "const { test } = require(\"node:test\");\ntest(\"pads\", () => {});\n",
    )
    .file(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Types\n        run: npx tsc --noEmit\n",
    )
    .commit("pad");
    assert_eq!(
        detect_json(&repo)["commands"]["typecheck"],
        declared(
            "npx --no tsc --noEmit",
            ".github/workflows/ci.yml step \"Types\""
        )
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 1, "{report:#}");
    let types = check(&report, "C5");
    assert_eq!(types["status"], "fail", "{types:#}");
    assert_contains(
        types["detail"].as_str().expect("detail"),
        "the tool is missing: `tsc` is neither in node_modules/.bin nor on PATH, and the package manager's exec will not download it",
    );
    assert!(!repo.join("node_modules").exists());
}

#[test]
fn an_npx_inside_a_project_script_is_told_not_to_download_and_npm_not_to_check_for_updates() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  replace_builtin: true\n  funcionalidade:\n    - id: N1\n      criterio: npx never downloads\n      validacao: exit_code == 0\n      comando: \"echo npm_config_yes=$npm_config_yes update_notifier=$npm_config_update_notifier\"\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    let check = &report["checks"][0];
    assert_contains(
        check["output_tail"].as_str().expect("output"),
        "npm_config_yes=false update_notifier=false",
    );
}

// --- Healthy projects that discovery once turned into a REJECT -------------------------------

#[test]
fn an_environment_prefix_whose_value_is_a_command_substitution_is_dropped_whole() {
    // A reproducible-build release workflow, as many Python packages have it.
    let repo = TestRepo::new();
    repo.file(
        "pyproject.toml",
        "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n[project]\nname = \"wordstats\"\nversion = \"0.1.0\"\n",
    )
    .file(
        ".github/workflows/release.yml",
        "on:\n  push:\n    tags: ['v*']\njobs:\n  dist:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: python -m pip install build\n      - name: Build\n        run: SOURCE_DATE_EPOCH=$(git log -1 --pretty=%ct) python -m build\n      - name: Test\n        run: |\n          VERSION=`git describe --tags --always` PYTHONHASHSEED=0 python -m pytest -q\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["build"],
        declared(
            "python -m build",
            ".github/workflows/release.yml step \"Build\""
        )
    );
    assert_eq!(
        commands["test"],
        declared(
            "python -m pytest -q",
            ".github/workflows/release.yml step \"Test\""
        )
    );
}

#[test]
fn a_ci_release_test_run_is_the_plain_cargo_test() {
    let repo = TestRepo::new();
    repo.file(
        "Cargo.toml",
        "[package]\nname = \"numkit\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .file("src/lib.rs", "pub fn clamp(x: i32) -> i32 { x }\n")
    .file(
        ".github/workflows/ci.yml",
        "on: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: dtolnay/rust-toolchain@stable\n      - name: Test\n        run: cargo test --release --all-features\n      - name: Build\n        run: cargo build --release\n",
    );
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(
        commands["test"],
        declared(
            "cargo test --all-features",
            ".github/workflows/ci.yml step \"Test\""
        )
    );
    assert_eq!(
        commands["build"],
        declared(
            "cargo build --release",
            ".github/workflows/ci.yml step \"Build\""
        )
    );
}

#[test]
fn make_all_that_is_not_clearly_the_build_yields_to_the_toolchains_build() {
    // A Go service: `all` lints and tests; the build is the toolchain's.
    let go = TestRepo::new();
    go.file("go.mod", "module example.com/numkit\n\ngo 1.22\n").file(
        "Makefile",
        ".PHONY: all lint test\nall: lint test\n\nlint:\n\tgo vet ./...\n\ntest:\n\tgo test ./...\n",
    );
    let commands = &detect_json(&go)["commands"];
    assert_eq!(commands["build"], fallback("golang", "go build ./..."));
    assert_eq!(
        commands["test"],
        declared("make test", "Makefile target test")
    );

    // A Rust crate whose `all` also runs clippy and the tests; CI's build step still wins
    // over the default, as it would over any source after the Makefile.
    let rust = TestRepo::new();
    rust.file(
        "Cargo.toml",
        "[package]\nname = \"numkit\"\nversion = \"0.1.0\"\n",
    )
    .file(
        "Makefile",
        "all: check\n\tcargo build\ncheck:\n\tcargo clippy -- -D warnings\n\tcargo test\n",
    );
    assert_eq!(
        detect_json(&rust)["commands"]["build"],
        fallback("rust", "cargo build")
    );
    rust.file(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Build\n        run: cargo build --locked\n",
    );
    assert_eq!(
        detect_json(&rust)["commands"]["build"],
        declared(
            "cargo build --locked",
            ".github/workflows/ci.yml step \"Build\""
        )
    );

    // An `all` that only builds is the project's build and wins, as does a justfile's.
    let builds = TestRepo::new();
    builds.file("go.mod", "module example.com/app\n").file(
        "Makefile",
        "BIN := bin/app\nall:\n\tgo build -trimpath -o $(BIN) ./cmd/app\n",
    );
    assert_eq!(
        detect_json(&builds)["commands"]["build"],
        declared("make all", "Makefile target all")
    );
    let just = TestRepo::new();
    just.file("go.mod", "module example.com/app\n").file(
        "justfile",
        "all: test\n\tgo build ./...\n\ntest:\n\tgo test ./...\n",
    );
    assert_eq!(
        detect_json(&just)["commands"]["build"],
        fallback("golang", "go build ./...")
    );
}

#[test]
fn npms_placeholder_test_script_is_no_test_command() {
    // What `npm init -y` writes.
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        "{\n  \"name\": \"wordstats\",\n  \"version\": \"1.0.0\",\n  \"main\": \"index.js\",\n  \"scripts\": {\n    \"test\": \"echo \\\"Error: no test specified\\\" && exit 1\",\n    \"lint\": \"eslint .\"\n  },\n  \"license\": \"ISC\"\n}\n",
    )
    .file("index.js", "module.exports = {};\n");
    let commands = &detect_json(&repo)["commands"];
    assert_eq!(commands["test"], Value::Null);
    assert_eq!(
        commands["lint"],
        declared("npm run lint", "package.json scripts.lint")
    );
    assert_contains(&detect_text(&repo), "| Test | Not found |");

    // Once the project writes a test script, it is the test command.
    repo.file(
        "package.json",
        "{\"name\": \"wordstats\", \"scripts\": {\"test\": \"node --test\"}}\n",
    );
    assert_eq!(
        detect_json(&repo)["commands"]["test"],
        declared("npm test", "package.json scripts.test")
    );
}
