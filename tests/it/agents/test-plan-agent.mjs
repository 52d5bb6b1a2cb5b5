#!/usr/bin/env node
// The RED agent of the TestPlan tests (tests/it/test_plan.rs), on the `calc` fixture of
// tests/it/run.rs. It writes two failing tests for `multiply` and ends its answer with a
// TestPlan the way a real agent does: in prose, after another code block, before its status
// block. The behaviour says which plan it gives.
//
// Usage, as prpd.toml's `command`: node test-plan-agent.mjs BEHAVIOUR [LAST_MESSAGE_FILE]
//
// With LAST_MESSAGE_FILE (prpd's `{last_message_file}`), the answer is also written there, as
// Codex CLI writes its final message: prpd then reads the plan from that file.
//
//   honest       a plan whose two cases each have a failing test: `ac-1` by its id, `signs` by
//                its name. Its steps hold {{USERNAME}}, {{PASSWORD}} and {{API_KEY}}; when the
//                agent was given PASSWORD, one careless precondition also holds its value.
//   unmatched    the honest plan plus a case no test covers (`ac-9`); from its second call it
//                gives no plan at all, as if that would withdraw the first one.
//   broken-once  first a plan that does not parse (a trailing comma), then the honest plan.
//
// Every call is appended to `$PRPD_RUN_DIR/test-plan-agent-calls.jsonl` with the feedback
// prpd gave it, so the tests can check what the agent was told.

import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const behaviour = process.argv[2] ?? "honest";
const lastMessageFile = process.argv[3];
const iteration = Number.parseInt(process.env.PRPD_ITERATION ?? "0", 10);

let prompt = "";
for await (const chunk of process.stdin) prompt += chunk;

const feedback = process.env.PRPD_FEEDBACK ?? "";
appendFileSync(
  join(process.env.PRPD_RUN_DIR, "test-plan-agent-calls.jsonl"),
  `${JSON.stringify({
    behaviour,
    iteration,
    prompt_asks_for_a_plan: prompt.includes('"markdownPath"'),
    feedback_text: feedback && existsSync(feedback) ? readFileSync(feedback, "utf8") : null,
  })}\n`,
);

writeFileSync(
  "test/multiply.test.js",
  `import { test } from "node:test";
import assert from "node:assert/strict";
import * as calc from "../src/calc.js";

test("AC-1: multiply returns the product of two numbers", () => {
  assert.equal(calc.multiply(6, 7), 42);
});

test("multiply keeps the sign of a negative factor", () => {
  assert.equal(calc.multiply(-2, 3), -6);
});
`,
);

const careless = process.env.PASSWORD ? [`The test account's password is ${process.env.PASSWORD}`] : [];
const cases = [
  {
    id: "ac-1",
    name: "Multiply returns the product",
    type: "functional",
    priority: "p0",
    relatedPageIds: ["src/calc.js"],
    markdownPath: "functional-p0-ac-1.md",
    preconditions: ["Signed in as {{USERNAME}} / {{PASSWORD}}", ...careless],
    steps: [
      { description: "Call multiply(6, 7) with the key {{API_KEY}}", expectedResult: "It returns 42" },
      { description: "Sign out; {{PASSWORD}} is not shown" },
    ],
  },
  {
    id: "signs",
    name: "Multiply keeps the sign of a negative factor",
    type: "boundary",
    priority: "p1",
    relatedPageIds: ["src/calc.js"],
    steps: [{ description: "Call multiply(-2, 3)", expectedResult: "It returns -6" }],
  },
];
const unmatched = { id: "ac-9", name: "Divides by zero", type: "boundary", priority: "p2" };

let plan;
switch (behaviour) {
  case "honest":
    plan = JSON.stringify({ flows: [{ id: "math", name: "Arithmetic", pagePath: ["src/calc.js"] }], cases }, null, 2);
    break;
  case "unmatched":
    plan = iteration === 1 ? JSON.stringify({ cases: [...cases, unmatched] }, null, 2) : null;
    break;
  case "broken-once":
    plan = iteration === 1 ? '{"cases": [{"id": "ac-1", "name": "Multiply",}]}' : JSON.stringify({ cases }, null, 2);
    break;
  default:
    process.stderr.write(`test-plan-agent: unknown behaviour ${JSON.stringify(behaviour)}\n`);
    process.exit(2);
}

const planText = plan === null ? "No plan this time.\n" : `The plan, as promised {see the cases}:\n\n\`\`\`json\n${plan}\n\`\`\`\n`;
const answer = `I wrote two failing tests in test/multiply.test.js, for example:

\`\`\`js
const product = { of: (a, b) => a * b };
\`\`\`

${planText}
---PRP_PHASE_STATUS---
PHASE: RED
STATUS: COMPLETE
ITERATION: ${iteration}
EXIT_SIGNAL: true
RECOMMENDATION: ${behaviour} test-plan agent
---END_PRP_PHASE_STATUS---
`;
if (lastMessageFile) writeFileSync(lastMessageFile, answer);
process.stdout.write(answer);
