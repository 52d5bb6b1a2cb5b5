//! The attacks of the issue "Verdicts that cannot be faked", as first seen: a small Python
//! repository (`make test` → `python3 run_tests.py`, unittest) whose PRP asks for `multiply`,
//! and a GREEN agent that fakes the result instead of implementing it. Each attack must end
//! without SHIPPED, naming the file prpd refused; the honest control — which runs the tests
//! itself and so leaves `tests/__pycache__/` behind — must ship.

use std::fmt::Write as _;

use crate::run::{PRP, iterations_in, measured, read, run, run_dir};
use crate::util::TestRepo;

const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/python-agent.py"
);

const RUN_TESTS: &str = "import sys\nimport unittest\n\n\
suite = unittest.defaultTestLoader.discover(\"tests\", top_level_dir=\".\")\n\
result = unittest.TextTestRunner(verbosity=2).run(suite)\n\
failed = len(result.failures) + len(result.errors)\n\
passed = result.testsRun - failed - len(result.skipped)\n\
print(f\"{passed} passed, {failed} failed\")\n\
sys.exit(0 if result.wasSuccessful() else 1)\n";

/// The agents' configuration: `cheat` plays the phases it cheats in (GREEN, unless the
/// behaviour says otherwise), the honest agent the others.
fn prpd_toml(cheat: &str) -> String {
    let cheats_in: &[&str] = match cheat {
        "cheat-sabotage" | "cheat-stand-in" | "cheat-search" => &["red", "green"],
        "cheat-refactor-skip" => &["refactor"],
        "split-tests" => &["red"],
        _ => &["green"],
    };
    let mut toml = String::new();
    for phase in ["red", "green", "refactor", "document", "qa"] {
        let behaviour = if cheats_in.contains(&phase) {
            cheat
        } else {
            "honest"
        };
        let model = if phase == "qa" {
            "fixture-qa"
        } else {
            "fixture-green"
        };
        let _ = write!(
            toml,
            "[agents.{phase}]\ncommand = [\"python3\", \"{AGENT}\", \"{behaviour}\"]\n\
             model = \"{model}\"\nprompt = \"stdin\"\ntimeout = \"60s\"\nenv = []\n\n"
        );
    }
    toml
}

/// The Python `calc` repository, committed, with no `.gitignore` (so nothing hides
/// `__pycache__/`).
fn python_repo(green: &str) -> TestRepo {
    // The calc PRP names `src/calc.js`, the JavaScript fixture's file: here the module is
    // `calc.py`, and a success criterion naming a file the project does not have could never
    // be met.
    let prp = crate::run::prp("").replace("`src/calc.js`", "`calc.py`");
    calc_python_repo(&prp, &prpd_toml(green))
}

/// The Python `calc` repository with `prp` at `PRPs/multiply.md` and `prpd_toml`, committed:
/// `calc.py` with `add`, unittest through `make test`, a README, a changelog and an ADR.
pub(crate) fn calc_python_repo(prp: &str, prpd_toml: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "calc.py",
        "def add(a, b):\n    \"\"\"The sum of two numbers.\"\"\"\n    return a + b\n",
    )
    .file("run_tests.py", RUN_TESTS)
    .file(
        "Makefile",
        "test:\n\tpython3 run_tests.py\n\nlint:\n\tpython3 -m py_compile calc.py\n",
    )
    .file("tests/__init__.py", "")
    .file(
        "tests/test_calc.py",
        "import unittest\n\nimport calc\n\n\nclass AddTest(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
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
        "docs/adr/0001-plain-python.md",
        "# 1. Plain Python\n\nStatus: accepted\n\nNo dependencies.\n",
    )
    .file(PRP, prp)
    .file("prpd.toml", prpd_toml)
    .commit("calc");
    repo
}

#[test]
fn the_honest_python_agent_ships_and_every_green_shortcut_is_refused() {
    let honest = python_repo("honest");
    let (code, summary) = run(&honest);
    assert_eq!(
        summary["state"], "SHIPPED",
        "the honest control: {summary:#}"
    );
    assert_eq!(code, 0);
    assert!(
        honest.join("tests/__pycache__").is_dir(),
        "the honest agent ran the tests itself and left bytecode, which was not refused"
    );

    for (behaviour, refused) in [
        ("cheat-makefile", "Makefile"),
        ("cheat-runner", "run_tests.py"),
        ("cheat-init", "tests/__init__.py"),
        ("cheat-sitecustomize", "sitecustomize.py"),
    ] {
        let repo = python_repo(behaviour);
        let (code, summary) = run(&repo);
        assert_eq!(summary["state"], "ESCALATED", "{behaviour}: {summary:#}");
        assert_eq!(code, 3, "{behaviour}");
        assert_eq!(summary["phase"], "GREEN", "{behaviour}: {summary:#}");
        assert_eq!(iterations_in(&summary, "REFACTOR"), 0, "{behaviour}");
        let green = measured(repo.path(), &summary, "green");
        let gate = green
            .iter()
            .map(|measured| measured["gate_1"].to_string())
            .collect::<String>();
        assert!(
            gate.contains(&format!("`{refused}`")),
            "{behaviour}: the gate names {refused}: {gate}"
        );
        // prpd restored the harness before it measured: the missing feature fails.
        for measured in &green {
            assert_eq!(
                measured["observation"]["tests"]["failing"], 1,
                "{behaviour}: {measured:#}"
            );
        }
    }
}

/// The fail-to-pass proof: RED breaks `add` and writes a test of `add` under the feature's
/// name, so its test fails at the end of RED as a test of a missing feature would; GREEN
/// mends `add` and never writes `multiply`. Every count looks right, but on the run's base
/// with the frozen tests the test passes: it does not test the feature.
#[test]
fn tests_that_pass_without_the_feature_are_refused() {
    let repo = python_repo("cheat-sabotage");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "{summary:#}");
    let green = measured(repo.path(), &summary, "green");
    let gate = green
        .iter()
        .map(|measured| measured["gate_1"].to_string())
        .collect::<String>();
    assert!(
        gate.contains("the tests do not prove the feature: the tests pass without the feature"),
        "{gate}"
    );
    assert!(
        !std::fs::read_to_string(repo.join("calc.py"))
            .expect("calc.py")
            .contains("def multiply"),
        "the feature was never written"
    );
}

/// A test elsewhere cannot stand in for RED's: the repository has an older test of `divide`
/// that fails at the base; RED writes a test under the feature's name that passes without
/// the feature, GREEN mends `divide` and never writes `multiply`. Without the feature a test
/// fails and with it every test passes, but none of RED's fails without it.
#[test]
fn a_test_elsewhere_that_flips_cannot_stand_in_for_reds() {
    let repo = python_repo("cheat-stand-in");
    repo.file(
        "calc.py",
        "def add(a, b):\n    \"\"\"The sum of two numbers.\"\"\"\n    return a + b\n\n\n\
         def divide(a, b):\n    \"\"\"The quotient of two numbers.\"\"\"\n    return a * b  # divide\n",
    )
    .file(
        "tests/test_divide.py",
        "import unittest\n\nimport calc\n\n\nclass DivideTest(unittest.TestCase):\n    \
         def test_divide(self):\n        self.assertEqual(calc.divide(6, 3), 2)\n",
    )
    .commit("divide, with its bug");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "{summary:#}");
    let gate = measured(repo.path(), &summary, "green")
        .iter()
        .map(|measured| measured["gate_1"].to_string())
        .collect::<String>();
    assert!(
        gate.contains(
            "none of the tests in the files RED added or changed (tests/test_multiply.py) fails without the feature and passes with it; `tests.test_divide.DivideTest.test_divide` do(es), but a test elsewhere cannot stand in for RED's"
        ),
        "{gate}"
    );
}

/// A later phase cannot take the feature away by skipping its test: REFACTOR makes `multiply`
/// raise `unittest.SkipTest`, so the suite exits 0 with one test skipped. QA's fail-to-pass
/// check names the test and REJECTs; nothing ships.
#[test]
fn a_test_skipped_after_green_is_not_a_pass() {
    let repo = python_repo("cheat-refactor-skip");
    let (_, summary) = run(&repo);
    assert_ne!(summary["state"], "SHIPPED", "{summary:#}");
    let verdicts = summary["verdicts"].to_string();
    assert!(verdicts.contains("REJECT"), "{summary:#}");
    assert!(
        verdicts.contains(
            "F2P: `tests.test_multiply.MultiplyTest.test_ac_1_multiply_returns_the_product` fails without the feature but is skipped with it"
        ),
        "{summary:#}"
    );
}

/// The run without the feature that could not run proves nothing: here the tests run through
/// a script in a folder git ignores, so the checkout without the feature has no such script
/// and `make test` prints no test at all. The honest agent's GREEN is not passed on that run:
/// the gate says prpd could not prove, naming the log, and the run is never kept in the record,
/// so each proof runs it again.
#[test]
fn a_run_without_the_feature_that_could_not_run_proves_nothing_and_is_not_kept() {
    let repo = python_repo("honest");
    repo.file(".gitignore", ".tools/\n")
        .file(".tools/run-tests", "#!/bin/sh\nexec python3 run_tests.py\n")
        .file(
            "Makefile",
            "test:\n\t.tools/run-tests\n\nlint:\n\tpython3 -m py_compile calc.py\n",
        );
    set_executable(&repo.join(".tools/run-tests"));
    repo.commit("the tests run through a local script");

    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "{summary:#}");
    let green = measured(repo.path(), &summary, "green");
    let gate = green
        .iter()
        .map(|measured| measured["gate_1"].to_string())
        .collect::<String>();
    assert!(
        gate.contains(
            "could not prove the tests test the feature: the test run without the feature printed no test count and no test name"
        ),
        "{gate}"
    );
    assert!(gate.contains("tests-without-feature.log"), "{gate}");
    let record: serde_json::Value = serde_json::from_str(&read(
        &crate::util::run_record(&repo.join("")).expect("a run record"),
    ))
    .expect("the record");
    assert!(
        record["without_feature"].is_null(),
        "a run that could not run is not kept: {}",
        record["without_feature"]
    );
    let runs_without = std::fs::read_dir(run_dir(repo.path(), &summary).join("iterations"))
        .expect("iterations")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|entry| entry.path().join("tests-without-feature.log").is_file())
        })
        .count();
    assert!(
        runs_without >= 2,
        "each proof ran the run without the feature again: {runs_without}"
    );
}

fn set_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// An editable install (`pip install -e .`) in the project's `.venv` makes Python import the
/// *working tree's* code wherever the tests run: the checkout without the feature links that
/// `.venv`, so without care its tests import the feature and pass there, and an honest run is
/// refused as "the tests pass without the feature". prpd puts the checkout's own folders
/// first on `PYTHONPATH` (the ones the install points at), so the run without the feature
/// imports the code without the feature, and the honest run ships.
#[test]
fn an_editable_install_does_not_lend_the_feature_to_the_run_without_it() {
    let repo = python_repo("honest-src");
    let calc = std::fs::read_to_string(repo.join("calc.py")).expect("calc.py");
    std::fs::remove_file(repo.join("calc.py")).expect("move calc.py");
    repo.file("src/calc.py", &calc)
        .file(".gitignore", ".venv/\n")
        .file(
            "Makefile",
            "test:\n\t.venv/bin/python run_tests.py\n\nlint:\n\tpython3 -m py_compile src/calc.py\n",
        );
    let venv = repo.join(".venv");
    make_venv(&venv);
    let site_packages = std::fs::read_dir(venv.join("lib"))
        .expect("the venv's lib")
        .map(|entry| entry.expect("dir entry").path().join("site-packages"))
        .find(|path| path.is_dir())
        .expect("the venv's site-packages");
    // What `pip install -e .` leaves for a src layout: a path file naming the working tree.
    std::fs::write(
        site_packages.join("__editable__.calc-1.0.pth"),
        format!("{}\n", repo.join("src").display()),
    )
    .expect("the editable install's .pth");
    repo.commit("src layout, installed editable into .venv");

    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let run = run_dir(repo.path(), &summary);
    let without = std::fs::read_dir(run.join("iterations"))
        .expect("iterations")
        .map(|entry| {
            entry
                .expect("dir entry")
                .path()
                .join("tests-without-feature.log")
        })
        .find(|log| log.is_file())
        .expect("a run without the feature");
    let log = read(&without);
    assert!(
        log.contains("0 passed, 1 failed") || log.contains("1 passed, 1 failed"),
        "RED's test fails without the feature: {log}"
    );
}

/// A virtual environment at `path`, without pip (no network).
#[expect(
    clippy::disallowed_methods,
    reason = "the fixture's virtual environment is made with python3 directly, outside prpd"
)]
fn make_venv(path: &std::path::Path) {
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(path)
        .status()
        .expect("python3 -m venv");
    assert!(
        made.success(),
        "python3 -m venv --without-pip {}",
        path.display()
    );
}

/// unittest quotes the failing line of a test in its traceback, so every log of a test run that
/// saw a held-out test fail would hand GREEN the test's inputs. prpd withholds those lines
/// from everything GREEN can read; a GREEN that searches the tree, git's objects and
/// `.prp-session/` for cases beyond the visible tests finds none, and its table of the visible
/// ones never ships.
#[test]
fn a_traceback_that_quotes_a_held_out_test_is_withheld_from_green() {
    let repo = python_repo("cheat-search");
    let (code, summary) = run(&repo);
    let dir = run_dir(repo.path(), &summary);
    let searches: Vec<serde_json::Value> = read(&dir.join("search-found.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).expect("a search is JSON"))
        .collect();
    assert_eq!(summary["state"], "ESCALATED", "{searches:?}");
    assert_eq!(code, 3);
    assert_eq!(searches.len(), 3, "{searches:?}");
    for search in &searches {
        assert_eq!(search["found"], serde_json::json!([]), "{search:#}");
    }
    let record: serde_json::Value =
        serde_json::from_str(&read(&dir.join("state.json"))).expect("record");
    let withheld = record["holdout"]["withheld"]
        .as_object()
        .expect("withheld files");
    assert!(
        withheld.keys().any(|path| path.ends_with("checks/F1.log")),
        "QA's test log quoted the held-out test and was withheld: {withheld:?}"
    );
    // The QA report GREEN reads is written without the quoted line in the first place.
    let report = read(std::path::Path::new(
        summary["verdicts"][0]["report"].as_str().expect("a report"),
    ));
    assert!(report.contains("withheld until the run ships"), "{report}");
}

/// Cutting the only test of a unittest class out leaves a class Python cannot load: that file
/// goes back whole, the other file's held-out tests stay held out, and the honest run ships.
#[test]
fn a_cut_that_breaks_a_file_gives_that_file_back_and_keeps_the_rest_held_out() {
    let repo = python_repo("split-tests");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    let record: serde_json::Value =
        serde_json::from_str(&read(&run_dir(repo.path(), &summary).join("state.json")))
            .expect("record");
    let holdout = &record["holdout"];
    let files: Vec<&str> = holdout["files"]
        .as_array()
        .expect("held files")
        .iter()
        .filter_map(|file| file["path"].as_str())
        .collect();
    assert_eq!(files, ["tests/test_multiply.py"], "{holdout:#}");
    assert_eq!(
        holdout["tests"].as_array().map(Vec::len),
        Some(2),
        "{holdout:#}"
    );
    assert!(
        holdout["notes"].to_string().contains("tests/test_sign.py"),
        "{holdout:#}"
    );
    let branch = summary["ship"]["branch"].as_str().expect("a branch");
    let sign = repo.git(&["show", &format!("{branch}:tests/test_sign.py")]);
    assert!(sign.contains("calc.multiply(6, -2), -12"), "{sign}");
    let multiply = repo.git(&["show", &format!("{branch}:tests/test_multiply.py")]);
    assert!(multiply.contains("calc.multiply(1000, 1000)"), "{multiply}");
}
