"""The agent driven by a real third-party client: the official ACP Python SDK's client side.

The SDK passes the agent only the environment given to it explicitly, pipes stderr without ever
reading it, and validates everything the agent sends with its own generated models.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import acp
import pytest

from acp_agent.testing import FakeMessagesAPI, replies


class RecordingClient:
    """The smallest client: it records updates and has no fs, terminal or permission abilities."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")

    def on_connect(self, conn: Any) -> None:
        return None


@pytest.mark.parametrize("limit", [2])
async def test_official_client_runs_a_turn_to_the_request_limit(
        agent_env: dict[str, str], fake_api: FakeMessagesAPI, workspace: Path,
        streaming: bool, limit: int) -> None:
    fake_api.set_fallback(lambda body, n: replies.tool_use(
        "list_files", {"pattern": f"*{n}"}, text=f"step {n} "))
    client = RecordingClient()
    env = {**agent_env, "ACP_AGENT_MAX_TURN_REQUESTS": str(limit)}
    async with acp.spawn_agent_process(client, sys.executable, "-m", "acp_agent",
                                       env=env) as (conn, _process):
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id,
                                     prompt=[acp.text_block("work until stopped")])
    assert response.stop_reason == "max_turn_requests"
    turn = response.field_meta["acp-agent"]["turn"]
    assert turn["modelRequests"] == limit and turn["limit"] == "maxTurnRequests"
    assert fake_api.attempts == limit
    kinds = [u.session_update for u in client.updates]
    assert "agent_message_chunk" in kinds and "tool_call" in kinds and "tool_call_update" in kinds
    statuses = [u.status for u in client.updates if u.session_update == "tool_call_update"]
    assert None not in statuses  # every status was one the SDK's own models accept
