"""MCP servers given in session/new: their tools reach the model, run under permission, and stop."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.client import allow
from tests.support.mcp_remote import remote_mcp_server
from tests.support.waits import wait_until
from tests.support.zed import zed_initialize

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


async def test_an_mcp_tool_is_called_through_the_loop(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["toolCallId"])
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return RpcError(-32601, method)

    fake_api.script(
        replies.tool_use("mcp__demo__echo", {"text": "through MCP"}, id="toolu_mcp"), replies.text("done")
    )
    server = {
        "name": "demo",
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": [{"name": "DEMO_FLAG", "value": "1"}],
    }
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, mcp_servers=[server])
        response = await agent.prompt(session, "echo something", timeout=60)
    assert response["result"]["stopReason"] == "end_turn"
    offered = {t["name"] for t in fake_api.requests[0].body["tools"]}
    assert {"mcp__demo__echo", "mcp__demo__add"} <= offered
    assert asked == ["toolu_mcp"]  # MCP tools ask like commands do
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_mcp" and "through MCP" in str(result["content"])
    shown = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_mcp"]
    assert shown[0]["sessionUpdate"] == "tool_call" and shown[-1]["status"] == "completed"


@pytest.mark.model_free
async def test_a_broken_mcp_server_does_not_break_the_session(
    agent: AgentProcess, workspace: Path, tmp_path: Path
) -> None:
    broken = {"name": "broken", "command": str(tmp_path / "missing-server"), "args": [], "env": []}
    response = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": [broken]}, timeout=60)
    assert response["result"]["sessionId"]
    failures = response["result"]["_meta"]["acp-agent"]["mcpFailures"]
    assert failures and failures[0].startswith("broken:")


async def test_read_only_mcp_calls_run_together_and_ask_one_question_at_a_time(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["toolCallId"])
            return {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
        return RpcError(-32601, method)

    # `add` carries readOnlyHint: the three calls form one concurrent run with the read_file.
    calls = [
        replies.tool_use_block("mcp__demo__add", {"a": i, "b": 10}, id=f"toolu_add{i}") for i in range(3)
    ]
    calls.append(replies.tool_use_block("read_file", {"path": "notes.txt"}, id="toolu_read"))
    fake_api.script(replies.message(calls, stop_reason="tool_use"), replies.text("done"))
    server = {"name": "demo", "command": sys.executable, "args": [str(SERVER)], "env": []}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, mcp_servers=[server])
        response = await agent.prompt(session, "add", timeout=60)
    assert response["result"]["stopReason"] == "end_turn"
    # The questions wait for each other, so "always" given to the first covers the others.
    assert asked == ["toolu_add0"]
    results = [
        b for b in fake_api.requests[-1].body["messages"][-1]["content"] if b.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == ["toolu_add0", "toolu_add1", "toolu_add2", "toolu_read"]
    assert [str(r["content"]) for r in results[:3]] == ["10", "11", "12"]


async def test_an_sse_mcp_servers_tool_is_called_through_the_loop(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("mcp__legacy__add", {"a": 20, "b": 22}, id="toolu_sse"), replies.text("42")
    )
    with remote_mcp_server("sse", token="sse-token") as (url, _):
        server = {
            "type": "sse",
            "name": "legacy",
            "url": url,
            "headers": [{"name": "Authorization", "value": "Bearer sse-token"}],
        }
        async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
            init = await zed_initialize(agent)
            answer = await agent.request(
                "session/new", {"cwd": str(workspace), "mcpServers": [server]}, timeout=60
            )
            session = answer["result"]["sessionId"]
            response = await agent.prompt(session, "add", timeout=60)
    assert init["agentCapabilities"]["mcpCapabilities"]["sse"] is True
    assert "_meta" not in answer["result"]  # no MCP failure reported
    assert response["result"]["stopReason"] == "end_turn"
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_sse" and str(result["content"]) == "42"


async def test_loading_an_open_session_again_stops_the_old_sessions_mcp_servers(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """session/load of a session that is open replaces it: the servers the replaced session started
    are stopped, as session/close stops them (its background commands already were), and the
    loaded session starts its own."""
    fake_api.script(replies.tool_use("mcp__demo__pid", {}, id="toolu_pid"), replies.text("done"))
    server = {"name": "demo", "command": sys.executable, "args": [str(SERVER)], "env": []}

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, mcp_servers=[server])
        await agent.prompt(session, "which process serves you?", timeout=60)
        result = fake_api.requests[-1].body["messages"][-1]["content"][0]
        pid = int("".join(c for c in str(result["content"]) if c.isdigit()))
        assert alive(pid)
        loaded = await agent.request(
            "session/load",
            {"sessionId": session, "cwd": str(workspace), "mcpServers": [server]},
            timeout=60,
        )
        assert "result" in loaded, loaded
        await wait_until(lambda: not alive(pid), "the replaced session's MCP server to stop")
