"""Wire-test fixtures: a started agent subprocess talking to the loopback Messages API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import AgentProcess


@pytest.fixture
async def agent(agent_env: dict[str, str], acp_schema: Any) -> AsyncIterator[AgentProcess]:
    """An initialized agent on the fake API, every message it writes checked against the schema."""
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as proc:
        await proc.initialize()
        yield proc


@pytest.fixture
async def session(agent: AgentProcess, workspace: Path) -> str:
    return await agent.new_session(workspace)


def chunks(agent: AgentProcess, session_id: str, kind: str = "agent_message_chunk") -> list[dict]:
    """The `update` objects of one kind sent for a session so far."""
    return [p["update"] for p in agent.updates(session_id) if p["update"]["sessionUpdate"] == kind]


def turn_record(response: dict[str, Any]) -> dict[str, Any]:
    return response["result"]["_meta"]["acp-agent"]["turn"]
