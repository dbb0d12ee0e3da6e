"""Names the editor prints hold no control characters (issue 35, item 10): what a repository
(commands, skills), an MCP server (prompts, tools), the API (search results), the model (tool
calls, subagents, plans) or the client (a session's title, its first prompt) names reaches the
editor as printable text: no ESC (nor the CSI and OSC sequences it starts), BEL, NUL or other
control; titles and names on one line."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies, routes, web_replies
from acp_agent.tools.mcp.tool import tool_name
from tests.support.agent import AgentProcess
from tests.support.conventions import MCP_SERVER
from tests.support.zed import Editor, zed_initialize
from tests.wire.conftest import turn_record

OSC = "\x1b]0;pwned\x07"  # sets the terminal's window title
CLEAR = "\x1b[2J"  # clears the screen
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def odd_server() -> dict[str, Any]:
    """The test MCP server, with a prompt and a tool whose names hold control characters."""
    env = [{"name": "MCP_TEST_ODD_NAMES", "value": "1"}]
    return {"name": f"odd{CLEAR}", "command": sys.executable, "args": [str(MCP_SERVER)], "env": env}


def controls_in(messages: list[dict[str, Any]]) -> list[str]:
    """Every string of what the agent wrote that holds a control character (newlines and tabs
    aside), as JSON text; a tool call's `rawInput` is data, the model's arguments as they are."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if CONTROL.search(value):
                found.append(json.dumps(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                if key != "rawInput":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for message in messages:
        walk(message)
    return found


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.model_free
async def test_commands_skills_prompts_and_a_rename_reach_the_editor_printable(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    commands = workspace / ".claude" / "commands"
    write(
        commands / "deploy.md",
        f"---\ndescription: Deploy{OSC} now{CLEAR}\x07\nargument-hint: <env\x1b[31m>\n---\nDeploy.\n",
    )
    write(commands / f"bad{CLEAR}name.md", "A command named with an escape.\n")
    write(commands / f"ops{CLEAR}" / "restart.md", "---\ndescription: Restart\n---\nRestart.\n")
    write(
        workspace / ".claude" / "skills" / "tidy" / "SKILL.md",
        f"---\nname: tidy\ndescription: Tidy\x00 up{OSC}\u202e the code\n---\nTidy.\n",
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace, mcp_servers=[odd_server()])
        update = await agent.wait_for(
            lambda m: (
                m["params"]["update"]["sessionUpdate"] == "available_commands_update"
                and any("mcp__" in c["name"] for c in m["params"]["update"]["availableCommands"])
            ),
            timeout=60,
        )
        renamed = await agent.request(
            "session/set_title", {"sessionId": session, "title": f"{OSC}Release\x00 {CLEAR}work\x07"}
        )
        blank = await agent.request("session/set_title", {"sessionId": session, "title": f"{OSC}\x00\x07"})
        listed = await agent.request("session/list", {})
        status = await agent.prompt(session, "/status")
        written = list(agent.messages)
    menu = {c["name"]: c for c in update["params"]["update"]["availableCommands"]}
    assert menu["deploy"]["description"] == "Deploy now (project)"
    assert menu["deploy"]["input"] == {"hint": "<env>"}
    assert menu["restart"]["description"] == "Restart (project:ops)"
    assert menu["tidy"]["description"] == "Tidy up the code (project skill)"
    assert not any(name.startswith("bad") for name in menu)  # a name with an escape is refused
    assert menu[tool_name(f"odd{CLEAR}", "odd")]["description"] == "Clears the screen (MCP: odd)"
    assert renamed["result"] == {"title": "Release work"}
    assert blank["error"]["code"] == -32602
    assert [s["title"] for s in listed["result"]["sessions"]] == ["Release work"]
    assert status["result"]["stopReason"] == "end_turn"
    assert controls_in(written) == []


async def test_tool_calls_a_search_a_subagent_a_plan_and_the_first_prompt_reach_the_editor_printable(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    odd_tool = tool_name(f"odd{CLEAR}", "odd\x1b[31mtool")
    fake_api.route(routes.first_prompt_has("the child's question"), replies.text("the child's answer"))
    search = web_replies.web_search(f"news{OSC}", [(f"Page{OSC} title\x07", "https://example.com/a")])
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block(odd_tool, {"text": "hi"}),
                replies.tool_use_block(
                    "task", {"description": f"Look{CLEAR} around\x07", "prompt": "the child's question"}
                ),
                replies.tool_use_block("update_plan", {"entries": [{"content": f"Step{OSC} one\x00"}]}),
            ],
            stop_reason="tool_use",
        ),
        web_replies.searched(search, text="done"),
    )
    env = {**agent_env, "ACP_AGENT_MODEL": "claude-sonnet-5-5"}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=Editor()) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace, mcp_servers=[odd_server()])
        response = await agent.prompt(session, f"{OSC}Fix{CLEAR} the\x00 bug\x07\nand more", timeout=60)
        written = list(agent.messages)
    assert response["result"]["stopReason"] == "end_turn", response
    assert turn_record(response)["toolCalls"] == 3
    updates = [p["update"] for p in agent.updates(session)]
    titles = [u["title"] for u in updates if u["sessionUpdate"] == "tool_call"]
    assert "MCP oddtool (odd)" in titles, titles  # each escape sequence taken out whole
    assert "Subagent: Look around" in titles and "Search the web for 'news'" in titles, titles
    [info] = [u for u in updates if u["sessionUpdate"] == "session_info_update" and u.get("title")]
    assert info["title"] == "Fix the bug"
    assert [u["entries"][0]["content"] for u in updates if u["sessionUpdate"] == "plan"] == ["Step one"]
    assert controls_in(written) == []
