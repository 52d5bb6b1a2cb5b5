#!/usr/bin/env python3
"""The honest agent of the parallel-run tests (tests/it/worktrees.rs, moved_base.rs) and of the
parallel-runs benchmark (benches/parallel.rs).

Several runs of one Python `calc` repository go at once, each for its own PRP, each asking for
one function of two numbers (`subtract`, `divide`, `power`, ...). The agent learns which
function from the PRP prpd names (`PRPD_PRP`: its goal says "Add `NAME(a, b)`"), and does the
work right the first time in the run's own tree (its working directory): RED writes
`tests/test_NAME.py`, GREEN adds `NAME` to `calc.py`, DOCUMENT adds it to the README and the
changelog, QA approves what prpd's report approves. So whatever one run's branch holds that
another's feature wrote is cross-talk between runs, never this agent's doing.

Usage, as prpd.toml's `command`: python3 feature-agent.py LOG [BLOCK_DIR] [--sleep SECONDS]

  LOG        a file outside the repository where each call appends `start RUN PHASE NAME TIME`
             and `end RUN PHASE NAME TIME` (NAME: the function, TIME: seconds): the test reads
             from it which run's agent worked on which feature, and whether runs overlapped.
             RED takes a second, so that runs driven at once are seen to overlap.
  BLOCK_DIR  when given, GREEN writes `BLOCK_DIR/blocked-RUN-PID` and waits until
             `BLOCK_DIR/release` exists (at most 300 s, and no longer than the folder), so the
             test can kill prpd while every run's agent is half way.
  --sleep    every call first sleeps SECONDS instead (a real agent thinks for minutes; the
             benchmark makes agent time, which parallel runs overlap, the larger part of a run).
"""

import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside these scripts
from phase_status import PHASE, block, report_approves  # noqa: E402

ARGS = sys.argv[1:]
SLEEP = None
if "--sleep" in ARGS:
    at = ARGS.index("--sleep")
    SLEEP = float(ARGS[at + 1])
    del ARGS[at : at + 2]
LOG = ARGS[0]
BLOCK_DIR = ARGS[1] if len(ARGS) > 1 else None
RUN = os.environ.get("PRPD_RUN_ID", "?")

# What each function does, for its test, its docstring and its documentation.
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


def log(event, name):
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(f"{event} {RUN} {PHASE} {name} {time.time():.3f}\n")


def feature():
    found = re.search(r"Add `(\w+)\(a, b\)`", read(os.environ["PRPD_PRP"]))
    if not found or found.group(1) not in FEATURES:
        sys.stderr.write(f"feature-agent: the PRP {os.environ['PRPD_PRP']} names no known feature\n")
        sys.exit(2)
    return found.group(1)


def wait_for_release():
    marker = os.path.join(BLOCK_DIR, f"blocked-{RUN}-{os.getpid()}")
    write(marker, "")
    deadline = time.time() + 300
    release = os.path.join(BLOCK_DIR, "release")
    while os.path.isdir(BLOCK_DIR) and not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.1)


def honest(name):
    body, meaning, example, result = FEATURES[name]
    if PHASE == "RED":
        if SLEEP is None:
            time.sleep(1)
        write(
            f"tests/test_{name}.py",
            f"import unittest\n\nimport calc\n\n\nclass {name.title()}Test(unittest.TestCase):\n"
            f"    def test_ac_1_{name}(self):\n"
            f'        """AC-1: {name} returns {meaning}."""\n'
            f"        self.assertEqual(calc.{name}{example}, {result})\n",
        )
    elif PHASE == "GREEN":
        if BLOCK_DIR:
            wait_for_release()
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


sys.stdin.read()
if SLEEP is not None:
    time.sleep(SLEEP)
NAME = feature()
log("start", NAME)
DONE = honest(NAME)
log("end", NAME)
sys.stdout.write(f"{PHASE}: done.\n{block(DONE, f'feature agent ({NAME})')}")
