"""The process itself: stdout carries only protocol, stderr never blocks it, and it exits cleanly."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until


@pytest.mark.model_free
async def test_nothing_is_written_before_the_first_message(agent_env: dict[str, str]) -> None:
    async with AgentProcess.start(env=agent_env) as agent:
        # Its last line before it reads stdin.
        await wait_until(lambda: '"agent.started"' in agent.stderr_text(), "the agent.started line")
        assert agent.stdout_lines == []
        result = await agent.initialize()
    assert agent.messages[0].get("result") == result, agent.messages[0]  # its first line answers ours


async def test_every_stdout_line_is_one_json_rpc_message(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    fake_api.set_fallback(replies.text("chunked answer " * 20, chunks=50))
    async with AgentProcess.start(
        env={**agent_env, "ACP_AGENT_LOG_LEVEL": "debug"}, schema=acp_schema
    ) as agent:
        await agent.initialize()
        sessions = [await agent.new_session(workspace) for _ in range(2)]
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(agent.prompt, session, "go")
        await agent.send_raw(b"garbage\n")
        await agent.initialize()
    for raw in agent.stdout_lines:
        message = json.loads(raw)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0"
    assert len(agent.stdout_lines) >= (100 if streaming else 8)


@pytest.mark.model_free
async def test_stdin_eof_exits_zero(agent_env: dict[str, str]) -> None:
    async with AgentProcess.start(env=agent_env) as agent:
        await agent.initialize()
        await agent.close_stdin()
        assert await agent.wait_exit(timeout=10) == 0


async def test_stdin_eof_during_a_turn_answers_cancelled_and_exits_zero(
    agent_env: dict[str, str], workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.stall())
    async with AgentProcess.start(env=agent_env) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.send_raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 99,
                    "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
                }
            )
            + "\n"
        )
        await wait_until(lambda: fake_api.attempts >= 1, "the request at the model")
        await agent.close_stdin()
        assert await agent.wait_exit(timeout=10) == 0
    answer = [m for m in agent.messages if m.get("id") == 99]
    assert answer and answer[0]["result"]["stopReason"] == "cancelled"


@pytest.mark.model_free
async def test_sigterm_exits_zero(agent_env: dict[str, str]) -> None:
    async with AgentProcess.start(env=agent_env) as agent:
        await agent.initialize()
        agent.send_signal(signal.SIGTERM)
        assert await agent.wait_exit(timeout=10) == 0


async def test_a_long_session_with_unread_stderr_never_blocks(
    agent_env: dict[str, str], workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(replies.text("ok"))
    env = {**agent_env, "ACP_AGENT_LOG_LEVEL": "debug"}  # chatty on purpose: > 64 KiB of logs
    async with AgentProcess.start(env=env, stderr="unread") as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        for n in range(200):
            response = await agent.prompt(session, f"turn {n}", timeout=10)
            assert response["result"]["stopReason"] == "end_turn"


async def test_the_api_key_never_reaches_logs_or_answers(
    agent_env: dict[str, str], workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    marker = "sk-ant-MARKER-KEY-0123456789"
    fake_api.script(replies.error(401, "authentication_error", "invalid x-api-key"), replies.text("fine"))
    env = {**agent_env, "ANTHROPIC_API_KEY": marker, "ACP_AGENT_LOG_LEVEL": "debug"}
    async with AgentProcess.start(env=env) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        failed = await agent.prompt(session, "go")
        await agent.prompt(session, "again")
    assert failed["error"]["code"] == -32000
    assert failed["error"]["data"]["acp-agent"]["turn"]["modelRequests"] == 1
    assert marker not in agent.stderr_text()
    assert all(
        marker not in line.decode() if isinstance(line, bytes) else marker not in line
        for line in agent.stdout_lines
    )
