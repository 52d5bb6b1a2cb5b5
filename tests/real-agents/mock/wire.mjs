// What the three APIs share on the wire: ids, token counts, server-sent events, JSON replies and
// the record of every request.

import { appendFileSync } from "node:fs";

let sequence = 0;
let recordFile = "";

/** The next number of the mock's ids: one sequence for every id it hands out. */
function nextNumber() {
  sequence += 1;
  return sequence;
}

/** An id such as `msg_mock_000012`. */
function mockId(prefix, number = nextNumber()) {
  return `${prefix}${String(number).padStart(6, "0")}`;
}

/** A rough token count, so the CLI has usage to report (about four characters a token). */
function tokens(text) {
  return Math.max(1, Math.ceil(text.length / 4));
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

function sendJson(response, status, body) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function notFound(response, what) {
  sendJson(response, 404, { type: "error", error: { type: "not_found_error", message: `mock-model: no ${what}` } });
}

/** Where `record` appends; nothing is recorded until it is set. */
function recordTo(file) {
  recordFile = file;
}

function record(entry) {
  if (recordFile) appendFileSync(recordFile, `${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

export { mockId, nextNumber, notFound, pieces, record, recordTo, sendJson, sse, tokens };
