"""stdin EOF on an idle agent: it leaves at once (acpx sends SIGTERM 240 ms after EOF), but only
after the journal, stdout and its logs are out. The tight figure is measured in bench/ (D5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until

pytestmark = pytest.mark.parametrize("streaming", [True], ids=["stream"])  # path-independent


async def test_an_idle_agent_exits_zero_on_eof_with_journal_stdout_and_logs_complete(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.script(replies.text("answered"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hello")
        await agent.close_stdin()
        code = await agent.wait_exit(timeout=10)
        # The test's reader may still be draining the pipe.
        await wait_until(lambda: '"agent.stopped"' in agent.stderr_text(), "the agent.stopped line")
    assert code == 0
    assert response["result"]["stopReason"] == "end_turn"
    assert agent.messages[-1]["id"] == response["id"]  # every line complete (checked on exit)
    [journal] = (tmp_path / "state").rglob(f"{session}.jsonl")  # (its checkpoints are a folder)
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert entries[-1]["type"] == "turn" and entries[-1]["record"]["stopReason"] == "end_turn"
    assert '"agent.stopped"' in agent.stderr_text().splitlines()[-1]
