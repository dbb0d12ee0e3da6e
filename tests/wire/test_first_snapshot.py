"""A turn's first snapshot is taken beside its first request once the API has begun to answer, never
before the request goes out.

The snapshot that a turn's first change would wait for is prepared beside the turn's first model
request (`session/machinery/engine.py`). A large repository's first one is seconds of git on a 2-core box
(issue 46 item 3), which competed with the agent's own start-up for the CPU while the first
prompt waited for the SDK. Here the fake looks, as the first Messages request arrives, whether the
session's shadow git store has been started: it must not have been.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.recorded import RecordedRequest
from tests.support.agent import AgentProcess
from tests.support.client import allow


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_the_first_snapshot_waits_until_the_api_answers_the_first_request(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stores = Path(agent_env["ACP_AGENT_STATE_DIR"]) / "checkpoints"
    started_before: list[bool] = []
    receive = fake_api.receive

    def look(request: RecordedRequest) -> Any:
        if request.path.startswith("/v1/messages"):
            started_before.append(stores.exists() and any(stores.iterdir()))
        return receive(request)

    monkeypatch.setattr(fake_api, "receive", look)
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo made > made.txt"}),
        replies.text("Made it."),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "make a file")
        assert response["result"]["stopReason"] == "end_turn", response
    assert started_before[:1] == [False], started_before
    assert (workspace / "made.txt").read_text() == "made\n"
    assert stores.exists() and any(stores.iterdir())  # the command's turn was snapshotted all the same
