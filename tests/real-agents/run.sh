#!/usr/bin/env bash
# The end-to-end scenario with a real agent CLI, outside `cargo test`: prpd drives the real CLI,
# pointed at the local mock model server (mock-model.mjs), through the whole loop on the `calc`
# fixture (calc/), and this script checks what tests/it/real_claude.rs checks: SHIPPED, the
# agent's own test runs were not refused, the tokens prpd read are the ones the mock reported,
# no process the run started is left, the repository's index is as it was. For Aider the
# tokens and cost are compared as Aider prints them (rounded), and its `.aider*` files must be
# in no commit nor in the index.
#
#   tests/real-agents/run.sh claude|codex|aider
#
# Needs git, node and the agent CLI on PATH (Claude Code: `npm install -g
# @anthropic-ai/claude-code@2`; Codex CLI: `npm install -g @openai/codex`; Aider: `python3 -m venv
# /opt/aider && /opt/aider/bin/pip install 'aider-chat==0.86.*'`, then /opt/aider/bin on PATH).
# The agent's own settings come from the environment, as a user's would: `AIDER_EDIT_FORMAT=whole
# run.sh aider` plays the story in Aider's whole-file format. prpd is $PRPD when set, else built
# with cargo. The run happens in a new temporary directory with its own HOME, so nothing of
# yours is read or changed; it is removed when everything holds (unless KEEP=1) and kept, its
# path printed, when something does not.
set -euo pipefail

agent="${1:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

case "$agent" in
  claude|codex|aider) ;;
  *)
    echo "usage: $0 claude|codex|aider" >&2
    exit 2
    ;;
esac

for tool in git node "$agent"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    case "$tool" in
      claude) echo "error: claude is not installed: npm install -g @anthropic-ai/claude-code@2" >&2 ;;
      codex) echo "error: codex is not installed: npm install -g @openai/codex" >&2 ;;
      aider)
        echo "error: aider is not installed: python3 -m venv /opt/aider &&" \
          "/opt/aider/bin/pip install 'aider-chat==0.86.*', then put /opt/aider/bin on PATH" >&2
        ;;
      *) echo "error: $tool is not installed" >&2 ;;
    esac
    exit 2
  fi
done

if [ -z "${PRPD:-}" ]; then
  cargo build --quiet --manifest-path "$root/Cargo.toml"
  PRPD="$root/target/debug/prpd"
fi
PRPD="$(cd "$(dirname "$PRPD")" && pwd)/$(basename "$PRPD")"

work="$(mktemp -d "${TMPDIR:-/tmp}/prpd-real-$agent-XXXXXX")"
mock_pid=""
cleanup() {
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# The fixture repository, with the agent's prpd.toml.
cp -a "$here/calc" "$work/repo"
cp "$here/prpd-$agent.toml" "$work/repo/prpd.toml"
mkdir -p "$work/home"
# npm checks the registry for a newer npm from a home without this (the agent's `npm test`).
printf 'update-notifier=false\n' > "$work/home/.npmrc"
git -C "$work/repo" init -q -b main
git -C "$work/repo" add -A
git -C "$work/repo" -c user.email=e2e@prpd.invalid -c user.name="prpd e2e" commit -q -m calc

# The mock, on a free port; it prints its address once it listens.
node "$here/mock-model.mjs" --record "$work/requests.jsonl" > "$work/mock.out" 2>&1 &
mock_pid=$!
for _ in $(seq 50); do
  grep -q listening "$work/mock.out" && break
  sleep 0.1
done
url="$(sed -n 's/^mock-model listening on //p' "$work/mock.out")"
if [ -z "$url" ]; then
  echo "error: the mock model server did not start:" >&2
  cat "$work/mock.out" >&2
  exit 1
fi

echo "mock model: $url; run directory: $work"
status=0
(
  cd "$work/repo"
  export HOME="$work/home"
  case "$agent" in
    claude)
      export ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=test-key
      export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
        DISABLE_ERROR_REPORTING=1
      ;;
    codex)
      # Codex reads its model provider from CODEX_HOME/config.toml, and the key from the variable
      # its env_key names (Codex's built-in provider sends no key from OPENAI_API_KEY).
      export CODEX_HOME="$work/home/.codex" OPENAI_API_KEY=test-key
      mkdir -p "$CODEX_HOME"
      printf '%s\n' 'model_provider = "mock"' '[model_providers.mock]' 'name = "mock"' \
        "base_url = \"$url/v1\"" 'wire_api = "responses"' 'env_key = "OPENAI_API_KEY"' \
        > "$CODEX_HOME/config.toml"
      ;;
    aider)
      # litellm sends an `openai/` model to OPENAI_API_BASE. The rest keeps Aider off the
      # network: litellm fetches its model price list when it is imported unless
      # LITELLM_LOCAL_MODEL_COST_MAP is set, and Aider fetches it too for every model it uses
      # (the main, weak and editor models) that its model metadata file does not describe.
      export OPENAI_API_BASE="$url/v1" OPENAI_API_KEY=test-key LITELLM_LOCAL_MODEL_COST_MAP=True
      cp "$here/aider.model.metadata.json" "$HOME/.aider.model.metadata.json"
      ;;
  esac
  "$PRPD" run PRPs/multiply.md --json > "$work/summary.json" 2> "$work/prpd.err"
) || status=$?

# What the run left: processes that carry the agent's marker in their environment (what prpd
# started inherited it; the mock did not), or whose working directory is in the run's directory.
case "$agent" in
  claude) marker="ANTHROPIC_BASE_URL=$url" ;;
  codex) marker="CODEX_HOME=$work/home/.codex" ;;
  aider) marker="OPENAI_API_BASE=$url/v1" ;;
esac
left=()
for _ in $(seq 20); do
  left=()
  for environ in /proc/[0-9]*/environ; do
    pid="${environ#/proc/}"; pid="${pid%/environ}"
    [ "$pid" = "$mock_pid" ] && continue
    cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null || true)"
    if [ "${cwd#"$work"}" != "$cwd" ] \
      || { tr '\0' '\n' 2>/dev/null < "$environ"; } 2>/dev/null | grep -qxF "$marker"; then
      state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo Z)"
      [ "$state" = "Z" ] || left+=("$pid")
    fi
  done
  [ "${#left[@]}" -eq 0 ] && break
  sleep 0.1
done

failures=()
state="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).state)' "$work/summary.json" 2>/dev/null || echo none)"
tokens="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tokens ?? 0)' "$work/summary.json" 2>/dev/null || echo 0)"
[ "$status" -eq 0 ] || failures+=("prpd exited $status")
[ "$state" = "SHIPPED" ] || failures+=("the run ended $state, not SHIPPED")
[ "$tokens" != "0" ] || failures+=("no usage was read (summary tokens: $tokens)")
# The agent's own test runs: Claude Code and Codex run the test command as a tool call, whose
# result the mock saw; Aider runs it after its edits in GREEN (`--test-cmd`, `--auto-test`) and
# sends the output back only when it fails, so its runs are read from the GREEN iterations'
# output logs.
run_dir="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).run_id ?? "")' "$work/summary.json" 2>/dev/null || true)"
refusals="$(node -e '
  const fs = require("fs");
  const [agent, requests, runDir] = process.argv.slice(1);
  const lines = fs.existsSync(requests)
    ? fs.readFileSync(requests, "utf8").trim().split("\n").filter(Boolean)
    : [];
  const refused = new Set();
  const testOutput = /^(ℹ|#) tests \d+/m;
  let testRuns = 0;
  for (const line of lines) {
    for (const result of JSON.parse(line).tool_results ?? []) {
      if (result.refused) refused.add(`${result.tool} ${JSON.stringify(result.input)}: ${result.text}`);
      if (result.tool === "Bash" && !result.refused && testOutput.test(result.text)) testRuns += 1;
    }
  }
  if (agent === "aider") {
    const iterations = `${runDir}/iterations`;
    const green = fs.existsSync(iterations) ? fs.readdirSync(iterations).filter((name) => /-green-/.test(name)) : [];
    for (const name of green) {
      const log = `${iterations}/${name}/output.log`;
      if (fs.existsSync(log) && testOutput.test(fs.readFileSync(log, "utf8"))) testRuns += 1;
    }
  }
  if (testRuns === 0) refused.add("no test run of the agent came back with test output");
  console.log([...refused].join("\n"));
' "$agent" "$work/requests.jsonl" "$work/repo/.prp-session/runs/$run_dir" 2>&1 || echo "cannot read $work/requests.jsonl")"
[ -z "$refusals" ] || failures+=("refused or missing tool calls: $refusals")

# prpd changes no index during a run: after it, the index holds HEAD's tree.
staged="$(git -C "$work/repo" diff --cached --name-only 2>&1)"
[ -z "$staged" ] || failures+=("the repository's index differs from HEAD: $staged")

if [ "$agent" = aider ]; then
  # Aider's files stay out of git: excluded, never in the index nor in a snapshot. A shipped
  # run has removed its snapshot refs, so every commit the repository holds is looked into.
  grep -qxF '/.aider*' "$work/repo/.git/info/exclude" \
    || failures+=("/.aider* is not in .git/info/exclude")
  aider_files="$(git -C "$work/repo" ls-files --cached -- '.aider*')"
  for commit in $(git -C "$work/repo" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' \
    | awk '$1 == "commit" { print $2 }'); do
    aider_files+="$(git -C "$work/repo" ls-tree -r --name-only "$commit" | grep '^\.aider' | sed "s|^|$commit:|" || true)"
  done
  [ -z "$aider_files" ] || failures+=("Aider's files were staged or snapshotted: $aider_files")

  # What prpd read from Aider's `Tokens: … sent, … received. Cost: …` lines must be what the mock
  # reported, as Aider prints it: `1234` tokens is `1.2k`, `12345` is `12k` (Aider's own
  # format_tokens), and the cost is Aider's session cost rounded as printed (two decimals from a
  # cent up), at the prices of aider.model.metadata.json.
  usage_problems="$(node -e '
    const fs = require("fs");
    const [requests, summaryFile, metadataFile] = process.argv.slice(1);
    const summary = JSON.parse(fs.readFileSync(summaryFile, "utf8"));
    const prices = JSON.parse(fs.readFileSync(metadataFile, "utf8"));
    const asAiderPrints = (count) => {
      if (count < 1000) return count;
      const half = (value) => Math.floor(value) + (Math.floor(value) % 2);
      if (count < 10000) {
        const tenths = count % 500 === 250 ? half(count / 100) : Number((count / 1000).toFixed(1).replace(".", ""));
        return tenths * 100;
      }
      return (count % 1000 === 500 ? half(count / 1000) : Math.round(count / 1000)) * 1000;
    };
    let input = 0, output = 0, cost = 0;
    for (const line of fs.readFileSync(requests, "utf8").trim().split("\n").filter(Boolean)) {
      const request = JSON.parse(line);
      if (request.path !== "/v1/chat/completions") continue;
      const price = prices[`openai/${request.model}`] ?? prices[request.model];
      input += asAiderPrints(request.usage.prompt_tokens);
      output += asAiderPrints(request.usage.completion_tokens);
      cost += request.usage.prompt_tokens * price.input_cost_per_token
        + request.usage.completion_tokens * price.output_cost_per_token;
    }
    const problems = [];
    const read = summary.token_usage ?? {};
    if (read.input !== input || read.output !== output || summary.tokens !== input + output) {
      problems.push(`prpd read ${read.input} input and ${read.output} output tokens (${summary.tokens} in all), Aider printed ${input} and ${output}`);
    }
    const slack = 0.005 * summary.agent_invocations;
    if (!(Math.abs((summary.cost_usd ?? 0) - cost) <= slack)) {
      problems.push(`prpd read a cost of $${summary.cost_usd}, the mock billed $${cost.toFixed(4)} (± $${slack} of Aider rounding)`);
    }
    console.log(problems.join("; "));
  ' "$work/requests.jsonl" "$work/summary.json" "$here/aider.model.metadata.json" 2>&1 || echo "cannot compare the usage")"
  [ -z "$usage_problems" ] || failures+=("usage: $usage_problems")
fi
if [ "$agent" != aider ]; then
  # Claude Code and Codex report the provider's usage exactly: what prpd read must be the sum of
  # what the mock reported, request by request (the mock reports no cached input).
  reported="$(node -e '
    const fs = require("fs");
    let sum = 0;
    for (const line of fs.readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean)) {
      const usage = JSON.parse(line).usage;
      if (usage) sum += (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
    }
    console.log(sum);
  ' "$work/requests.jsonl" 2>/dev/null || echo unknown)"
  [ "$tokens" = "$reported" ] \
    || failures+=("prpd read $tokens tokens, the mock reported $reported")
fi
[ "${#left[@]}" -eq 0 ] || failures+=("processes left running: ${left[*]}")

cat "$work/summary.json"
if [ "${#failures[@]}" -gt 0 ]; then
  printf 'FAILED: %s\n' "${failures[@]}" >&2
  echo "prpd's log: $work/prpd.err; requests the mock saw: $work/requests.jsonl; kept: $work" >&2
  for pid in "${left[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  exit 1
fi
echo "OK: $agent shipped the calc scenario against the mock ($tokens tokens)"
if [ -n "${KEEP:-}" ]; then
  echo "kept: $work"
else
  rm -rf "$work"
fi
