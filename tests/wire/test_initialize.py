"""initialize, authenticate and session/new: negotiation, honest capabilities, credentials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import AgentProcess

pytestmark = pytest.mark.model_free  # none of these reaches the model: each runs once


@pytest.mark.parametrize(
    ("requested", "answered"), [(1, 1), (2, 1), (99, 1), (0, 1), ("1", 1), ("2024-11-05", 1)]
)
async def test_version_negotiation_answers_ours_when_unsupported(
    agent_env: dict[str, str], acp_schema: Any, requested: object, answered: int
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        result = await agent.initialize(protocol_version=requested)
    assert result["protocolVersion"] == answered


@pytest.mark.parametrize("requested", [-1, 70000, {"v": 1}, [1], True])
async def test_out_of_range_versions_are_invalid_params(
    agent_env: dict[str, str], acp_schema: Any, requested: object
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        response = await agent.request("initialize", {"protocolVersion": requested})
    assert response["error"]["code"] == -32602
    assert "protocolVersion" in response["error"]["message"]


async def test_initialize_describes_the_agent_honestly(agent_env: dict[str, str], acp_schema: Any) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        result = await agent.initialize()
        load = await agent.request("session/load", {"sessionId": "x", "cwd": "/", "mcpServers": []})
        fork = await agent.request("session/fork", {"sessionId": "x", "cwd": "/"})
    assert result["agentInfo"]["name"] == "acp-agent" and result["agentInfo"]["version"]
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True  # served: an unknown session is "not found", not "no method"
    assert load["error"]["code"] == -32002
    assert set(caps["sessionCapabilities"]) == {
        "list",
        "resume",
        "close",
        "delete",
        "systemPrompt",
        "additionalDirectories",
        "title",  # ACP's unstable session/set_title
        "fork",  # ACP's unstable session/fork
    }
    assert caps["sessionCapabilities"]["systemPrompt"] == {}  # append only: override is refused
    assert fork["error"]["code"] == -32002  # served: an unknown source is "not found"
    assert caps["promptCapabilities"]["image"] is True
    assert caps["promptCapabilities"]["audio"] is False
    assert [m["id"] for m in result["authMethods"]] == ["anthropic-api-key"]


async def test_two_sessions_get_distinct_ids(agent: AgentProcess, workspace: Path) -> None:
    first = await agent.new_session(workspace)
    second = await agent.new_session(workspace)
    assert first != second


async def test_without_credentials_session_new_asks_for_authentication(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    from tests.support.agent import base_env

    env = base_env(tmp_path, ACP_AGENT_MODEL="claude-test-1")
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        result = await agent.initialize()  # start-up never crashes without a key
        response = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        auth = await agent.request("authenticate", {"methodId": "anthropic-api-key"})
        unknown = await agent.request("authenticate", {"methodId": "nope"})
    assert result["protocolVersion"] == 1
    assert response["error"]["code"] == -32000
    assert "ANTHROPIC_API_KEY" in response["error"]["message"]
    assert auth["error"]["code"] == -32000
    assert unknown["error"]["code"] == -32602


async def test_authenticate_succeeds_when_a_key_is_set(agent: AgentProcess) -> None:
    response = await agent.request("authenticate", {"methodId": "anthropic-api-key"})
    assert response["result"] == {}


async def test_cwd_that_does_not_exist_is_invalid(agent: AgentProcess, tmp_path: Path) -> None:
    response = await agent.request("session/new", {"cwd": str(tmp_path / "missing"), "mcpServers": []})
    assert response["error"]["code"] == -32602
