#!/usr/bin/env node
// The scripted agent of prpd's demo: it stands in for a coding agent in every phase, so that
// `prpd demo` plays the whole loop on examples/demo/ with no network and no API key.
//
// It plays one fixed story for the PRP examples/demo/PRPs/word-stats.md: RED writes failing
// tests for AC-1 only (AC-2 is forgotten on purpose); GREEN first writes a buggy
// implementation, then the right one; QA repeats the verdict of the report prpd measured,
// which REJECTs the missing AC-2 test; GREEN, on attempt 2, adds the AC-2 test and code; QA
// then APPROVEs. Every step changes real files and measures them with the project's own
// commands, because prpd never takes an agent's word for anything: the status block printed
// at the end only reports what the files and `npm test` say.
//
// Contract (examples/agents/README.md): the working directory is the target repository, the
// prompt arrives on stdin (drained and ignored), PRPD_PHASE and the other PRPD_* variables say
// what to do, and stdout ends with a PRP_PHASE_STATUS block. Rerunning an iteration writes the
// same files again: nothing is duplicated.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

// ---- the story's files --------------------------------------------------------------------

const RED_TEST = "test/word-stats.test.js";
const AC2_TEST = "test/word-stats-ac2.test.js";
const SOURCE = "src/textkit.js";

const RED_TEST_TEXT = `import { test } from "node:test";
import assert from "node:assert/strict";
// A namespace import: while wordStats does not exist yet, each test fails on its own
// instead of the whole file failing to load.
import * as textkit from "../src/textkit.js";

test("AC-1: wordStats counts the words and characters of a text", () => {
  const stats = textkit.wordStats("one two three");
  assert.equal(stats.words, 3);
  assert.equal(stats.characters, 13);
});

test("AC-1: wordStats counts whitespace as characters", () => {
  const stats = textkit.wordStats("  one\\ttwo  \\n");
  assert.equal(stats.words, 2);
  assert.equal(stats.characters, 12);
});

test("AC-1: wordStats of an empty text is zero words and zero characters", () => {
  const stats = textkit.wordStats("");
  assert.equal(stats.words, 0);
  assert.equal(stats.characters, 0);
});
`;

const AC2_TEST_TEXT = `import { test } from "node:test";
import assert from "node:assert/strict";
import { wordStats } from "../src/textkit.js";

test("AC-2: wordStats reports the average word length, rounded to two decimals", () => {
  assert.equal(wordStats("one three").averageWordLength, 4);
  assert.equal(wordStats("a bb ccc dddd").averageWordLength, 2.5);
  assert.equal(wordStats("ab abc abc").averageWordLength, 2.67);
});

test("AC-2: the average word length of a text without words is 0", () => {
  assert.equal(wordStats("").averageWordLength, 0);
  assert.equal(wordStats(" \\n\\t ").averageWordLength, 0);
});
`;

// Every version of wordStats starts with this doc comment, so that a later step can find the
// version an earlier step appended to src/textkit.js and replace it instead of adding another.
const WORD_STATS_DOC = "/**\n * The word statistics of a text";

const AC1_DOC = `${WORD_STATS_DOC}: its words (as \`wordCount\` counts them) and its characters.
 * @param {string} text
 * @returns {{ words: number, characters: number }}
 */`;

/** The versions of wordStats, in the order the story writes them. */
const IMPLEMENTATIONS = {
  // The bug GREEN's first iteration makes: whitespace at the ends is not counted.
  buggy: `${AC1_DOC}
export function wordStats(text) {
  return { words: wordCount(text), characters: text.trim().length };
}
`,
  // Right, but written in a hurry: REFACTOR tidies it into \`tidy\`.
  ac1: `${AC1_DOC}
export function wordStats(text) {
  const words = wordCount(text);
  const characters = text.length;
  return { words: words, characters: characters };
}
`,
  tidy: `${AC1_DOC}
export function wordStats(text) {
  return { words: wordCount(text), characters: text.length };
}
`,
  ac2: `${WORD_STATS_DOC}: its words (as \`wordCount\` counts them), its characters
 * (whitespace included) and the average word length, rounded to two decimals (0 without words).
 * @param {string} text
 * @returns {{ words: number, characters: number, averageWordLength: number }}
 */
export function wordStats(text) {
  const lengths = text.split(/\\s+/).filter((word) => word !== "").map((word) => word.length);
  const letters = lengths.reduce((sum, length) => sum + length, 0);
  const average = lengths.length === 0 ? 0 : letters / lengths.length;
  return {
    words: lengths.length,
    characters: text.length,
    averageWordLength: Math.round(average * 100) / 100,
  };
}
`,
};

// ---- files --------------------------------------------------------------------------------

/** What this iteration did to the tree, for the FILES part of the status block. */
const files = { created: [], modified: [] };

function read(path) {
  return existsSync(path) ? readFileSync(path, "utf8") : null;
}

/** Writes `text` to `path` unless it already holds exactly that; records what changed. */
function write(path, text) {
  const before = read(path);
  if (before === text) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  (before === null ? files.created : files.modified).push(path);
}

/** Which version of wordStats src/textkit.js holds: a key of IMPLEMENTATIONS, none or other. */
function currentImplementation() {
  const source = read(SOURCE) ?? "";
  const start = source.indexOf(WORD_STATS_DOC);
  if (start < 0) return "none";
  const block = source.slice(start);
  return Object.keys(IMPLEMENTATIONS).find((name) => IMPLEMENTATIONS[name] === block) ?? "other";
}

/** Puts version `name` of wordStats at the end of src/textkit.js, replacing any earlier one. */
function implement(name) {
  const source = read(SOURCE);
  if (source === null) throw new Error(`${SOURCE} does not exist: is this the textkit demo?`);
  const start = source.indexOf(WORD_STATS_DOC);
  const head = (start < 0 ? source : source.slice(0, start)).trimEnd();
  write(SOURCE, `${head}\n\n${IMPLEMENTATIONS[name]}`);
}

// ---- measuring ----------------------------------------------------------------------------

/** Runs `npm run <script>` in the repository and returns its exit code and output. */
function npm(script) {
  const result = spawnSync("npm", ["run", script], { encoding: "utf8" });
  if (result.error) return { code: 127, output: String(result.error) };
  return { code: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

/** Runs the tests and reads node --test's summary (TAP `# pass 3` or spec `ℹ pass 3`). */
function runTests() {
  const { code, output } = npm("test");
  const count = (name) => {
    const found = output.match(new RegExp(`^(?:#|ℹ) ${name} (\\d+)$`, "m"));
    return found ? Number(found[1]) : 0;
  };
  const failed = [...output.matchAll(/^not ok \d+ - (.*)$/gm)].map((found) => found[1]);
  return {
    passed: code === 0,
    total: count("tests"),
    passing: count("pass"),
    failing: count("fail") + count("cancelled"),
    skipped: count("skipped") + count("todo"),
    failed,
  };
}

// ---- the status block ---------------------------------------------------------------------

/** Renders a PRP_PHASE_STATUS block (DESIGN §5): `KEY: value`, nested maps, `- item` lists. */
function statusBlock(fields) {
  const lines = ["---PRP_PHASE_STATUS---"];
  const render = (entries, indent) => {
    for (const [key, value] of Object.entries(entries)) {
      if (Array.isArray(value)) {
        const items = value.map((item) => `${indent}  - ${oneLine(item)}`);
        if (items.length === 0) lines.push(`${indent}${key}: []`);
        else lines.push(`${indent}${key}:`, ...items);
      } else if (typeof value === "object") {
        lines.push(`${indent}${key}:`);
        render(value, `${indent}  `);
      } else {
        lines.push(`${indent}${key}: ${oneLine(String(value))}`);
      }
    }
  };
  render(fields, "");
  lines.push("---END_PRP_PHASE_STATUS---");
  return `${lines.join("\n")}\n`;
}

function oneLine(text) {
  return text.replace(/\s+/g, " ").trim();
}

function timestamp() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The status block of a phase that ran the tests; `done` is what the agent believes. */
function report(phase, { done, tests, blockers, recommendation }) {
  return statusBlock({
    TIMESTAMP: timestamp(),
    PHASE: phase,
    STATUS: done ? "COMPLETE" : "IN_PROGRESS",
    ITERATION: iteration,
    PROGRESS_PERCENT: done ? 100 : 50,
    TESTS: {
      TOTAL: tests.total,
      PASSING: tests.passing,
      FAILING: tests.failing,
      SKIPPED: tests.skipped,
    },
    FILES: { CREATED: files.created.length, MODIFIED: files.modified.length, DELETED: 0 },
    BLOCKERS: blockers,
    EXIT_SIGNAL: done,
    RECOMMENDATION: recommendation,
  });
}

function say(text) {
  process.stdout.write(`${text}\n`);
}

function summary(tests) {
  return `npm test: ${tests.total} tests, ${tests.passing} passing, ${tests.failing} failing`;
}

function changes() {
  const all = [
    ...files.created.map((path) => `created ${path}`),
    ...files.modified.map((path) => `modified ${path}`),
  ];
  return all.length === 0 ? "no file changed" : all.join(", ");
}

// ---- the phases ---------------------------------------------------------------------------

function red() {
  write(RED_TEST, RED_TEST_TEXT);
  say(`RED: wrote the AC-1 tests of wordStats (${changes()}).`);
  const tests = runTests();
  say(summary(tests));
  const done = !tests.passed && tests.failing > 0;
  return report("RED", {
    done,
    tests,
    blockers: done ? [] : ["the new tests do not fail: they test nothing new"],
    recommendation: done
      ? "AC-1 is specified by failing tests; GREEN can implement wordStats"
      : "make the AC-1 tests fail before implementing",
  });
}

/** The acceptance ids the feedback file names, e.g. the F2 blocker of a REJECTed QA report. */
function idsInFeedback() {
  const path = process.env.PRPD_FEEDBACK;
  const text = path ? read(path) : null;
  return text === null ? [] : [...new Set(text.match(/\bAC-\d+(?:\.\d+)*\b/g) ?? [])];
}

function green() {
  let plan;
  if (attempt >= 2) {
    // Back from QA: the report said AC-2 has no test. Cover it, then implement it.
    const named = idsInFeedback();
    const names = named.length > 0 ? named.join(", ") : "no criterion";
    plan = `attempt ${attempt}: the feedback names ${names}; adding the AC-2 test and code`;
    write(AC2_TEST, AC2_TEST_TEXT);
    if (currentImplementation() !== "ac2") implement("ac2");
  } else if (iteration === 1) {
    plan = "first try at AC-1";
    implement("buggy");
  } else {
    plan = "fixing the character count: whitespace at the ends counts too";
    // Keep a version REFACTOR already tidied; anything else becomes the right AC-1 code.
    if (!["ac1", "tidy"].includes(currentImplementation())) implement("ac1");
  }
  say(`GREEN: ${plan} (${changes()}).`);
  const tests = runTests();
  say(summary(tests));
  return report("GREEN", {
    done: tests.passed,
    tests,
    blockers: tests.failed.map((name) => `failing test: ${name}`),
    recommendation: tests.passed
      ? "all tests pass; ready for REFACTOR"
      : "the implementation is wrong; iterate on the failing tests",
  });
}

function refactor() {
  let what = "nothing to tidy";
  if (currentImplementation() === "ac1") {
    implement("tidy");
    what = "inlined the temporaries of wordStats";
  }
  say(`REFACTOR: ${what} (${changes()}).`);
  const tests = runTests();
  const lint = npm("lint");
  say(`${summary(tests)}; npm run lint: exit ${lint.code}`);
  const blockers = [
    ...tests.failed.map((name) => `failing test: ${name}`),
    ...(lint.code === 0 ? [] : ["npm run lint fails"]),
  ];
  return report("REFACTOR", {
    done: tests.passed && lint.code === 0,
    tests,
    blockers,
    recommendation: blockers.length === 0
      ? "tests and lint are green; ready for DOCUMENT"
      : "fix the blockers",
  });
}

/** The README line and CHANGELOG item, describing what src/textkit.js implements now. */
function documentation() {
  const withAverage = currentImplementation() === "ac2";
  const fields = withAverage
    ? "`words`, `characters` and `averageWordLength`"
    : "`words` and `characters`";
  return {
    readme: `- \`wordStats(text)\`: the word statistics of a text: ${fields}.`,
    changelog: `- Word statistics: \`wordStats(text)\` returns ${fields} of a text.`,
  };
}

/** Replaces the line starting with `prefix`, or inserts `line` where `insertAt` says. */
function upsertLine(text, prefix, line, insertAt) {
  const lines = text.split("\n");
  const existing = lines.findIndex((candidate) => candidate.startsWith(prefix));
  if (existing >= 0) lines[existing] = line;
  else lines.splice(insertAt(lines), 0, line);
  return lines.join("\n");
}

function document() {
  const { readme, changelog } = documentation();
  const readmeText = read("README.md") ?? "# textkit\n";
  write("README.md", upsertLine(readmeText, "- `wordStats(text)`", readme, (lines) => {
    // After the last function of the list, else at the end.
    const last = lines.findLastIndex((line) => /^- `\w+\(/.test(line));
    return last >= 0 ? last + 1 : lines.length;
  }));
  const changelogText = read("CHANGELOG.md") ?? "# Changelog\n";
  write("CHANGELOG.md", upsertLine(changelogText, "- Word statistics:", changelog, (lines) => {
    const unreleased = lines.findIndex((line) => /^#+ .*unreleased/i.test(line));
    if (unreleased < 0) {
      lines.splice(1, 0, "", "## [Unreleased]", "");
      return 4;
    }
    // The first item of the section, after the blank line under its heading.
    return lines[unreleased + 1] === "" ? unreleased + 2 : unreleased + 1;
  }));
  say(`DOCUMENT: README and CHANGELOG describe word statistics (${changes()}).`);
  const tests = runTests();
  say(summary(tests));
  return report("DOCUMENT", {
    done: tests.passed,
    tests,
    blockers: tests.failed.map((name) => `failing test: ${name}`),
    recommendation: "README and CHANGELOG list wordStats; ready for QA",
  });
}

/** The blocking items of a QA report: `1. **[F2]** criterion` followed by `- **Why:** …`. */
function blockingItems(text) {
  const section = text.split(/^### Blocking Issues.*$/m)[1]?.split(/^#{2,3} /m)[0] ?? "";
  const items = [];
  for (const line of section.split("\n")) {
    const item = line.match(/^\d+\. \*\*\[([^\]]+)\]\*\* (.*)$/);
    const why = line.match(/^\s+- \*\*Why:\*\* (.*)$/);
    if (item) items.push(`${item[1]} ${item[2]}`);
    else if (why && items.length > 0) items[items.length - 1] += `: ${why[1]}`;
  }
  return items;
}

function qa() {
  const path = process.env.PRPD_QA_REPORT;
  const text = path ? read(path) : null;
  if (text === null) {
    say(`QA: no QA report at ${path ?? "(PRPD_QA_REPORT is not set)"}; refusing to approve.`);
    return statusBlock({
      TIMESTAMP: timestamp(),
      PHASE: "QA",
      STATUS: "BLOCKED",
      ITERATION: iteration,
      VERDICT: "REJECT",
      ATTEMPT: attempt,
      BLOCKERS: ["no QA report to review"],
      EXIT_SIGNAL: false,
      RECOMMENDATION: "run the QA checklist and pass its report in PRPD_QA_REPORT",
    });
  }
  const verdictLine = text.split("\n").find((line) => line.startsWith("## Verdict")) ?? text;
  const rejected = verdictLine.includes("REJECTED");
  const numbers = text.match(
    /(\d+) checks: (\d+) passed, (\d+) blocking failed, (\d+) warnings, (\d+) skipped/,
  )?.slice(1).map(Number) ?? [0, 0, 0, 0, 0];
  const [total, passing, blocking, warnings] = numbers;
  const blockers = rejected ? blockingItems(text) : [];
  if (rejected && blockers.length === 0) blockers.push(`the QA report at ${path} is REJECTED`);
  const queried = !text.includes("No memory backend is configured");
  say(`QA: the report at ${path} says ${rejected ? "REJECTED" : "APPROVED"}.`);
  for (const blocker of blockers) say(`  blocking: ${blocker}`);
  return statusBlock({
    TIMESTAMP: timestamp(),
    PHASE: "QA",
    STATUS: "COMPLETE",
    ITERATION: iteration,
    PROGRESS_PERCENT: 100,
    QA_METRICS: {
      CHECKS_TOTAL: total,
      CHECKS_PASSING: passing,
      CHECKS_FAILING: blocking + warnings,
      BLOCKING_ISSUES: blocking,
      WARNING_ISSUES: warnings,
    },
    MEMORY_CONTEXT: { QUERIES_EXECUTED: queried ? 4 : 0 },
    VERDICT: rejected ? "REJECT" : "APPROVE",
    ATTEMPT: attempt,
    BLOCKERS: blockers,
    EXIT_SIGNAL: !rejected,
    RECOMMENDATION: rejected
      ? "back to GREEN: resolve the blocking items"
      : "Ready for SHIP",
  });
}

// ---- main ---------------------------------------------------------------------------------

const phase = (process.env.PRPD_PHASE ?? "").toUpperCase();
const iteration = Number.parseInt(process.env.PRPD_ITERATION ?? "1", 10) || 1;
const attempt = Number.parseInt(process.env.PRPD_ATTEMPT ?? "1", 10) || 1;

// Drain the prompt, so prpd never blocks writing it; the script's story does not depend on it.
if (!process.stdin.isTTY) {
  for await (const chunk of process.stdin) void chunk;
}

const phases = { RED: red, GREEN: green, REFACTOR: refactor, DOCUMENT: document, QA: qa };
if (!(phase in phases)) {
  process.stderr.write(`scripted-agent: PRPD_PHASE is ${JSON.stringify(phase)}; `
    + `expected one of ${Object.keys(phases).join(", ")}\n`);
  process.exit(2);
}
process.stdout.write(phases[phase]());
