#!/usr/bin/env python3
"""The scripted agent of the parallel-runs benchmark (benches/parallel.rs).

It stands in for a coding agent that takes a fixed time per call: each call first sleeps
SECONDS (a real agent thinks for minutes; the sleep keeps the benchmark short while making
agent time, which parallel runs overlap, the larger part of a run), then does its phase's work
right the first time for the function its run's PRP asks for (`PRPD_PRP`, whose goal says
"Add `NAME(a, b)`"): RED writes `tests/test_NAME.py`, GREEN adds `NAME` to `calc.py`, DOCUMENT
adds it to the README and the changelog, QA approves what prpd's report approves.

Usage, as prpd.toml's `command`: python3 feature-agent.py SECONDS CALLS

  SECONDS  how long each call sleeps before it works
  CALLS    a file outside the repository where each call appends `RUN PHASE NAME`, so the
           benchmark can count the agent calls (and so the agent time) of its runs
"""

import os
import re
import sys
import time

SECONDS = float(sys.argv[1])
CALLS = sys.argv[2]
PHASE = os.environ.get("PRPD_PHASE", "")
ITERATION = os.environ.get("PRPD_ITERATION", "0")

# What each function computes, and its documentation, test arguments and expected result.
FEATURES = {
    "subtract": ("a - b", "the difference of two numbers", "(7, 2)", "5"),
    "divide": ("a / b", "the quotient of two numbers", "(6, 3)", "2"),
    "power": ("a ** b", "the base `a` multiplied by itself `b` times", "(2, 5)", "32"),
}


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def feature():
    """The function the run's PRP asks for."""
    found = re.search(r"Add `(\w+)\(a, b\)`", read(os.environ["PRPD_PRP"]))
    if not found or found.group(1) not in FEATURES:
        sys.stderr.write(f"feature-agent: {os.environ['PRPD_PRP']} names no known function\n")
        sys.exit(2)
    return found.group(1)


def report_approves():
    """Whether the QA report prpd wrote (`PRPD_QA_REPORT`) approves."""
    report = read(os.environ["PRPD_QA_REPORT"])
    verdict = next((line for line in report.splitlines() if line.startswith("## Verdict")), "")
    return "REJECTED" not in verdict


def work(name):
    """Does the phase's work; whether the agent believes the phase is done."""
    body, meaning, example, result = FEATURES[name]
    if PHASE == "RED":
        write(
            f"tests/test_{name}.py",
            f"import unittest\n\nimport calc\n\n\nclass {name.title()}Test(unittest.TestCase):\n"
            f"    def test_ac_1_{name}(self):\n"
            f'        """AC-1: {name} returns {meaning}."""\n'
            f"        self.assertEqual(calc.{name}{example}, {result})\n",
        )
    elif PHASE == "GREEN":
        if f"def {name}(" not in read("calc.py"):
            write(
                "calc.py",
                read("calc.py")
                + f'\n\ndef {name}(a, b):\n    """{meaning.capitalize()}."""\n    return {body}\n',
            )
    elif PHASE == "DOCUMENT":
        line = f"- `{name}(a, b)`: {meaning}; `{name}{example}` is {result}."
        if line not in read("README.md"):
            write("README.md", read("README.md").rstrip("\n") + "\n" + line + "\n")
        item = f"- `{name}(a, b)`, {meaning}."
        if item not in read("CHANGELOG.md"):
            write(
                "CHANGELOG.md",
                read("CHANGELOG.md").replace("## [Unreleased]\n", f"## [Unreleased]\n\n{item}\n"),
            )
    elif PHASE == "QA":
        return report_approves()
    return True


def block(done):
    """The status block prpd reads: COMPLETE with EXIT_SIGNAL when `done`; QA's verdict."""
    lines = [
        "---PRP_PHASE_STATUS---",
        f"PHASE: {PHASE}",
        f"STATUS: {'COMPLETE' if done else 'IN_PROGRESS'}",
        f"ITERATION: {ITERATION}",
    ]
    if PHASE == "QA":
        lines.append(f"VERDICT: {'APPROVE' if done else 'REJECT'}")
    lines += [
        f"EXIT_SIGNAL: {'true' if done else 'false'}",
        "RECOMMENDATION: none",
        "---END_PRP_PHASE_STATUS---",
    ]
    return "\n".join(lines) + "\n"


sys.stdin.read()
NAME = feature()
with open(CALLS, "a", encoding="utf-8") as calls:
    calls.write(f"{os.environ.get('PRPD_RUN_ID', '?')} {PHASE} {NAME}\n")
time.sleep(SECONDS)
DONE = work(NAME)
sys.stdout.write(f"{PHASE}: done.\n{block(DONE)}")
