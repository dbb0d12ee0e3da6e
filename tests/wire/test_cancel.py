"""session/cancel and $/cancel_request: the prompt answers `cancelled` promptly; history stays valid."""

from __future__ import annotations

import itertools
from pathlib import Path

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record

CANCEL_BOUND = 5.0  # generous for CI (decisions D5); the tight figure is measured in bench/


async def start_prompt(agent: AgentProcess, session: str, text: str, results: dict) -> None:
    results["response"] = await agent.prompt(session, text)


async def test_cancel_during_a_slow_stream_answers_cancelled(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    if streaming:
        fake_api.script(replies.text("x" * 400, chunks=200, chunk_delay=0.05))
    else:
        fake_api.script(replies.stall())
    results: dict = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(start_prompt, agent, session, "go", results)
        if streaming:
            await agent.wait_for(lambda m: m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        else:
            await wait_until(lambda: fake_api.attempts == 1, "the request at the model")
        await agent.notify("session/cancel", {"sessionId": session})
        await wait_until(
            lambda: "response" in results, "the answer (the stream lasts 10 s)", timeout=CANCEL_BOUND
        )
    response = results["response"]
    assert response["result"]["stopReason"] == "cancelled"
    assert turn_record(response)["abortedDuring"] == "model"
    # The next prompt runs normally on a valid history (a stale cancel does not poison it).
    fake_api.script(replies.text("fresh"))
    again = await agent.prompt(session, "again")
    assert again["result"]["stopReason"] == "end_turn"
    messages = fake_api.requests[-1].body["messages"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles


async def test_cancel_during_a_tool_closes_the_tool_call_as_failed(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    # A command that never finishes by itself (a FIFO no longer blocks read_file: issue 19).
    await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
    fake_api.script(replies.tool_use("run_command", {"command": "sleep 60"}, id="toolu_block"))
    fake_api.set_fallback(replies.text("after"))
    results: dict = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(start_prompt, agent, session, "read it", results)
        await agent.wait_for(lambda m: m["params"]["update"].get("status") == "in_progress")
        await agent.notify("session/cancel", {"sessionId": session})
        await wait_until(
            lambda: "response" in results, "the answer (the command lasts 60 s)", timeout=CANCEL_BOUND
        )
    response = results["response"]
    assert response["result"]["stopReason"] == "cancelled"
    assert turn_record(response)["abortedDuring"] == "tools"
    finals = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_block"]
    assert finals[-1]["status"] == "failed"
    await agent.prompt(session, "next")
    history = fake_api.requests[-1].body["messages"]
    answered = [
        b for m in history for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in answered] == ["toolu_block"]


async def test_cancel_request_for_a_pending_prompt_answers_cancelled(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.stall())
    results: dict = {}

    async def run() -> None:
        results["response"] = await agent.request(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
            id="prompt-1",
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await wait_until(lambda: fake_api.attempts == 1, "the request at the model")
        await agent.notify("$/cancel_request", {"requestId": "prompt-1"})
    response = results["response"]
    assert response["id"] == "prompt-1"
    assert response["result"]["stopReason"] == "cancelled"
    answers = [m for m in agent.messages if m.get("id") == "prompt-1" and "method" not in m]
    assert len(answers) == 1


async def test_a_prompt_after_cancel_waits_for_the_cancelled_turn_then_runs(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.stall(), replies.text("second answer"))
    results: dict = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(start_prompt, agent, session, "first", results)
        await wait_until(lambda: fake_api.attempts == 1, "the request at the model")
        await agent.notify("session/cancel", {"sessionId": session})
        second = await agent.prompt(session, "second")
    assert results["response"]["result"]["stopReason"] == "cancelled"
    assert second["result"]["stopReason"] == "end_turn"


async def test_cancel_of_an_idle_or_unknown_session_is_ignored(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    await agent.notify("session/cancel", {"sessionId": session})
    await agent.notify("session/cancel", {"sessionId": "no-such-session"})
    fake_api.script(replies.text("fine"))
    response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "end_turn"
