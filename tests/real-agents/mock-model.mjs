#!/usr/bin/env node
// A local stand-in for the Anthropic Messages API and the OpenAI Responses and chat-completions
// APIs, so that the real Claude Code, Codex CLI and Aider can drive a whole prpd run without
// network or an API key (tests/it/real_claude.rs, tests/real-agents/run.sh).
//
// It plays the model's side of one fixed story, the `calc` fixture of tests/real-agents/calc/
// (a tiny Node library that gains `multiply`), and reads which phase it is in from the prompt
// prpd sends ("# prpd · RED phase · iteration 1"). Each phase is a short script of tool calls
// that Claude Code itself carries out: RED writes the test with Write and runs the test command
// with Bash; GREEN reads and edits the source, then runs the tests; REFACTOR and DOCUMENT make
// their small edits and run the tests; QA looks at the tree (`git status`) and repeats the
// verdict of prpd's report. The final answer of every phase ends with the PRP_PHASE_STATUS block
// prpd expects, filled in from the tool results Claude Code sent back, never from hope: a test
// run the CLI refused makes the phase BLOCKED. One story, three wire formats: Codex's shell
// commands and Aider's chat turns are read back into the same actions, so the scripts and the
// final answers are shared (see each API's section).
//
// The server is stateless: every request carries the whole conversation, and the next step is
// the first step of the phase's script whose tool result is not in it yet.
//
// Usage: node mock-model.mjs [--port N] [--host H] [--record FILE]
//   Prints `mock-model listening on http://H:PORT` on stdout once it accepts connections.
//   --record FILE appends one JSON object per request (what the CLI sent: model, tools, the
//   tool results it returned; and what the mock answered), for tests to check.
//
// Endpoints: POST /v1/messages (streaming SSE and plain JSON), POST /v1/messages/count_tokens,
// POST /v1/responses (Codex CLI; streaming SSE and plain JSON), POST /v1/chat/completions
// (Aider through litellm; plain JSON, and chat.completion.chunk SSE when asked to stream),
// GET /v1/models, HEAD or GET / and /api/hello (Claude Code's connectivity probe). Everything
// else is a 404 in the Anthropic error shape.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

// ---- options ------------------------------------------------------------------------------

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

const HOST = option("host", "127.0.0.1");
const PORT = Number.parseInt(option("port", "0"), 10);
const RECORD = option("record", process.env.MOCK_MODEL_RECORD ?? "");

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

// ---- reading a request --------------------------------------------------------------------

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

function systemText(request) {
  return typeof request.system === "string" ? request.system : textOf(request.system);
}

/** The prpd prompt of the conversation: its phase, iteration, test command and whole text. */
function prpdPrompt(messages) {
  for (const message of messages) {
    if (message.role !== "user") continue;
    const text = textOf(message.content);
    const heading = text.match(/^# prpd · (RED|GREEN|REFACTOR|DOCUMENT|QA) phase · iteration (\d+)/m);
    if (!heading) continue;
    const testCommand = text.match(/^Test command(?: \([^)]*\))?: (.+)$/m)?.[1]?.trim() ?? null;
    return { phase: heading[1], iteration: Number(heading[2]), testCommand, text };
  }
  return null;
}

/** The tool calls the conversation holds, in order, each with the result sent back (or null). */
function toolExchanges(messages) {
  const exchanges = [];
  const byId = new Map();
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (message.role === "assistant" && block?.type === "tool_use") {
        const exchange = { id: block.id, name: block.name, input: block.input, result: null };
        exchanges.push(exchange);
        byId.set(block.id, exchange);
      } else if (message.role === "user" && block?.type === "tool_result") {
        const exchange = byId.get(block.tool_use_id);
        const result = { is_error: block.is_error === true, text: textOf(block.content) };
        if (exchange) exchange.result = result;
      }
    }
  }
  return exchanges;
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

// ---- the OpenAI Responses API (Codex CLI) ---------------------------------------------------
//
// Codex CLI offers one shell tool, `exec_command` (`{"cmd": "..."}`), so the phases' actions
// become shell commands: Read is `cat PATH`, Write and Edit are a heredoc into PATH (an edit
// writes the whole new text, computed from the file as the conversation last read it), Bash is
// the command itself. The commands are read back into the same actions, so the scripts and the
// final answers are shared with the Anthropic side.

const HEREDOC = "MOCK_MODEL_EOF";

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

/** The shell command of an action, for Codex. */
function shellCommand(action, exchanges) {
  const { tool, input } = action;
  if (tool === "Read") return `cat ${input.file_path}`;
  if (tool === "Bash") return input.command;
  const marker = tool === "Edit" ? "edit" : "write";
  return `cat > ${input.file_path} <<'${HEREDOC}' # ${marker}\n${editedText(action, exchanges)}${HEREDOC}`;
}

/** The action a shell command stands for (the inverse of `shellCommand`). */
function actionOf(command) {
  const heredoc = command.match(new RegExp(`^cat > (\\S+) <<'${HEREDOC}' # (edit|write)\\n([\\s\\S]*)${HEREDOC}$`));
  if (heredoc) {
    const [, path, marker, content] = heredoc;
    return { name: marker === "edit" ? "Edit" : "Write", input: { file_path: path, content } };
  }
  const read = command.match(/^cat (\S+)$/);
  if (read) return { name: "Read", input: { file_path: read[1] } };
  return { name: "Bash", input: { command } };
}

/** exec_command's output without its header (`Process exited with code 1`, ..., `Output:`). */
function commandOutput(text) {
  const start = text.indexOf("Output:\n");
  return start >= 0 ? text.slice(start + "Output:\n".length) : text;
}

/** The function calls of a Responses conversation, as actions with their results. */
function responsesExchanges(input) {
  const exchanges = [];
  const byId = new Map();
  for (const item of input) {
    if (item?.type === "function_call") {
      let args = {};
      try {
        args = JSON.parse(item.arguments ?? "{}");
      } catch {
        args = {};
      }
      const action = actionOf(String(args.cmd ?? args.command ?? ""));
      const exchange = { id: item.call_id, via: "exec_command", ...action, result: null };
      exchanges.push(exchange);
      byId.set(item.call_id, exchange);
    } else if (item?.type === "function_call_output") {
      const exchange = byId.get(item.call_id);
      const output = typeof item.output === "string" ? item.output : textOf(item.output?.content ?? item.output);
      const code = Number(output.match(/exited with code (-?\d+)/)?.[1] ?? 0);
      if (exchange) exchange.result = { is_error: code !== 0, text: output };
    }
  }
  return exchanges;
}

/** The output items and usage of the answer to a /v1/responses request. */
function answerResponses(request) {
  const input = Array.isArray(request.input) ? request.input : [];
  const messages = input.filter((item) => item?.type === "message" || item?.role !== undefined);
  const prompt = prpdPrompt(messages.filter((item) => item.role === "user"));
  const message = (text) => ({
    type: "message",
    id: `msg_mock_${String(++sequence).padStart(6, "0")}`,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  });
  if (prompt === null) return { kind: "side", output: [message("OK.")] };
  const environment = messages.map((item) => textOf(item.content)).join("\n");
  const root = environment.match(/<cwd>([^<]+)<\/cwd>/)?.[1] ?? process.cwd();
  const context = { ...prompt, root };
  const exchanges = responsesExchanges(input);
  const action = nextAction(context, exchanges);
  const base = { kind: "phase", phase: prompt.phase, iteration: prompt.iteration, exchanges };
  if (action.final !== undefined) return { ...base, output: [message(action.final)] };
  const callId = `call_mock_${String(++sequence).padStart(6, "0")}`;
  return {
    ...base,
    output: [{
      type: "function_call",
      id: `fc_mock_${String(sequence).padStart(6, "0")}`,
      call_id: callId,
      name: "exec_command",
      arguments: JSON.stringify({ cmd: shellCommand(action, exchanges), login: false }),
      status: "completed",
    }],
  };
}

function streamResponse(response, body) {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sequenceNumber = 0;
  const send = (event, data) => sse(response, event, { sequence_number: sequenceNumber++, ...data });
  const pending = { ...body, status: "in_progress", output: [], usage: null };
  send("response.created", { response: pending });
  send("response.in_progress", { response: pending });
  body.output.forEach((item, outputIndex) => {
    if (item.type === "message") {
      send("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [] };
      send("response.content_part.added", { item_id: item.id, output_index: outputIndex, content_index: 0, part });
      const text = item.content[0].text;
      for (const delta of pieces(text, 80)) {
        send("response.output_text.delta", { item_id: item.id, output_index: outputIndex, content_index: 0, delta });
      }
      send("response.output_text.done", { item_id: item.id, output_index: outputIndex, content_index: 0, text });
      send("response.content_part.done", { item_id: item.id, output_index: outputIndex, content_index: 0, part: item.content[0] });
    } else {
      send("response.output_item.added", { output_index: outputIndex, item: { ...item, arguments: "", status: "in_progress" } });
      for (const delta of pieces(item.arguments, 40)) {
        send("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta });
      }
      send("response.function_call_arguments.done", { item_id: item.id, output_index: outputIndex, arguments: item.arguments });
    }
    send("response.output_item.done", { output_index: outputIndex, item });
  });
  send("response.completed", { response: body });
  response.end();
}

function responses(request, response, headers) {
  const reply = answerResponses(request);
  const inputTokens = tokens(JSON.stringify(request.input ?? []));
  const outputTokens = tokens(JSON.stringify(reply.output));
  const body = {
    id: `resp_mock_${String(++sequence).padStart(6, "0")}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model: request.model,
    output: reply.output,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
  const done = reply.exchanges?.filter((exchange) => exchange.result !== null) ?? [];
  record({
    path: "/v1/responses",
    model: request.model,
    stream: request.stream === true,
    api_key: headers.authorization ? "authorization" : null,
    user_agent: headers["user-agent"] ?? null,
    tools: Array.isArray(request.tools) ? request.tools.map((tool) => tool.name ?? tool.type) : [],
    kind: reply.kind,
    phase: reply.phase ?? null,
    iteration: reply.iteration ?? null,
    tool_results: done.map((exchange) => ({
      tool: exchange.name,
      input: exchange.input,
      is_error: exchange.result.is_error,
      refused: refused(exchange.result),
      text: exchange.result.text.slice(0, 4000),
    })),
    reply: reply.output.map((item) => (item.type === "message"
      ? { type: "text", text: item.content[0].text }
      : { type: "tool_use", name: item.name, input: JSON.parse(item.arguments) })),
    usage: { input_tokens: inputTokens, output_tokens: outputTokens },
  });
  if (request.stream === true) streamResponse(response, body);
  else sendJson(response, 200, body);
}

// ---- the OpenAI chat-completions API (Aider) -----------------------------------------------
//
// Aider has no tools. It shows the model the files added to its chat, applies the edits written
// in the reply's text in the edit format its system prompt describes (SEARCH/REPLACE blocks for
// `diff`, whole files for `whole`), and speaks again only when something needs an answer. So
// the phases' actions become turns: a Read asks for the file to be added to the chat (Aider asks
// itself "Add file to the chat?", `--yes-always` says yes, and the next request holds the file);
// Write and Edit are blocks of the reply, applied after it. Aider runs the test command itself
// after the edits when `--auto-test` is on (its system prompt then says "The user's pre-commit
// runs this test command") and sends its output back only when it fails; it runs no other
// command (`--yes-always` answers no to "Run shell command?"), so other Bash steps are left out.
// The answer that carries the edits therefore carries the final answer too: an edit that
// applies and a test run that passes bring no further request. A failed edit, or anything else
// Aider sends back, does, and the answer to it is BLOCKED with Aider's words as the blocker.

/** The fences Aider shows files in: the first its files do not contain. */
const FENCES = [
  ["```", "```"],
  ["````", "````"],
  ["<source>", "</source>"],
  ["<code>", "</code>"],
  ["<pre>", "</pre>"],
  ["<codeblock>", "</codeblock>"],
  ["<sourcecode>", "</sourcecode>"],
];
const FILES_ADDED = "I have *added these files to the chat*";
const AUTO_TEST = /^- The user's pre-commit runs this test command, don't suggest running them: (.+)$/m;
const RUN_OUTPUT = /^I ran this command:\n\n([\s\S]*?)\n\nAnd got this output:\n\n([\s\S]*)$/;

/** The files of the chat by path, and the fence Aider shows them in. */
function chatFiles(messages) {
  const files = new Map();
  let fence = FENCES[0];
  const message = messages.find((item) => item.role === "user" && textOf(item.content).startsWith(FILES_ADDED));
  const lines = message ? textOf(message.content).split("\n") : [];
  for (let index = 1; index < lines.length; index += 1) {
    const opened = FENCES.find(([open]) => lines[index] === open);
    const path = lines[index - 1].trim();
    const end = opened ? lines.indexOf(opened[1], index + 1) : -1;
    if (end < 0 || path === "") continue;
    const body = lines.slice(index + 1, end);
    files.set(path, body.length > 0 ? `${body.join("\n")}\n` : "");
    fence = opened;
    index = end;
  }
  return { files, fence };
}

/** What Aider's side of the conversation says: its edit format, files, test runs and complaints. */
function chatState(messages, prompt) {
  const system = messages.filter((item) => item.role === "system").map((item) => textOf(item.content)).join("\n");
  let format = null;
  if (system.includes("<<<<<<< SEARCH")) format = "diff";
  else if (system.includes("*file listing*")) format = "whole";
  const start = messages.findIndex((item) => item.role === "user" && textOf(item.content) === prompt.text);
  let testOutput = null;
  const feedback = [];
  for (const message of messages.slice(start + 1)) {
    if (message.role !== "user") continue;
    const text = textOf(message.content);
    if (text.startsWith("I added these files to the chat")) continue;
    const ran = text.match(RUN_OUTPUT);
    if (ran) {
      if (ran[1].trim() === prompt.testCommand) testOutput = ran[2];
      continue;
    }
    feedback.push(text);
  }
  const problem = format === null
    ? "mock-model writes Aider's diff and whole edit formats, and the system prompt asks for another"
    : feedback.join("\n") || null;
  return { ...chatFiles(messages), format, autoTest: system.match(AUTO_TEST)?.[1]?.trim() ?? null, testOutput, problem };
}

/** The edit block of a Write or Edit action in the chat's edit format; `content` is the new text. */
function editBlock(chat, action, content) {
  const { tool, input } = action;
  const line = (text) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);
  const [open, close] = chat.fence;
  if (chat.format === "diff") {
    const search = tool === "Edit" ? line(input.old_string) : "";
    const replace = line(tool === "Edit" ? input.new_string : content);
    return `${input.file_path}\n${open}\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n${close}\n`;
  }
  return `${input.file_path}\n${open}\n${line(content)}${close}\n`;
}

/**
 * The reply to a chat-completions request of a phase: the files to add to the chat when a Read
 * needs one, else the edit blocks and the final answer. The phase's script is walked from the
 * start on every request, its actions resolved from what the conversation holds.
 */
function chatPlan(context, chat) {
  const exchanges = [];
  const asks = [];
  const blocks = [];
  const later = (text) => ({ is_error: false, text: "", later: text });
  for (const step of SCRIPTS[context.phase]) {
    const action = step(context, exchanges);
    if (action === null) continue;
    const { tool, input } = action;
    if (tool === "Read") {
      const text = chat.files.get(input.file_path);
      if (text === undefined) asks.push(input.file_path);
      exchanges.push({ name: tool, via: "chat", input, result: text === undefined ? null : { is_error: false, text } });
    } else if (tool === "Write" || tool === "Edit") {
      const content = editedText(action, exchanges);
      const result = chat.problem === null
        ? { is_error: false, text: "Aider applies it after this answer" }
        : { is_error: true, text: chat.problem };
      if (chat.problem === null) blocks.push(editBlock(chat, action, content));
      exchanges.push({ name: tool, via: "chat", input: { ...input, content }, result });
    } else if (tool === "Bash" && input.command === context.testCommand) {
      let result;
      if (chat.autoTest === input.command && blocks.length > 0) {
        result = later("Aider runs it after applying these edits (--auto-test) and shows me its output only when it fails");
      } else if (chat.testOutput !== null) {
        result = { is_error: true, text: chat.testOutput };
      } else if (chat.autoTest === input.command) {
        result = later("Aider runs it only after an edit and this answer has none; prpd runs it and measures");
      } else {
        result = later("Aider runs no command in this phase; prpd runs it and measures");
      }
      exchanges.push({ name: tool, via: "chat", input, result });
    }
  }
  if (asks.length > 0) {
    return { exchanges, text: `I need these files in the chat before I change anything:\n\n${asks.join("\n")}\n` };
  }
  return { exchanges, text: `${blocks.join("\n")}${blocks.length > 0 ? "\n" : ""}${finalAnswer(context, exchanges)}` };
}

/** The text and the conversation's actions of the answer to a /v1/chat/completions request. */
function answerChat(request) {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const prompt = prpdPrompt(messages);
  if (prompt === null) return { kind: "side", text: "OK." };
  const chat = chatState(messages, prompt);
  const plan = chatPlan({ ...prompt, root: "." }, chat);
  return { kind: "phase", phase: prompt.phase, iteration: prompt.iteration, format: chat.format, ...plan };
}

/** The reply as chat.completion.chunk events: the role, the text in pieces, the stop, the usage. */
function streamChat(response, body, includeUsage) {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const { choices, usage, ...head } = body;
  const chunk = (delta, finish, extra = {}) => {
    const choice = { index: 0, delta, logprobs: null, finish_reason: finish };
    const data = { ...head, object: "chat.completion.chunk", choices: [choice], ...extra };
    response.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  chunk({ role: "assistant", content: "" }, null);
  for (const content of pieces(choices[0].message.content, 80)) chunk({ content }, null);
  chunk({}, "stop");
  if (includeUsage) response.write(`data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [], usage })}\n\n`);
  response.write("data: [DONE]\n\n");
  response.end();
}

function chatCompletions(request, response, headers) {
  const reply = answerChat(request);
  const promptTokens = tokens(JSON.stringify(request.messages ?? []));
  const completionTokens = tokens(reply.text);
  const body = {
    id: `chatcmpl-mock-${String(++sequence).padStart(6, "0")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{
      index: 0,
      message: { role: "assistant", content: reply.text, refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  };
  record({
    path: "/v1/chat/completions",
    model: request.model,
    stream: request.stream === true,
    api_key: headers.authorization ? "authorization" : null,
    user_agent: headers["user-agent"] ?? null,
    edit_format: reply.format ?? null,
    kind: reply.kind,
    phase: reply.phase ?? null,
    iteration: reply.iteration ?? null,
    tool_results: (reply.exchanges ?? []).filter((exchange) => exchange.result !== null).map((exchange) => ({
      tool: exchange.name,
      input: exchange.input,
      is_error: exchange.result.is_error,
      refused: refused(exchange.result),
      later: exchange.result.later ?? null,
      text: exchange.result.text.slice(0, 4000),
    })),
    reply: [{ type: "text", text: reply.text }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens },
  });
  if (request.stream === true) streamChat(response, body, request.stream_options?.include_usage === true);
  else sendJson(response, 200, body);
}

// ---- answering ----------------------------------------------------------------------------

let sequence = 0;

/** A rough token count, so the CLI has usage to report (about four characters a token). */
function tokens(text) {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The content blocks and stop reason of the answer to a /v1/messages request. */
function answer(request) {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const prompt = prpdPrompt(messages);
  if (prompt === null) {
    // A request of the CLI's own (a title, a summary, a check): a short plain answer.
    return { kind: "side", content: [{ type: "text", text: "OK." }], stop: "end_turn" };
  }
  const root = systemText(request).match(/Primary working directory: (\S+)/)?.[1] ?? process.cwd();
  const context = { ...prompt, root };
  const exchanges = toolExchanges(messages);
  const action = nextAction(context, exchanges);
  const base = { kind: "phase", phase: prompt.phase, iteration: prompt.iteration, exchanges };
  if (action.final !== undefined) {
    return { ...base, content: [{ type: "text", text: action.final }], stop: "end_turn" };
  }
  sequence += 1;
  const id = `toolu_mock_${String(sequence).padStart(6, "0")}`;
  return {
    ...base,
    content: [
      { type: "text", text: `Next: ${action.tool}.` },
      { type: "tool_use", id, name: action.tool, input: action.input },
    ],
    stop: "tool_use",
  };
}

function usageOf(request, content) {
  return {
    input_tokens: tokens(JSON.stringify(request.messages ?? [])),
    output_tokens: tokens(JSON.stringify(content)),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function sse(response, event, data) {
  response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

/** Pieces of at most `size` characters: the stream delivers text and tool input in parts. */
function pieces(text, size) {
  const parts = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts.length > 0 ? parts : [""];
}

function streamMessage(response, message) {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const { usage } = message;
  sse(response, "message_start", {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  sse(response, "ping", {});
  message.content.forEach((content, index) => {
    if (content.type === "text") {
      sse(response, "content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of pieces(content.text, 80)) {
        sse(response, "content_block_delta", { index, delta: { type: "text_delta", text } });
      }
    } else {
      sse(response, "content_block_start", {
        index,
        content_block: { type: "tool_use", id: content.id, name: content.name, input: {} },
      });
      for (const partial of pieces(JSON.stringify(content.input), 40)) {
        sse(response, "content_block_delta", { index, delta: { type: "input_json_delta", partial_json: partial } });
      }
    }
    sse(response, "content_block_stop", { index });
  });
  sse(response, "message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(response, "message_stop", {});
  response.end();
}

function sendJson(response, status, body) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function notFound(response, what) {
  sendJson(response, 404, { type: "error", error: { type: "not_found_error", message: `mock-model: no ${what}` } });
}

function record(entry) {
  if (RECORD) appendFileSync(RECORD, `${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

function messages(request, response, headers) {
  const reply = answer(request);
  const message = {
    id: `msg_mock_${String(++sequence).padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content: reply.content,
    stop_reason: reply.stop,
    stop_sequence: null,
    usage: usageOf(request, reply.content),
  };
  const last = reply.exchanges?.filter((exchange) => exchange.result !== null) ?? [];
  record({
    path: "/v1/messages",
    model: request.model,
    stream: request.stream === true,
    max_tokens: request.max_tokens,
    api_key: headers["x-api-key"] ? "x-api-key" : headers.authorization ? "authorization" : null,
    user_agent: headers["user-agent"] ?? null,
    tools: Array.isArray(request.tools) ? request.tools.map((tool) => tool.name) : [],
    kind: reply.kind,
    phase: reply.phase ?? null,
    iteration: reply.iteration ?? null,
    // Every tool call of the conversation with what the CLI sent back: the last request of a
    // phase holds them all.
    tool_results: last.map((exchange) => ({
      tool: exchange.name,
      input: exchange.input,
      is_error: exchange.result.is_error,
      refused: refused(exchange.result),
      text: exchange.result.text.slice(0, 4000),
    })),
    reply: reply.content.map((content) => (content.type === "text"
      ? { type: "text", text: content.text }
      : { type: "tool_use", name: content.name, input: content.input })),
    stop_reason: reply.stop,
    usage: message.usage,
  });
  if (request.stream === true) streamMessage(response, message);
  else sendJson(response, 200, message);
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const path = (request.url ?? "/").split("?")[0];
    const text = Buffer.concat(chunks).toString("utf8");
    if (request.method === "HEAD" || request.method === "GET") {
      if (path === "/" || path === "/api/hello") return sendJson(response, 200, { status: "ok" });
      if (path === "/v1/models") {
        // Both APIs' list shapes at once: Anthropic's paging fields, OpenAI's `object`.
        return sendJson(response, 200, { object: "list", data: [], has_more: false, first_id: null, last_id: null });
      }
      record({ path, method: request.method, kind: "unknown" });
      return notFound(response, `${request.method} ${path}`);
    }
    let body;
    try {
      body = text === "" ? {} : JSON.parse(text);
    } catch (error) {
      return sendJson(response, 400, {
        type: "error",
        error: { type: "invalid_request_error", message: `mock-model: the body is not JSON: ${error.message}` },
      });
    }
    if (request.method === "POST" && path === "/v1/messages") return messages(body, response, request.headers);
    if (request.method === "POST" && path === "/v1/responses") return responses(body, response, request.headers);
    if (request.method === "POST" && path === "/v1/chat/completions") {
      return chatCompletions(body, response, request.headers);
    }
    if (request.method === "POST" && path === "/v1/messages/count_tokens") {
      record({ path, model: body.model ?? null, kind: "count_tokens" });
      return sendJson(response, 200, { input_tokens: tokens(JSON.stringify(body.messages ?? [])) });
    }
    record({ path, method: request.method, kind: "unknown" });
    return notFound(response, `${request.method} ${path}`);
  });
});

server.listen(PORT, HOST, () => {
  const { port } = server.address();
  process.stdout.write(`mock-model listening on http://${HOST}:${port}\n`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
