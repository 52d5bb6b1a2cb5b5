// The Anthropic Messages API (Claude Code): tool use with the story's actions as they are
// (Read, Write, Edit, Bash are Claude Code's own tools), streamed as SSE or sent as one JSON
// message.

import { finalAnswer, nextAction, prpdPrompt, readText, refused, textOf } from "./story.mjs";
import { mockId, pieces, record, sendJson, sse, tokens } from "./wire.mjs";

function systemText(request) {
  return typeof request.system === "string" ? request.system : textOf(request.system);
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
  const id = mockId("toolu_mock_");
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

function messages(request, response, headers) {
  const reply = answer(request);
  const message = {
    id: mockId("msg_mock_"),
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

export { messages };
