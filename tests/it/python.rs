//! The attacks of the issue "Verdicts that cannot be faked", as first seen: a small Python
//! repository (`make test` → `python3 run_tests.py`, unittest) whose PRP asks for `multiply`,
//! and a GREEN agent that fakes the result instead of implementing it. Each attack must end
//! without SHIPPED, naming the file prpd refused; the honest control — which runs the tests
//! itself and so leaves `tests/__pycache__/` behind — must ship.

use std::fmt::Write as _;

use crate::run::{PRP, iterations_in, measured, run};
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

fn prpd_toml(green: &str) -> String {
    let mut toml = String::new();
    for phase in ["red", "green", "refactor", "document", "qa"] {
        let behaviour = if phase == "green" { green } else { "honest" };
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
    .file(PRP, &crate::run::prp(""))
    .file("prpd.toml", &prpd_toml(green))
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
