// The OpenAI chat-completions API (Aider).
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

import { editedText, finalAnswer, prpdPrompt, refused, SCRIPTS, textOf } from "./story.mjs";
import { mockId, pieces, record, sendJson, tokens } from "./wire.mjs";

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
    id: mockId("chatcmpl-mock-"),
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

export { chatCompletions };
