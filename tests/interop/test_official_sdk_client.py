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
    agent_env: dict[str, str], fake_api: FakeMessagesAPI, workspace: Path, streaming: bool, limit: int
) -> None:
    fake_api.set_fallback(
        lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}, text=f"step {n} ")
    )
    client = RecordingClient()
    env = {**agent_env, "ACP_AGENT_MAX_TURN_REQUESTS": str(limit)}
    async with acp.spawn_agent_process(client, sys.executable, "-m", "acp_agent", env=env) as (
        conn,
        _process,
    ):
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("work until stopped")]
        )
    assert response.stop_reason == "max_turn_requests"
    turn = response.field_meta["acp-agent"]["turn"]
    assert turn["modelRequests"] == limit and turn["limit"] == "maxTurnRequests"
    assert fake_api.attempts == limit
    kinds = [u.session_update for u in client.updates]
    assert "agent_message_chunk" in kinds and "tool_call" in kinds and "tool_call_update" in kinds
    statuses = [u.status for u in client.updates if u.session_update == "tool_call_update"]
    assert None not in statuses  # every status was one the SDK's own models accept


class EditorClient(RecordingClient):
    """An SDK client that offers its file system and terminals, like an editor does."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__()
        self.files = files
        self.calls: list[str] = []

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.calls.append("session/request_permission")
        return acp.RequestPermissionResponse(
            outcome=acp.schema.AllowedOutcome(outcome="selected", option_id="allow_once")
        )

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
        self.calls.append("fs/read_text_file")
        return acp.ReadTextFileResponse(content=self.files[path])

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> Any:
        self.calls.append("fs/write_text_file")
        self.files[path] = content
        return acp.WriteTextFileResponse()

    async def create_terminal(self, command: str, session_id: str, **kwargs: Any) -> Any:
        self.calls.append("terminal/create")
        return acp.CreateTerminalResponse(terminal_id="t-1")

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.calls.append("terminal/wait_for_exit")
        return acp.WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.calls.append("terminal/output")
        return acp.TerminalOutputResponse(
            output="ran in the editor\n",
            truncated=False,
            exit_status=acp.schema.TerminalExitStatus(exit_code=0),
        )

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.calls.append("terminal/release")
        return acp.ReleaseTerminalResponse()

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.calls.append("terminal/kill")
        return acp.KillTerminalResponse()


async def test_official_client_with_fs_and_terminal_sees_the_agent_use_them(
    agent_env: dict[str, str], fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    path = str((workspace / "notes.txt").resolve())
    client = EditorClient({path: "draft from the buffer\n"})
    fake_api.script(
        replies.tool_use("edit_file", {"path": "notes.txt", "old_string": "draft", "new_string": "final"}),
        replies.tool_use("run_command", {"command": "make check"}),
        replies.text("all done"),
    )
    async with acp.spawn_agent_process(client, sys.executable, "-m", "acp_agent", env=agent_env) as (
        conn,
        _process,
    ):
        caps = acp.schema.ClientCapabilities(
            fs=acp.schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        await conn.initialize(protocol_version=1, client_capabilities=caps)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("finish the notes and check")]
        )
    assert response.stop_reason == "end_turn"
    assert client.files[path] == "final from the buffer\n"
    assert {"fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/release"} <= set(
        client.calls
    )
    assert client.calls.index("terminal/create") < client.calls.index("terminal/release")
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert "ran in the editor" in str(result["content"])
