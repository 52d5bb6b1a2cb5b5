// The OpenAI Responses API (Codex CLI).
//
// Codex CLI offers one shell tool, `exec_command` (`{"cmd": "..."}`), so the phases' actions
// become shell commands: Read is `cat PATH`, Write and Edit are a heredoc into PATH (an edit
// writes the whole new text, computed from the file as the conversation last read it), Bash is
// the command itself. The commands are read back into the same actions, so the scripts and the
// final answers are shared with the Anthropic side.

import { commandOutput, editedText, nextAction, prpdPrompt, refused, textOf } from "./story.mjs";
import { mockId, nextNumber, pieces, record, sendJson, sse, tokens } from "./wire.mjs";

const HEREDOC = "MOCK_MODEL_EOF";

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
    id: mockId("msg_mock_"),
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
  const number = nextNumber();
  return {
    ...base,
    output: [{
      type: "function_call",
      id: mockId("fc_mock_", number),
      call_id: mockId("call_mock_", number),
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
    id: mockId("resp_mock_"),
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

export { responses };
