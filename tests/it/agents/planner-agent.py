#!/usr/bin/env python3
"""A scripted planner agent for `prpd plan --agent` (tests/it/web_plan_agent.rs).

It reads prpd's planner prompt on stdin, starts the `prpd mcp` it was told about ($PRPD_EXE,
with $PRPD_PLAN_RUN inherited, as Claude Code would start a configured MCP server), reads the
exploration, looks one page further with open_url, and then, by its first argument:
  finalize  hands its plan to finalize_test_plan and ends with a short answer;
  answer    ends its answer with the plan as a ```json block (no finalize call);
  none      ends with prose and no plan.
Standard library only: MCP over stdio is one JSON-RPC message per line.
"""
import json
import os
import subprocess
import sys

behaviour = sys.argv[1]
prompt = sys.stdin.read()
assert "### Page `signup`" in prompt, "the prompt lists the explored pages"

server = subprocess.Popen(
    [os.environ["PRPD_EXE"], "mcp", "--root", os.getcwd()],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    text=True,
)
next_id = 0


def request(method, params):
    global next_id
    next_id += 1
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    while True:
        message = json.loads(server.stdout.readline())
        if message.get("id") == next_id:
            return message


def call(tool, arguments):
    result = request("tools/call", {"name": tool, "arguments": arguments})["result"]
    assert not result.get("isError"), (tool, result)
    return result["structuredContent"]


request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "planner-agent", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
server.stdin.flush()

pages = [page["id"] for page in call("list_known_pages", {})["pages"]]
assert "signup" in pages, pages
call("propose_test_cases_for_page", {"pageId": "signup", "notes": "age limits"})
further = call("open_url", {"url": "/docs/two.html"})
assert further["pageId"] == "docs-two", further

plan = {
    "flows": [{"id": "join", "name": "Join", "pagePath": ["home", "signup"]}],
    "cases": [
        {"id": "signup-age-13", "name": "A 13-year-old can sign up", "type": "boundary", "priority": "p0",
         "relatedPageIds": ["signup"], "steps": [{"description": "Enter age 13 and submit", "expectedResult": "The account is created"}]},
        {"id": "login-ok", "name": "A member logs in", "type": "form", "priority": "p1",
         "relatedPageIds": ["login"], "preconditions": ["An account {{APP_USER}} / {{APP_PASSWORD}}"],
         "steps": [{"description": "Log in", "expectedResult": "The notes open"}]},
        {"id": "docs-back", "name": "The docs link back", "type": "navigation", "priority": "p2",
         "relatedPageIds": ["docs-two"], "steps": [{"description": "Follow 'getting started'", "expectedResult": "Docs one opens"}]},
    ],
}
if behaviour == "finalize":
    done = call("finalize_test_plan", plan)
    assert done["ok"], done
    print("I handed the plan to finalize_test_plan: " + ", ".join(done["specs"]))
elif behaviour == "answer":
    print("Here is the plan.\n\n```json\n" + json.dumps(plan, indent=2) + "\n```")
else:
    print("I looked around and have no plan to offer.")
server.stdin.close()
server.wait(timeout=30)
