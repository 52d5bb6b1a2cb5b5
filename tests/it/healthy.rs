//! A healthy project passes: `prpd qa` with no configuration APPROVEs a small, well-kept project
//! of each stack (Python with pytest and ruff, an npm package on `node --test` without eslint,
//! a Rust crate with cargo test and clippy, a Go module with go test, a C library with CMake and
//! ctest), and REJECTs its broken twin, the same project with one failing test. The tools are
//! the real ones on the machine; `.ci/run` installs pytest, ruff, Go and CMake.

use crate::util::{TestRepo, check, qa_json};

/// Whether `program` runs (`program --version`, or Go's `program version`, exits 0).
#[expect(
    clippy::disallowed_methods,
    reason = "the test asks the machine which toolchains it has, outside prpd"
)]
fn installed(program: &str) -> bool {
    ["--version", "version"].iter().any(|argument| {
        std::process::Command::new(program)
            .arg(argument)
            .output()
            .is_ok_and(|output| output.status.success())
    })
}

pub(crate) fn require(program: &str, install: &str) {
    assert!(
        installed(program),
        "`{program}` is needed for this test: {install} (.ci/run installs it)"
    );
}

/// The healthy project gets APPROVE with its tests run and its documentation checks not
/// applicable (no change is under review); the broken twin gets REJECT from F1 alone.
fn approves_healthy_and_rejects_broken(
    build: impl Fn(&TestRepo),
    break_a_test: impl Fn(&TestRepo),
    test_command: &str,
    passing: f64,
) {
    let repo = TestRepo::new();
    build(&repo);
    repo.commit("healthy project");
    let (code, report) = qa_json(&repo, &[]);
    let failed: Vec<String> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "fail" || check["status"] == "warn")
        .map(|check| format!("{}: {}", check["id"], check["detail"]))
        .collect();
    assert_eq!(report["verdict"], "APPROVE", "{failed:#?}\n{report:#}");
    assert_eq!(code, 0);
    assert!(failed.is_empty(), "{failed:#?}");
    let tests = check(&report, "F1");
    assert_eq!(tests["status"], "pass");
    assert_eq!(tests["command"], test_command);
    assert_eq!(tests["metrics"]["tests_passed"], passing, "{tests:#}");
    for id in ["D1", "D2", "D5"] {
        let docs = check(&report, id);
        assert_eq!(docs["status"], "skip", "{docs:#}");
        assert!(
            docs["detail"]
                .as_str()
                .expect("detail")
                .starts_with("not applicable: no change is under review"),
            "{docs:#}"
        );
    }

    break_a_test(&repo);
    repo.commit("a failing test");
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(report["verdict"], "REJECT", "{report:#}");
    assert_eq!(code, 1);
    assert_eq!(check(&report, "F1")["status"], "fail");
    assert_eq!(check(&report, "F1")["metrics"]["tests_failed"], 1.0);
    assert_eq!(report["blocking_failed"], 1, "{report:#}");
}

#[test]
#[ignore = "end-to-end tier: needs pytest and ruff; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn python_project_with_pytest_and_ruff() {
    require("pytest", "pip install pytest");
    require("ruff", "pip install ruff");
    approves_healthy_and_rejects_broken(
        |repo| {
            repo.file(
                "pyproject.toml",
                "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
                 [project]\nname = \"slugify-lite\"\nversion = \"1.0.0\"\nrequires-python = \">=3.8\"\n\n\
                 [tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n\n\
                 [tool.ruff]\nline-length = 100\n",
            )
            .file(
                "slugify_lite/__init__.py",
                "\"\"\"Turn titles into URL slugs.\"\"\"\n\nimport re\n\n\n\
                 def slugify(title: str) -> str:\n    \"\"\"Lowercase words of `title` joined by dashes.\"\"\"\n\
                 \x20   words = re.findall(r\"[a-z0-9]+\", title.lower())\n    return \"-\".join(words)\n",
            )
            .file(
                "tests/test_slugify.py",
                "from slugify_lite import slugify\n\n\n\
                 def test_words_are_joined_by_dashes():\n    assert slugify(\"Hello, World\") == \"hello-world\"\n\n\n\
                 def test_digits_are_kept():\n    assert slugify(\"Top 10 tips\") == \"top-10-tips\"\n",
            )
            .file(
                "README.rst",
                "slugify-lite\n============\n\nTurn titles into URL slugs.\n",
            )
            .file(
                "CHANGES.rst",
                "Changes\n=======\n\n1.0.0\n-----\n\n* First release.\n",
            )
            .file(".gitignore", "__pycache__/\n.pytest_cache/\n.ruff_cache/\n");
        },
        |repo| {
            repo.file(
                "tests/test_broken.py",
                "from slugify_lite import slugify\n\n\n\
                 def test_spaces_become_underscores():\n    assert slugify(\"a b\") == \"a_b\"\n",
            );
        },
        "pytest",
        2.0,
    );
}

#[test]
fn npm_package_on_node_test_without_eslint() {
    require("node", "Node 18+");
    approves_healthy_and_rejects_broken(
        |repo| {
            repo.file(
                "package.json",
                "{\n  \"name\": \"pad-lite\",\n  \"version\": \"1.0.0\",\n  \"type\": \"module\",\n  \
                 \"main\": \"index.js\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n",
            )
            .file(
                "index.js",
                "/** Pads `text` on the left with `fill` up to `width` characters. */\n\
                 export function padStart(text, width, fill = \" \") {\n  let padded = String(text);\n  \
                 while (padded.length < width) {\n    padded = fill + padded;\n  }\n  return padded;\n}\n",
            )
            .file(
                "test/pad.test.js",
                "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
                 import { padStart } from \"../index.js\";\n\n\
                 test(\"pads to the width\", () => {\n  assert.equal(padStart(\"7\", 3, \"0\"), \"007\");\n});\n\n\
                 test(\"leaves long text alone\", () => {\n  assert.equal(padStart(\"long\", 2), \"long\");\n});\n",
            )
            .file("README.md", "# pad-lite\n\nPads strings.\n")
            .file("CHANGELOG.md", "# Changelog\n\n## 1.0.0\n\n- First release.\n");
        },
        |repo| {
            repo.file(
                "test/broken.test.js",
                "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\
                 import { padStart } from \"../index.js\";\n\n\
                 test(\"pads on the right\", () => {\n  assert.equal(padStart(\"7\", 2, \"0\"), \"70\");\n});\n",
            );
        },
        "npm test",
        2.0,
    );
}

#[test]
fn rust_crate_with_cargo_test_and_clippy() {
    require("cargo", "a Rust toolchain");
    approves_healthy_and_rejects_broken(
        |repo| {
            repo.file(
                "Cargo.toml",
                "[package]\nname = \"tiny-stats\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[dependencies]\n",
            )
            .file(
                "src/lib.rs",
                "//! Small statistics helpers.\n\n\
                 /// The arithmetic mean of `values`, or `None` when there are none.\n\
                 pub fn mean(values: &[f64]) -> Option<f64> {\n    if values.is_empty() {\n        return None;\n    }\n\
                 \x20   Some(values.iter().sum::<f64>() / values.len() as f64)\n}\n\n\
                 #[cfg(test)]\nmod tests {\n    use super::mean;\n\n    #[test]\n    fn mean_of_three() {\n\
                 \x20       assert_eq!(mean(&[1.0, 2.0, 3.0]), Some(2.0));\n    }\n\n    #[test]\n    fn mean_of_nothing() {\n\
                 \x20       assert_eq!(mean(&[]), None);\n    }\n}\n",
            )
            .file("README.md", "# tiny-stats\n\nSmall statistics helpers.\n")
            .file(".gitignore", "/target\n");
        },
        |repo| {
            repo.file(
                "tests/broken.rs",
                "#[test]\nfn mean_of_one() {\n    assert_eq!(tiny_stats::mean(&[4.0]), Some(5.0));\n}\n",
            );
        },
        "cargo test",
        2.0,
    );
}

#[test]
#[ignore = "end-to-end tier: needs Go; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn go_module_with_go_test() {
    require("go", "apt-get install golang-go");
    approves_healthy_and_rejects_broken(
        |repo| {
            repo.file("go.mod", "module example.com/tinymath\n\ngo 1.19\n")
                .file(
                    "tinymath.go",
                    "// Package tinymath has small integer helpers.\npackage tinymath\n\n\
                     // Clamp limits value to the range [low, high].\nfunc Clamp(value, low, high int) int {\n\
                     \tif value < low {\n\t\treturn low\n\t}\n\tif value > high {\n\t\treturn high\n\t}\n\treturn value\n}\n",
                )
                .file(
                    "tinymath_test.go",
                    "package tinymath\n\nimport \"testing\"\n\n\
                     func TestClampBelow(t *testing.T) {\n\tif got := Clamp(-5, 0, 10); got != 0 {\n\
                     \t\tt.Fatalf(\"Clamp(-5, 0, 10) = %d, want 0\", got)\n\t}\n}\n\n\
                     func TestClampInside(t *testing.T) {\n\tif got := Clamp(5, 0, 10); got != 5 {\n\
                     \t\tt.Fatalf(\"Clamp(5, 0, 10) = %d, want 5\", got)\n\t}\n}\n",
                )
                .file("README.md", "# tinymath\n\nSmall integer helpers.\n");
        },
        |repo| {
            repo.file(
                "broken_test.go",
                "package tinymath\n\nimport \"testing\"\n\n\
                 func TestClampAbove(t *testing.T) {\n\tif got := Clamp(50, 0, 10); got != 50 {\n\
                 \t\tt.Fatalf(\"Clamp(50, 0, 10) = %d, want 50\", got)\n\t}\n}\n",
            );
        },
        "go test ./...",
        // prpd runs the test command with `GOFLAGS=-v`, so go names each test rather than
        // printing one `ok` line per package.
        2.0,
    );
}

/// The CMakeLists.txt of the C library, with `extra` test declarations at its end.
fn cmake_lists(extra: &str) -> String {
    format!(
        "cmake_minimum_required(VERSION 3.16)\nproject(tinymean C)\n\
         add_library(tinymean src/tinymean.c)\ntarget_include_directories(tinymean PUBLIC src)\n\
         enable_testing()\nadd_executable(test_mean tests/test_mean.c)\n\
         target_link_libraries(test_mean tinymean)\n\
         add_test(NAME mean_of_three COMMAND test_mean three)\n\
         add_test(NAME mean_of_one COMMAND test_mean one)\n{extra}"
    )
}

#[test]
#[ignore = "end-to-end tier: needs CMake and a C compiler; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn c_library_with_cmake_and_ctest() {
    require("cmake", "apt-get install cmake");
    require("gcc", "apt-get install gcc");
    approves_healthy_and_rejects_broken(
        |repo| {
            repo.file("CMakeLists.txt", &cmake_lists(""))
                .file(
                    "src/tinymean.h",
                    "/* The arithmetic mean of `count` values; 0 for none. */\n\
                     double tm_mean(const double *values, int count);\n",
                )
                .file(
                    "src/tinymean.c",
                    "#include \"tinymean.h\"\n\n\
                     double tm_mean(const double *values, int count) {\n    double sum = 0;\n\
                     \x20   for (int i = 0; i < count; i++) {\n        sum += values[i];\n    }\n\
                     \x20   return count ? sum / count : 0;\n}\n",
                )
                .file(
                    "tests/test_mean.c",
                    "#include <string.h>\n#include \"tinymean.h\"\n\n\
                     int main(int argc, char **argv) {\n    if (argc < 2) {\n        return 2;\n    }\n\
                     \x20   if (strcmp(argv[1], \"three\") == 0) {\n        double values[] = {1, 2, 3};\n\
                     \x20       return tm_mean(values, 3) == 2 ? 0 : 1;\n    }\n\
                     \x20   if (strcmp(argv[1], \"one\") == 0) {\n        double values[] = {4};\n\
                     \x20       return tm_mean(values, 1) == 4 ? 0 : 1;\n    }\n\
                     \x20   if (strcmp(argv[1], \"two\") == 0) {\n        double values[] = {1, 2};\n\
                     \x20       return tm_mean(values, 2) == 2 ? 0 : 1;\n    }\n    return 2;\n}\n",
                )
                .file("README.md", "# tinymean\n\nThe arithmetic mean in C.\n")
                .file(".gitignore", "/build/\n");
        },
        |repo| {
            // The mean of 1 and 2 is 1.5, not 2: one of three tests fails.
            repo.file(
                "CMakeLists.txt",
                &cmake_lists("add_test(NAME mean_of_two COMMAND test_mean two)\n"),
            );
        },
        "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure --no-tests=error",
        // Its build runs first, alone: the test command builds into the same `build/`, and the
        // two racing in it broke the library's archive.
        2.0,
    );
}
