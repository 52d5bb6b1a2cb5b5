// The story the mock plays, whatever the wire format: the `calc` fixture gains `multiply`
// through RED, GREEN, REFACTOR, DOCUMENT and QA. Each phase is a script of actions (Read, Write,
// Edit, Bash) that the CLI carries out; each API's module turns an action into its own wire form
// and the CLI's answers back into actions with results, so the scripts and the final answers,
// with their PRP_PHASE_STATUS blocks, are written once.

import { join } from "node:path";

// ---- the story's files --------------------------------------------------------------------

const RED_TEST = "test/multiply.test.js";
const SOURCE = "src/calc.js";

// A namespace import: while `multiply` does not exist, the test fails on its own assertion
// instead of the whole file failing to load.
const RED_TEST_TEXT = `import { test } from "node:test";
import assert from "node:assert/strict";
import * as calc from "../src/calc.js";

test("AC-1: multiply returns the product of two numbers", () => {
  assert.equal(calc.multiply(6, 7), 42);
  assert.equal(calc.multiply(-2, 3), -6);
});
`;

const ADD_END = "  return a + b;\n}\n";
const MULTIPLY = `
/** The product of two numbers. */
export function multiply(a, b) {
  return a * b;
}
`;
const MULTIPLY_DOC = "/** The product of two numbers. */";
const MULTIPLY_TIDY_DOC = "/** The product of two numbers: `multiply(6, 7)` is 42. */";

const README_ADD = "- `add(a, b)`: the sum of two numbers.\n";
const README_LINE = "- `multiply(a, b)`: multiply numbers, giving the product of two numbers.\n";
const CHANGELOG_UNRELEASED = "## [Unreleased]\n";
const CHANGELOG_ITEM = "- Multiply numbers with `multiply(a, b)`.\n";

const PLANNER_PLAN = {
  flows: [{ id: "join", name: "Join", pagePath: ["home", "signup"] }],
  cases: [
    {
      id: "signup-age-13", name: "A 13-year-old can sign up", type: "boundary", priority: "p0",
      relatedPageIds: ["signup"],
      steps: [{ description: "Enter age 13 and submit", expectedResult: "The account is created" }],
    },
    {
      id: "docs-back", name: "The docs link back", type: "navigation", priority: "p2",
      relatedPageIds: ["docs-two"],
      steps: [{ description: "Follow 'getting started'", expectedResult: "Docs one opens" }],
    },
  ],
};

// ---- reading a prompt ---------------------------------------------------------------------

/** The text of a message's content: a string, or its text and tool_result blocks. */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      if (["text", "input_text", "output_text"].includes(block?.type)) return block.text ?? "";
      if (block?.type === "tool_result") return textOf(block.content);
      return "";
    })
    .join("\n");
}

/** The prpd prompt of the conversation: its phase, iteration, test command and whole text. */
function prpdPrompt(messages) {
  for (const message of messages) {
    if (message.role !== "user") continue;
    const text = textOf(message.content);
    if (/^# prpd · test planner$/m.test(text)) {
      // `prpd plan --agent`: the planner works through prpd's MCP server (PLANNER below).
      return { phase: "PLANNER", iteration: 1, testCommand: null, text };
    }
    const heading = text.match(/^# prpd · (RED|GREEN|REFACTOR|DOCUMENT|QA) phase · iteration (\d+)/m);
    if (!heading) continue;
    const testCommand = text.match(/^Test command(?: \([^)]*\))?: (.+)$/m)?.[1]?.trim() ?? null;
    return { phase: heading[1], iteration: Number(heading[2]), testCommand, text };
  }
  return null;
}

/** Whether a tool result is the CLI refusing the call rather than the tool's own output. */
function refused(result) {
  return result !== null
    && /requires approval|haven't granted|permission to use|was blocked|not allowed/i.test(result.text);
}

// ---- the phases' scripts ------------------------------------------------------------------

const read = (root, path) => ({ tool: "Read", input: { file_path: join(root, path) } });

/** The test run of a phase, by the exact command the prompt names (and Claude may run). */
function runTests(context) {
  return { tool: "Bash", input: { command: context.testCommand, description: "Run the tests" } };
}

/**
 * The file's text as the CLI's read returned it: Claude Code's Read tool numbers the lines
 * (`   1→line`), Codex's exec_command puts a header before `Output:`, Aider shows the file as it
 * is.
 */
function readText(exchange) {
  if (exchange?.result === null || exchange?.result === undefined) return null;
  if (exchange.via === "exec_command") return commandOutput(exchange.result.text);
  if (exchange.via === "chat") return exchange.result.text;
  return exchange.result.text
    .split("\n")
    .map((line) => line.replace(/^\s*\d+[→\t]/, ""))
    .join("\n");
}

/**
 * Each phase's script: steps in order. A step is a function of the context and the exchanges
 * so far that returns a tool call, or null when it has nothing to do (an edit already made).
 */
const SCRIPTS = {
  // `prpd plan --agent` on examples/web-site explored one link deep: the planner reads the
  // exploration through prpd's MCP server (Claude Code names its tools mcp__prpd__*), opens a
  // page the walk did not reach, and hands in its plan.
  PLANNER: [
    () => ({ tool: "mcp__prpd__list_known_pages", input: {} }),
    () => ({ tool: "mcp__prpd__open_url", input: { url: "/docs/two.html" } }),
    () => ({ tool: "mcp__prpd__finalize_test_plan", input: PLANNER_PLAN }),
  ],
  RED: [
    (c) => ({ tool: "Write", input: { file_path: join(c.root, RED_TEST), content: RED_TEST_TEXT } }),
    (c) => runTests(c),
  ],
  GREEN: [
    (c) => read(c.root, SOURCE),
    (c, done) => {
      const source = readText(done.find((exchange) => exchange.name === "Read"));
      if (source === null || source.includes("function multiply")) return null;
      return {
        tool: "Edit",
        input: { file_path: join(c.root, SOURCE), old_string: ADD_END, new_string: ADD_END + MULTIPLY },
      };
    },
    (c) => runTests(c),
  ],
  REFACTOR: [
    (c) => read(c.root, SOURCE),
    (c, done) => {
      const source = readText(done.find((exchange) => exchange.name === "Read"));
      if (source === null || !source.includes(MULTIPLY_DOC)) return null;
      return {
        tool: "Edit",
        input: { file_path: join(c.root, SOURCE), old_string: MULTIPLY_DOC, new_string: MULTIPLY_TIDY_DOC },
      };
    },
    (c) => runTests(c),
  ],
  DOCUMENT: [
    (c) => read(c.root, "README.md"),
    (c, done) => {
      const readme = readText(done.find((exchange) => exchange.input?.file_path?.endsWith("README.md")));
      if (readme === null || readme.includes(README_LINE) || !readme.includes(README_ADD)) return null;
      return {
        tool: "Edit",
        input: { file_path: join(c.root, "README.md"), old_string: README_ADD, new_string: README_ADD + README_LINE },
      };
    },
    (c) => read(c.root, "CHANGELOG.md"),
    (c, done) => {
      const log = readText(done.find((exchange) => exchange.input?.file_path?.endsWith("CHANGELOG.md")));
      if (log === null || log.includes(CHANGELOG_ITEM) || !log.includes(CHANGELOG_UNRELEASED)) return null;
      return {
        tool: "Edit",
        input: {
          file_path: join(c.root, "CHANGELOG.md"),
          old_string: CHANGELOG_UNRELEASED,
          new_string: `${CHANGELOG_UNRELEASED}\n${CHANGELOG_ITEM}`,
        },
      };
    },
  ],
  QA: [
    () => ({ tool: "Bash", input: { command: "git status --short", description: "Show working tree status" } }),
  ],
};

/**
 * The next action of the conversation: the first step of the phase's script that has no
 * result yet, or the final answer once every step has one.
 */
function nextAction(context, exchanges) {
  let cursor = 0;
  for (const step of SCRIPTS[context.phase]) {
    const call = step(context, exchanges.slice(0, cursor));
    if (call === null) continue;
    const exchange = exchanges[cursor];
    if (exchange === undefined || exchange.result === null) return call;
    cursor += 1;
  }
  return { final: finalAnswer(context, exchanges) };
}

// ---- the final answers --------------------------------------------------------------------

/** node --test's summary (`ℹ tests 2` in spec output, `# tests 2` in TAP) of a test run. */
function testCounts(text) {
  const count = (name) => Number(text.match(new RegExp(`^(?:ℹ|#) ${name} (\\d+)\\s*$`, "m"))?.[1] ?? 0);
  return {
    ran: /^(?:ℹ|#) tests \d+/m.test(text),
    total: count("tests"),
    passing: count("pass"),
    failing: count("fail") + count("cancelled"),
    skipped: count("skipped") + count("todo"),
  };
}

function oneLine(text) {
  return text.replace(/\s+/g, " ").trim().slice(0, 300);
}

function block(fields) {
  const lines = ["---PRP_PHASE_STATUS---"];
  const render = (entries, indent) => {
    for (const [key, value] of Object.entries(entries)) {
      if (Array.isArray(value)) {
        if (value.length === 0) lines.push(`${indent}${key}: []`);
        else lines.push(`${indent}${key}:`, ...value.map((item) => `${indent}  - ${oneLine(item)}`));
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
  return lines.join("\n");
}

function timestamp() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** What the phase changed, by the tool calls that succeeded. */
function filesOf(context, exchanges) {
  const relative = (path) => (path.startsWith(`${context.root}/`) ? path.slice(context.root.length + 1) : path);
  const succeeded = (name) => exchanges
    .filter((exchange) => exchange.name === name && exchange.result && !exchange.result.is_error)
    .map((exchange) => relative(exchange.input.file_path));
  return { CREATED: succeeded("Write"), MODIFIED: [...new Set(succeeded("Edit"))], DELETED: [] };
}

function finalAnswer(context, exchanges) {
  const phase = context.phase;
  const failedCalls = exchanges.filter((exchange) => exchange.result?.is_error && exchange.name !== "Bash");
  const denied = exchanges.filter((exchange) => refused(exchange.result));
  const blockers = [
    ...denied.map((exchange) => `${exchange.name} \`${exchange.input.command ?? exchange.input.file_path}\` was refused: ${exchange.result.text}`),
    ...failedCalls.filter((exchange) => !refused(exchange.result))
      .map((exchange) => `${exchange.name} ${exchange.input.file_path ?? ""} failed: ${exchange.result.text}`),
  ];
  if (phase === "QA") return qaAnswer(context, blockers);
  if (phase === "PLANNER") {
    const failed = exchanges.filter((exchange) => exchange.result?.is_error || refused(exchange.result));
    return failed.length === 0
      ? "I read the exploration, opened /docs/two.html and handed the plan to finalize_test_plan."
      : `The planner tools failed: ${failed.map((exchange) => `${exchange.name}: ${exchange.result.text}`).join("; ")}`;
  }

  if (context.testCommand === null) {
    // DOCUMENT's prompt names no test command: documentation only, no test run to report.
    const done = blockers.length === 0;
    return `${phase} is ${done ? "done" : "not done"}.\n\n${block({
      TIMESTAMP: timestamp(),
      PHASE: phase,
      STATUS: done ? "COMPLETE" : "BLOCKED",
      ITERATION: context.iteration,
      PROGRESS_PERCENT: done ? 100 : 50,
      TESTS: { TOTAL: 0, PASSING: 0, FAILING: 0, SKIPPED: 0 },
      FILES: filesOf(context, exchanges),
      BLOCKERS: blockers,
      EXIT_SIGNAL: done,
      RECOMMENDATION: done ? "ready for the next phase" : "resolve the blockers",
    })}\n`;
  }
  const testRun = [...exchanges].reverse()
    .find((exchange) => exchange.name === "Bash" && exchange.input.command === context.testCommand);
  // `later`: the CLI cannot show this answer a test run (Aider runs the test command after the
  // answer, or not at all); the answer says who runs it and claims nothing about its figures.
  const later = testRun?.result?.later ?? null;
  const counts = testRun?.result && later === null && !refused(testRun.result) ? testCounts(testRun.result.text) : null;
  if (later === null && (counts === null || !counts.ran)) {
    blockers.push(`the test command \`${context.testCommand}\` did not run: ${testRun?.result?.text ?? "no result"}`);
  }
  const tests = counts ?? { total: 0, passing: 0, failing: 0, skipped: 0 };
  let done;
  if (later !== null) {
    done = blockers.length === 0;
  } else if (phase === "RED") {
    done = blockers.length === 0 && tests.failing > 0;
    if (blockers.length === 0 && !done) blockers.push("the new test does not fail");
  } else {
    done = blockers.length === 0 && tests.failing === 0 && tests.total > 0;
    if (blockers.length === 0 && !done) blockers.push(`${tests.failing} tests fail`);
  }
  let summary = `I could not run \`${context.testCommand}\`.`;
  if (later !== null) summary = `\`${context.testCommand}\`: ${later}.`;
  else if (counts?.ran) summary = `\`${context.testCommand}\`: ${tests.total} tests, ${tests.passing} passing, ${tests.failing} failing.`;
  const status = done ? "COMPLETE" : blockers.some((line) => line.includes("refused")) ? "BLOCKED" : "IN_PROGRESS";
  return `${phase} is ${done ? "done" : "not done"}. ${summary}\n\n${block({
    TIMESTAMP: timestamp(),
    PHASE: phase,
    STATUS: status,
    ITERATION: context.iteration,
    PROGRESS_PERCENT: done ? 100 : 50,
    TESTS: { TOTAL: tests.total, PASSING: tests.passing, FAILING: tests.failing, SKIPPED: tests.skipped },
    FILES: filesOf(context, exchanges),
    BLOCKERS: blockers,
    EXIT_SIGNAL: done,
    RECOMMENDATION: done ? "ready for the next phase" : "resolve the blockers",
  })}\n`;
}

/** QA repeats the verdict of the report prpd put in the prompt, with its figures. */
function qaAnswer(context, blockers) {
  const verdictLine = context.text.split("\n").find((line) => line.startsWith("## Verdict")) ?? "";
  const rejected = !verdictLine.includes("APPROVED");
  const [total, passing, blocking, warnings] = context.text
    .match(/(\d+) checks: (\d+) passed, (\d+) blocking failed, (\d+) warnings, (\d+) skipped/)
    ?.slice(1).map(Number) ?? [0, 0, 0, 0];
  const reasons = rejected ? [`the QA report says: ${verdictLine || "no verdict"}`] : [];
  const approve = !rejected && blockers.length === 0;
  return `QA: ${verdictLine || "the report has no verdict"}.\n\n${block({
    TIMESTAMP: timestamp(),
    PHASE: "QA",
    STATUS: blockers.length > 0 ? "BLOCKED" : "COMPLETE",
    ITERATION: context.iteration,
    PROGRESS_PERCENT: 100,
    QA_METRICS: {
      CHECKS_TOTAL: total,
      CHECKS_PASSING: passing,
      CHECKS_FAILING: blocking + warnings,
      BLOCKING_ISSUES: blocking,
      WARNING_ISSUES: warnings,
    },
    VERDICT: approve ? "APPROVE" : "REJECT",
    ATTEMPT: Number(context.text.match(/· attempt (\d+) of/)?.[1] ?? 1),
    BLOCKERS: [...reasons, ...blockers],
    EXIT_SIGNAL: approve,
    RECOMMENDATION: approve ? "Ready for SHIP" : "back to GREEN: resolve the blockers",
  })}\n`;
}

/**
 * The whole new text of the file a Write or Edit action changes: an edit applies to the file as
 * the conversation last read or wrote it.
 */
function editedText(action, exchanges) {
  const { tool, input } = action;
  if (tool !== "Edit") return input.content;
  const last = [...exchanges].reverse()
    .find((exchange) => exchange.input?.file_path === input.file_path && exchange.result !== null);
  const current = last?.name === "Read" ? readText(last) : last?.input?.content ?? "";
  return current.replace(input.old_string, input.new_string);
}

/** exec_command's output without its header (`Process exited with code 1`, ..., `Output:`). */
function commandOutput(text) {
  const start = text.indexOf("Output:\n");
  return start >= 0 ? text.slice(start + "Output:\n".length) : text;
}

export {
  commandOutput,
  editedText,
  finalAnswer,
  nextAction,
  prpdPrompt,
  readText,
  refused,
  SCRIPTS,
  textOf,
};
