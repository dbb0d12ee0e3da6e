"""kill -9 during a tool batch: after session/load the history is one the API accepts, and a call
that had started is reported as possibly done, not as never run (issue 19, item 2)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.turn.context.history import INTERRUPTED, INTERRUPTED_RUNNING
from tests.support.agent import AgentProcess
from tests.support.client import allow, prompt_until_killed
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until


async def test_a_kill_during_the_command_of_a_batch_leaves_a_valid_honest_history(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("write_file", {"path": "w.txt", "content": "w\n"}, id="toolu_w"),
                replies.tool_use_block(
                    "run_command", {"command": "echo ran > ran.txt; sleep 9"}, id="toolu_cmd"
                ),  # still running when the agent is killed
                replies.tool_use_block("read_file", {"path": "w.txt"}, id="toolu_r"),
            ],
            stop_reason="tool_use",
        )
    )
    async with AgentProcess.start(
        env=agent_env, schema=acp_schema, on_request=allow, check_on_exit=False
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_killed, agent, session)
            await agent.wait_for(
                lambda m: (
                    m["params"]["update"]["toolCallId"] == "toolu_cmd"
                    and m["params"]["update"].get("status") == "in_progress"
                ),
                timeout=20,
            )
            await wait_until((workspace / "ran.txt").exists, "the command's effect")
            os.kill(agent.pid, signal.SIGKILL)
    fake_api.script(replies.text("after the crash"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded, loaded
        shown = {
            u["toolCallId"]: u
            for u in (p["update"] for p in agent.updates(session))
            if u["sessionUpdate"] == "tool_call_update"
        }
        response = await agent.prompt(session, "are you back?")
    assert response["result"]["stopReason"] == "end_turn", response
    messages = fake_api.requests[-1].plain_body["messages"]
    assert_valid_history(messages)
    results = {b["tool_use_id"]: b for b in messages[2]["content"] if b.get("type") == "tool_result"}
    assert not results["toolu_w"].get("is_error")
    assert results["toolu_cmd"]["content"] == INTERRUPTED_RUNNING
    assert results["toolu_r"]["content"] == INTERRUPTED
    assert messages[2]["content"][-1] == {"type": "text", "text": "are you back?"}
    assert shown["toolu_w"]["status"] == "completed"
    assert shown["toolu_cmd"]["status"] == "failed"
    assert shown["toolu_cmd"]["content"][0]["content"]["text"] == INTERRUPTED_RUNNING
