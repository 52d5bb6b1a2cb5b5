//! Measurement depends only on the tree: things an agent can leave outside the tracked code
//! (a `.pth` file in the user's site-packages, a stale `__pycache__` that holds a function the
//! source lacks) must not make a missing feature pass. Each attack runs against the same small
//! Python repository as an honest control that must still pass.

use std::path::Path;

use serde_json::Value;

use crate::util::TestRepo;

/// The test runner of the fixture: checks `calc.multiply` and prints a plain tally.
const RUN_TESTS: &str = "import calc\n\
passed = failed = 0\n\
try:\n    assert calc.multiply(6, 7) == 42\n    passed += 1\nexcept Exception:\n    failed += 1\n\
print(f\"{passed} passed, {failed} failed\")\n\
raise SystemExit(1 if failed else 0)\n";

const CALC_WITHOUT: &str = "def add(a, b):\n    return a + b\n";
const CALC_WITH: &str =
    "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n";

fn python_repo(calc: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file("calc.py", calc)
        .file("run_tests.py", RUN_TESTS)
        .file("Makefile", "test:\n\tpython3 run_tests.py\n")
        .file(
            "qa-checklist.yml",
            "qa_checklist:\n  version: \"1.0.0\"\n  replace_builtin: true\n  funcionalidade:\n    - id: F1\n      criterio: the tests pass\n      validacao: exit_code == 0 AND tests_failed == 0\n      comando: \"{detected_test_command}\"\n      blocking: true\n",
        )
        .commit("calc");
    repo
}

/// Runs `prpd qa --json` with `home` as the user's home and returns the verdict.
fn verdict(repo: &TestRepo, home: &Path) -> String {
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .env("HOME", home)
        .env_remove("PYTHONNOUSERSITE")
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .env_remove("PYTHONPYCACHEPREFIX")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run prpd");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    report["verdict"].as_str().expect("a verdict").to_owned()
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test asks the real python3 where its user site-packages are"
)]
fn python_user_site(home: &Path) -> std::path::PathBuf {
    let output = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')",
        ])
        .output()
        .expect("python3 runs");
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    home.join(format!(".local/lib/python{version}/site-packages"))
}

#[test]
fn a_pth_file_in_the_users_home_does_not_make_a_missing_feature_pass() {
    let home = tempfile::tempdir().expect("home");
    let site = python_user_site(home.path());
    std::fs::create_dir_all(&site).expect("mkdir site-packages");
    let hook = [
        "import builtins",
        "_real = builtins.__import__",
        "def _import(name, *args, **kwargs):",
        "    module = _real(name, *args, **kwargs)",
        "    if name == 'calc' and not hasattr(module, 'multiply'):",
        "        module.multiply = lambda a, b: a * b",
        "    return module",
        "builtins.__import__ = _import",
        "",
    ];
    std::fs::write(site.join("prpd_attack.py"), hook.join("\n")).expect("write the hook");
    std::fs::write(site.join("prpd-attack.pth"), "import prpd_attack\n").expect("write .pth");

    let attacked = python_repo(CALC_WITHOUT);
    assert_eq!(verdict(&attacked, home.path()), "REJECT");

    let honest = python_repo(CALC_WITH);
    assert_eq!(verdict(&honest, home.path()), "APPROVE");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test compiles the stale bytecode with the real python3"
)]
fn a_stale_unchecked_pycache_does_not_make_a_missing_feature_pass() {
    let home = tempfile::tempdir().expect("home");
    let attacked = python_repo(CALC_WITH);
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import py_compile; py_compile.compile('calc.py', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
        ])
        .current_dir(attacked.path())
        .status()
        .expect("python3 runs");
    assert!(status.success());
    attacked.file("calc.py", CALC_WITHOUT);
    assert_eq!(verdict(&attacked, home.path()), "REJECT");

    let honest = python_repo(CALC_WITH);
    assert_eq!(verdict(&honest, home.path()), "APPROVE");
}
