"""An MCP server's questions to the user (issue 24, item 2): relayed to the editor as ACP
elicitations scoped to the tool call, declined when the editor lacks the mode, never left hanging."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.zed import Editor, answer_each, zed_initialize

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


def server(*args: str) -> dict[str, Any]:
    return {"name": "demo", "command": sys.executable, "args": [str(SERVER), *args], "env": []}


def tool_result(fake_api: FakeMessagesAPI, call_id: str) -> str:
    return str(
        next(
            b["content"]
            for m in fake_api.requests[-1].body["messages"]
            for b in m["content"]
            if b.get("tool_use_id") == call_id
        )
    )


async def run_tool(
    agent: AgentProcess, workspace: Path, mcp: dict[str, Any], **caps: Any
) -> tuple[str, dict[str, Any]]:
    await zed_initialize(agent, **caps)
    session = await agent.new_session(workspace, mcp_servers=[mcp])
    return session, await agent.prompt(session, "go", timeout=60)


async def test_a_form_from_an_mcp_server_is_relayed_for_its_tool_call(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor({"action": "accept", "content": {"name": "Ada"}})
    fake_api.script(replies.tool_use("mcp__demo__greet_me", {}, id="toolu_greet"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        session, response = await run_tool(agent, workspace, server())
    assert response["result"]["stopReason"] == "end_turn"
    [form] = editor.forms
    assert form["sessionId"] == session and form["toolCallId"] == "toolu_greet"
    assert form["mode"] == "form" and form["message"] == "What is your name?"
    assert "name" in form["requestedSchema"]["properties"]
    assert "hello, Ada" in tool_result(fake_api, "toolu_greet")


OUTSIDE_THE_FORM = {
    "a number for the name": {"action": "accept", "content": {"name": 42}},
    "a field the form lacks": {"action": "accept", "content": {"name": "Ada", "admin": True}},
    "an action that is a list": {"action": ["accept"], "content": {"name": "Ada"}},
    "a name past the answer cap": {"action": "accept", "content": {"name": "A" * 5_000_000}},
}


async def test_an_answer_outside_the_servers_form_reaches_it_as_a_dismissal(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    call = ("mcp__demo__greet_me", {})
    _, _, ran = await answer_each(
        agent_env, acp_schema, workspace, fake_api, OUTSIDE_THE_FORM, call, mcp_servers=[server()]
    )
    for case, call_id, response in ran:
        assert response["result"]["stopReason"] == "end_turn", (case, response)
        result = tool_result(fake_api, call_id)
        assert "no name (cancel)" in result, (case, result)


async def test_a_url_from_an_mcp_server_is_relayed_and_its_completion_passed_on(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor({"action": "accept"})
    fake_api.script(replies.tool_use("mcp__demo__sign_in", {}, id="toolu_sign"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        session, _ = await run_tool(agent, workspace, server("--legacy"))
        completed = await agent.wait_for(lambda m: m["method"] == "elicitation/complete", timeout=10)
    [link] = editor.forms
    assert link["sessionId"] == session and link["toolCallId"] == "toolu_sign"
    assert (link["mode"], link["url"], link["elicitationId"]) == (
        "url",
        "https://example.com/login",
        "login-1",
    )
    assert completed["params"] == {"elicitationId": "login-1"}
    assert "sign-in accept" in tool_result(fake_api, "toolu_sign")


async def test_a_mode_the_editor_lacks_is_declined_without_asking_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor({"action": "accept"})
    fake_api.script(replies.tool_use("mcp__demo__sign_in", {}, id="toolu_url"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await run_tool(agent, workspace, server("--legacy"), elicitation={"form": {}})
    assert editor.forms == []
    assert "sign-in decline" in tool_result(fake_api, "toolu_url")


async def test_session_cancel_abandons_a_relayed_question(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor()  # never answers
    fake_api.script(replies.tool_use("mcp__demo__greet_me", {}, id="toolu_wait"), replies.text("unreached"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace, mcp_servers=[server("--legacy")])
        prompt_id = await agent.send_request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        )
        with anyio.fail_after(30):
            await editor.asked.wait()
        await agent.notify("session/cancel", {"sessionId": session})
        response = await agent.response(prompt_id, timeout=5)
        asked = next(m for m in agent.messages if m.get("method") == "elicitation/create")
        abandoned = await agent.wait_for(lambda m: m["method"] == "$/cancel_request", timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    assert abandoned["params"] == {"requestId": asked["id"]}
