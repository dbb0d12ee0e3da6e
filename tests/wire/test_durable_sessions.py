"""Nothing lost: journaled sessions survive restarts and crashes, and session/load replays them."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow, prompt_until_killed
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until
from tests.wire.conftest import chunks


async def first_turn(
    agent_env: dict[str, str], schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> str:
    (workspace / "a.txt").write_text("alpha\n")
    fake_api.script(
        replies.tool_use("read_file", {"path": "a.txt"}, id="toolu_read", text="Reading."),
        replies.tool_use("update_plan", {"entries": [{"content": "check a.txt", "status": "completed"}]}),
        replies.text("a.txt says alpha.", chunks=3),
    )
    async with AgentProcess.start(env=agent_env, schema=schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "What does a.txt say?\nsecond line")
        assert response["result"]["stopReason"] == "end_turn"
    return session


async def test_load_in_a_new_process_replays_the_conversation_then_continues(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await first_turn(agent_env, acp_schema, workspace, fake_api)
    fake_api.script(replies.text("still here"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        init = await agent.initialize()
        assert init["agentCapabilities"]["loadSession"] is True
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert isinstance(loaded["result"], dict)
        position = agent.messages.index(loaded)
        replayed = [
            m["params"]["update"] for m in agent.messages[:position] if m.get("method") == "session/update"
        ]
        response = await agent.prompt(session, "and now?")
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds[0] == "user_message_chunk"
    assert replayed[0]["content"]["text"] == "What does a.txt say?\nsecond line"
    text = "".join(u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk")
    assert "Reading." in text and "a.txt says alpha." in text
    finals = [u for u in replayed if u["sessionUpdate"] == "tool_call_update"]
    assert {u["toolCallId"]: u["status"] for u in finals}["toolu_read"] == "completed"
    assert "plan" in kinds
    assert response["result"]["stopReason"] == "end_turn"
    sent = fake_api.requests[-1].body["messages"]
    assert_valid_history(sent)
    texts = [b.get("text") for m in sent for b in m["content"] if isinstance(b, dict)]
    assert "What does a.txt say?\nsecond line" in texts and "and now?" in texts


async def test_list_resume_close_and_delete(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await first_turn(agent_env, acp_schema, workspace, fake_api)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        newer = await agent.new_session(workspace)
        fake_api.script(replies.text("ok"))
        await agent.prompt(newer, "newer session prompt")
        listed = (await agent.request("session/list", {}))["result"]["sessions"]
        assert [s["sessionId"] for s in listed][:2] == [newer, session]
        assert listed[1]["title"] == "What does a.txt say?"
        assert listed[1]["cwd"] == str(workspace.resolve())
        start = len(agent.messages)
        resumed = await agent.request("session/resume", {"sessionId": session, "cwd": str(workspace)})
        assert "result" in resumed
        # No replay: the only update may be the command list, announced right after the answer.
        assert not [
            m
            for m in agent.messages[start:]
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] != "available_commands_update"
        ]
        assert (await agent.request("session/close", {"sessionId": session}))["result"] == {}
        after_close = await agent.prompt(session, "hello?")
        assert "error" in after_close
        assert (await agent.request("session/delete", {"sessionId": session}))["result"] == {}
        assert (await agent.request("session/delete", {"sessionId": "sess_never"}))["result"] == {}
        listed = (await agent.request("session/list", {}))["result"]["sessions"]
        assert session not in [s["sessionId"] for s in listed]
        missing = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert missing["error"]["code"] == -32002


async def test_close_during_a_prompt_answers_it_cancelled(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.stall())
    results: dict = {}

    async def run() -> None:
        results["r"] = await agent.prompt(session, "go")

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await wait_until(lambda: fake_api.attempts >= 1, "the request at the model")
        await agent.request("session/close", {"sessionId": session})
    assert results["r"]["result"]["stopReason"] == "cancelled"


@pytest.mark.model_free
async def test_the_journal_is_private(agent: AgentProcess, session: str, agent_env: dict[str, str]) -> None:
    directory = Path(agent_env["ACP_AGENT_STATE_DIR"])
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = list(directory.glob("*.jsonl"))
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


@pytest.mark.model_free
async def test_without_a_journal_load_is_not_offered(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    async with AgentProcess.start(args=["--no-journal"], env=agent_env, schema=acp_schema) as agent:
        init = await agent.initialize()
        load = await agent.request("session/load", {"sessionId": "x", "cwd": "/", "mcpServers": []})
        listed = await agent.request("session/list", {})
        fork = await agent.request("session/fork", {"sessionId": "x", "cwd": "/"})
        session = await agent.new_session(workspace)
        await agent.prompt(session, "/fork")
        told = [
            u["update"]
            for u in agent.updates(session)
            if u["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
    assert init["agentCapabilities"]["loadSession"] is False
    assert "fork" not in init["agentCapabilities"]["sessionCapabilities"]
    assert load["error"]["code"] == -32601 and listed["error"]["code"] == -32601
    assert fork["error"]["code"] == -32601
    assert "not journaled" in told[-1]["content"]["text"]


async def crash_and_load(
    agent_env: dict[str, str], schema: Any, workspace: Path, fake_api: FakeMessagesAPI, wait_for: Any
) -> tuple[list[dict], list[dict]]:
    """Run a turn, SIGKILL the agent when `wait_for(agent)` says so, then load in a new one."""
    async with AgentProcess.start(
        env=agent_env, schema=schema, on_request=allow, check_on_exit=False
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_killed, agent, session)
            await wait_for(agent, session)
            os.kill(agent.pid, signal.SIGKILL)
    fake_api.script(replies.text("after the crash"))
    async with AgentProcess.start(env=agent_env, schema=schema) as agent:
        await agent.initialize()
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        updates = [p["update"] for p in agent.updates(session)]
        response = await agent.prompt(session, "are you back?")
    assert response["result"]["stopReason"] == "end_turn"
    return updates, fake_api.requests[-1].body["messages"]


async def test_a_crash_mid_stream_keeps_every_completed_message(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    fake_api.script(
        replies.tool_use("read_file", {"path": "a.txt"}, id="toolu_done"),
        replies.text("streaming forever " * 50, chunks=100, chunk_delay=0.05),
    )

    async def mid_stream(agent: AgentProcess, session: str) -> None:
        await agent.wait_for(lambda m: "forever" in m["params"]["update"]["content"]["text"], timeout=20)

    updates, history = await crash_and_load(agent_env, acp_schema, workspace, fake_api, mid_stream)
    finals = {u["toolCallId"]: u["status"] for u in updates if u["sessionUpdate"] == "tool_call_update"}
    assert finals["toolu_done"] == "completed"
    assert_valid_history(history)
    results = [b for m in history for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0]["tool_use_id"] == "toolu_done" and "alpha" in str(results[0]["content"])


async def test_a_crash_during_a_tool_repairs_the_dangling_call(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.tool_use("run_command", {"command": "sleep 60"}, id="toolu_slow"))

    async def mid_tool(agent: AgentProcess, session: str) -> None:
        await agent.wait_for(lambda m: m["params"]["update"].get("status") == "in_progress", timeout=20)

    _updates, history = await crash_and_load(agent_env, acp_schema, workspace, fake_api, mid_tool)
    assert_valid_history(history)
    results = [b for m in history for b in m["content"] if b.get("type") == "tool_result"]
    assert results and results[0]["tool_use_id"] == "toolu_slow" and results[0]["is_error"]


async def test_a_torn_last_line_is_skipped(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await first_turn(agent_env, acp_schema, workspace, fake_api)
    journal = next(Path(agent_env["ACP_AGENT_STATE_DIR"]).glob(f"{session}.jsonl"))
    with journal.open("a") as f:
        f.write('{"type": "assistant", "blocks": [{"type": "text", "text": "half')
    fake_api.script(replies.text("fine"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded
        response = await agent.prompt(session, "ok?")
    assert response["result"]["stopReason"] == "end_turn"
    assert "half" not in str(fake_api.requests[-1].body["messages"])
    assert chunks(agent, session)
