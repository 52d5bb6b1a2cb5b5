#!/usr/bin/env python3
"""The agent of prpd's cross-stack loop tests (tests/it/stacks.rs).

It plays one phase per invocation on a small `numkit` project that gains `clamp` (`Clamp` in
Go) against the PRP's AC-1 and AC-2, the way an honest, competent agent does the work right the
first time: RED writes one test per acceptance criterion, named after its id (`ac_1_...`,
Go's `TestAC1...`), and, in a compiled language, the stub that lets them compile and fail on
their assertions; GREEN writes the implementation; REFACTOR has nothing to change; DOCUMENT
adds a README section on the function; QA repeats the verdict of prpd's report. It never adapts
to feedback.

Usage, as prpd.toml's `command`: python3 stack-agent.py STACK

  STACK  npm   an ES module package tested with `node --test` (test/clamp.test.js)
         rust  a library crate with an integration test file (tests/clamp.rs)
         go    a module tested with plain `go test ./...` (clamp_test.go)
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside these scripts
from phase_status import PHASE, block, report_approves  # noqa: E402

STACK = sys.argv[1] if len(sys.argv) > 1 else "npm"

NPM_TEST = """import { test } from "node:test";
import assert from "node:assert/strict";
import * as numkit from "../index.js";

test("ac_1_clamp_raises_a_value_below_low", () => {
  assert.equal(numkit.clamp(-5, 0, 10), 0);
});

test("ac_2_clamp_lowers_a_value_above_high", () => {
  assert.equal(numkit.clamp(50, 0, 10), 10);
});
"""

NPM_CLAMP = """
/** Limits `value` to the range from `low` to `high`. */
export function clamp(value, low, high) {
  return Math.min(Math.max(value, low), high);
}
"""

RUST_TEST = """use numkit::clamp;

#[test]
fn ac_1_clamp_raises_a_value_below_low() {
    assert_eq!(clamp(-5, 0, 10), 0);
}

#[test]
fn ac_2_clamp_lowers_a_value_above_high() {
    assert_eq!(clamp(50, 0, 10), 10);
}
"""

RUST_STUB = """
/// Limits `value` to the range from `low` to `high` (not written yet).
pub fn clamp(value: i64, _low: i64, _high: i64) -> i64 {
    value
}
"""

RUST_CLAMP = """
/// Limits `value` to the range from `low` to `high`.
pub fn clamp(value: i64, low: i64, high: i64) -> i64 {
    value.clamp(low, high)
}
"""

GO_TEST = """package numkit

import "testing"

// AC-1: Clamp raises a value below low to low.
func TestAC1ClampRaisesAValueBelowLow(t *testing.T) {
\tif got := Clamp(-5, 0, 10); got != 0 {
\t\tt.Fatalf("Clamp(-5, 0, 10) = %d, want 0", got)
\t}
}

// AC-2: Clamp lowers a value above high to high.
func TestAC2ClampLowersAValueAboveHigh(t *testing.T) {
\tif got := Clamp(50, 0, 10); got != 10 {
\t\tt.Fatalf("Clamp(50, 0, 10) = %d, want 10", got)
\t}
}
"""

GO_STUB = """package numkit

// Clamp limits value to the range from low to high (not written yet).
func Clamp(value, low, high int) int {
\treturn value
}
"""

GO_CLAMP = """package numkit

// Clamp limits value to the range from low to high.
func Clamp(value, low, high int) int {
\tif value < low {
\t\treturn low
\t}
\tif value > high {
\t\treturn high
\t}
\treturn value
}
"""

README = {
    "npm": "\n## Clamp numbers\n\n`clamp(value, low, high)` returns `value` limited to the range "
    "from `low` to `high`.\n",
    "rust": "\n## Clamp numbers\n\n`clamp(value, low, high)` returns `value` limited to the range "
    "from `low` to `high`.\n",
    "go": "\n## Clamp numbers\n\n`Clamp(value, low, high)` returns `value` limited to the range "
    "from `low` to `high`.\n",
}


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def red():
    if STACK == "npm":
        write("test/clamp.test.js", NPM_TEST)
    elif STACK == "rust":
        write("tests/clamp.rs", RUST_TEST)
        if "fn clamp" not in read("src/lib.rs"):
            write("src/lib.rs", read("src/lib.rs") + RUST_STUB)
    else:
        write("clamp_test.go", GO_TEST)
        write("clamp.go", GO_STUB)


def green():
    if STACK == "npm":
        if "function clamp" not in read("index.js"):
            write("index.js", read("index.js") + NPM_CLAMP)
    elif STACK == "rust":
        write("src/lib.rs", read("src/lib.rs").replace(RUST_STUB, RUST_CLAMP))
    else:
        write("clamp.go", GO_CLAMP)


def document():
    section = README[STACK]
    if section not in read("README.md"):
        write("README.md", read("README.md").rstrip("\n") + "\n" + section)


def qa():
    return report_approves()


sys.stdin.read()
DONE = True
if PHASE == "RED":
    red()
elif PHASE == "GREEN":
    green()
elif PHASE == "DOCUMENT":
    document()
elif PHASE == "QA":
    DONE = qa()
sys.stdout.write(f"{PHASE}: done.\n{block(DONE, f'honest {STACK} agent')}")
