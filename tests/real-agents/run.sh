#!/usr/bin/env bash
# The end-to-end scenario with a real agent CLI, outside `cargo test`: prpd drives the real CLI,
# pointed at the local mock model server (mock-model.mjs), through the whole loop on the `calc`
# fixture (calc/), and this script checks what tests/it/real_claude.rs checks: SHIPPED, the
# agent's own test runs were not refused, usage was read, no process the run started is left.
#
#   tests/real-agents/run.sh claude|codex|aider
#
# Needs git, node and the agent CLI on PATH (Claude Code: `npm install -g
# @anthropic-ai/claude-code@2`; Codex CLI: `npm install -g @openai/codex`). Aider is not played
# yet (the mock has no chat completions). prpd is $PRPD when set, else built with cargo. The run happens
# in a new temporary directory with its own HOME, so nothing of yours is read or changed; it is
# removed when everything holds (unless KEEP=1) and kept, its path printed, when something does
# not.
set -euo pipefail

agent="${1:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

case "$agent" in
  claude|codex) ;;
  aider)
    echo "$agent: not yet: needs the chat-completions API in mock-model.mjs" >&2
    exit 2
    ;;
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
      # Codex reads its model provider from CODEX_HOME/config.toml; the key from OPENAI_API_KEY.
      export CODEX_HOME="$work/home/.codex" OPENAI_API_KEY=test-key
      mkdir -p "$CODEX_HOME"
      printf '%s\n' 'model_provider = "mock"' '[model_providers.mock]' 'name = "mock"' \
        "base_url = \"$url/v1\"" 'wire_api = "responses"' 'env_key = "OPENAI_API_KEY"' \
        > "$CODEX_HOME/config.toml"
      ;;
  esac
  "$PRPD" run PRPs/multiply.md --json > "$work/summary.json" 2> "$work/prpd.err"
) || status=$?

# What the run left: processes that carry the agent's marker in their environment (what prpd
# started inherited it; the mock did not), or whose working directory is in the run's directory.
case "$agent" in
  claude) marker="ANTHROPIC_BASE_URL=$url" ;;
  codex) marker="CODEX_HOME=$work/home/.codex" ;;
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
refusals="$(node -e '
  const fs = require("fs");
  const lines = fs.existsSync(process.argv[1])
    ? fs.readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean)
    : [];
  const refused = new Set();
  let testRuns = 0;
  for (const line of lines) {
    for (const result of JSON.parse(line).tool_results ?? []) {
      if (result.refused) refused.add(`${result.tool} ${JSON.stringify(result.input)}: ${result.text}`);
      if (result.tool === "Bash" && !result.refused && /^(ℹ|#) tests \d+/m.test(result.text)) testRuns += 1;
    }
  }
  if (testRuns === 0) refused.add("no test run of the agent came back with test output");
  console.log([...refused].join("\n"));
' "$work/requests.jsonl" 2>&1 || echo "cannot read $work/requests.jsonl")"
[ -z "$refusals" ] || failures+=("refused or missing tool calls: $refusals")
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
