#!/usr/bin/env python3
"""The honest agent of the PRP-formats table (tests/it/formats.rs).

It does the work of the Python `calc` fixture right the first time, whatever format the PRP is
written in: in RED it reads the requirements its prompt lists and writes one test per
requirement that asks for a test, named with the test name prpd shows (`ac_1_…`, `fr_001_…`,
`req_1_2_…`, `r1_…`, a scenario's name); GREEN implements `multiply`; DOCUMENT documents it in
the README and the changelog; QA approves what prpd's report approves. It never reads feedback
and never adapts to it: what ships, ships on its first QA attempt.
"""

import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside these scripts
from phase_status import PHASE, block, report_approves  # noqa: E402


MULTIPLY = '''

def multiply(a, b):
    """The product of two numbers."""
    return a * b
'''


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_names(prompt):
    """The test names the prompt's requirement list asks for, in order."""
    section = prompt.split("## Requirements, by id", 1)[-1].split("\n## ", 1)[0]
    return re.findall(r"test name `([a-z0-9_]+)_…`", section)


def red(prompt):
    names = test_names(prompt)
    if not names:
        sys.stderr.write("id-agent: the RED prompt lists no test names\n")
        sys.exit(2)
    methods = "".join(
        f"    def test_{name}(self):\n"
        f"        self.assertEqual(calc.multiply(6, 7), 42)\n"
        f"        self.assertEqual(calc.multiply(-2, 3), -6)\n"
        f"        self.assertEqual(calc.multiply(1.5, 2), 3.0)\n\n"
        for name in names
    )
    write(
        "tests/test_multiply.py",
        "import unittest\n\nimport calc\n\n\nclass MultiplyTest(unittest.TestCase):\n" + methods,
    )


def honest(prompt):
    if PHASE == "RED":
        red(prompt)
    elif PHASE == "GREEN":
        if "def multiply" not in read("calc.py"):
            write("calc.py", read("calc.py") + MULTIPLY)
    elif PHASE == "DOCUMENT":
        line = "- `multiply(a, b)`: the product of two numbers (`multiply(6, 7)` is 42)."
        if line not in read("README.md"):
            write("README.md", read("README.md").rstrip("\n") + "\n" + line + "\n")
        item = "- `multiply(a, b)`, the product of two numbers."
        if item not in read("CHANGELOG.md"):
            write(
                "CHANGELOG.md",
                read("CHANGELOG.md").replace("## [Unreleased]\n", f"## [Unreleased]\n\n{item}\n"),
            )
    elif PHASE == "QA":
        return report_approves()
    subprocess.run([sys.executable, "run_tests.py"], capture_output=True, check=False)
    return True


DONE = honest(sys.stdin.read())
sys.stdout.write(f"{PHASE}: done.\n{block(DONE, 'id agent')}")
