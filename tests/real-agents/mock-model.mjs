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
// run the CLI refused makes the phase BLOCKED. One story, three wire formats: the story is
// mock/story.mjs, and each API's module (mock/anthropic.mjs, mock/responses.mjs for Codex's
// shell commands, mock/chat.mjs for Aider's chat turns) reads what its CLI sent back into the
// same actions, so the scripts and the final answers are shared. This file is the server.
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

import { createServer } from "node:http";

import { messages } from "./mock/anthropic.mjs";
import { chatCompletions } from "./mock/chat.mjs";
import { responses } from "./mock/responses.mjs";
import { notFound, record, recordTo, sendJson, tokens } from "./mock/wire.mjs";

// ---- options ------------------------------------------------------------------------------

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

const HOST = option("host", "127.0.0.1");
const PORT = Number.parseInt(option("port", "0"), 10);
const RECORD = option("record", process.env.MOCK_MODEL_RECORD ?? "");
recordTo(RECORD);

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
