#!/usr/bin/env node
// A wrapper around the demo's scripted agent for the kill -9 test of tests/it/run.rs. It runs
// `.prpd/agents/scripted-agent.mjs` (the demo's agent, copied into the fixture repository) with
// the prompt prpd sent. On the first GREEN call of a run it then stops half way: the agent has
// changed the tree but has not answered yet. It writes its pid to `$PRPD_RUN_DIR/paused` and
// waits, so the test can kill prpd in the middle of the iteration. Before that it starts a
// process in a session of its own (out of its group, as Claude Code's Bash tool runs commands) whose pid
// goes first into `paused`: a resumed prpd must find and stop it too. Every other call answers
// at once, exactly as the scripted agent would.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

let prompt = "";
for await (const chunk of process.stdin) prompt += chunk;

const result = spawnSync("node", [".prpd/agents/scripted-agent.mjs"], {
  input: prompt,
  encoding: "utf8",
});
process.stderr.write(result.stderr ?? "");

const marker = join(process.env.PRPD_RUN_DIR, "paused");
if (process.env.PRPD_PHASE === "GREEN" && !existsSync(marker)) {
  // `detached` makes the child call setsid(2): a session and process group of its own.
  const escaped = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  escaped.unref();
  writeFileSync(marker, `${escaped.pid}\n${process.pid}\n`);
  // Long enough for the test to kill prpd and resume; a prpd that resumes must stop this
  // orphan long before it ends by itself.
  await new Promise((resolve) => setTimeout(resolve, 120_000));
}
process.stdout.write(result.stdout ?? "");
process.exit(result.status ?? 1);
