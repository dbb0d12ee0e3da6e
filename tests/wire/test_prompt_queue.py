"""Prompts sent while a turn runs are queued (D3): FIFO, at most 8 waiting, answered in order.

Toad lets the user type while the agent works and sends each message as a `session/prompt` at
once; the agent must not refuse it. Also: `[]` (codecompanion's Enter on an empty line).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record

CANCEL_BOUND = 5.0


def answer_index(agent: AgentProcess, request_id: Any) -> int:
    return next(i for i, m in enumerate(agent.messages) if m.get("id") == request_id and "method" not in m)


def prompt_params(session: str, text: str) -> dict[str, Any]:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


async def send_prompt(
    agent: AgentProcess, session: str, text: str, request_id: str, results: dict[str, Any]
) -> None:
    results[request_id] = await agent.request("session/prompt", prompt_params(session, text), id=request_id)


async def test_a_prompt_sent_mid_stream_is_queued_and_both_turns_complete_in_order(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    gate = threading.Event()

    def first(body: dict[str, Any], n: int) -> replies.Message:
        if not streaming:
            gate.wait(10)  # the non-streaming reply is "in flight" until the test lets it go
        return replies.text("first answer " * 8, chunks=16, chunk_delay=0.05 if streaming else 0.0)

    fake_api.script(first, replies.text("second answer"))
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_prompt, agent, session, "first", "p1", results)
        if streaming:  # as Toad does: the user types while the reply streams in
            await agent.wait_for(lambda m: m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        else:
            await wait_until(lambda: fake_api.attempts == 1, "the first request at the model")
        await agent.send_request("session/prompt", prompt_params(session, "second"), id="p2")
        await agent.round_trip()  # the second prompt has been read and queued
        if not streaming:  # the first reply is held at the fake: the queued prompt cannot have run
            assert fake_api.attempts == 1, "the queued prompt must wait for the running turn"
            assert "p1" not in results
        gate.set()
    results["p2"] = await agent.response("p2")
    assert results["p1"]["result"]["stopReason"] == "end_turn", results["p1"]
    assert results["p2"]["result"]["stopReason"] == "end_turn", results["p2"]
    first_answer, second_answer = answer_index(agent, "p1"), answer_index(agent, "p2")
    assert first_answer < second_answer
    # The second turn ran after the first ended, on a history that holds the first turn's reply.
    texts = [
        (i, u["params"]["update"]["content"]["text"])
        for i, u in enumerate(agent.messages)
        if u.get("method") == "session/update"
        and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert all(i > first_answer for i, t in texts if "second" in t)
    assert all(i < first_answer for i, t in texts if "first" in t)
    history = fake_api.requests[1].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert "first answer" in str(history[1]["content"]) and "second" in str(history[2]["content"])
    assert turn_record(results["p2"])["modelRequests"] == 1


async def test_the_queue_holds_eight_and_a_cancel_answers_every_prompt_cancelled_in_order(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.stall())
    fake_api.set_fallback(replies.text("must not be asked"))
    results: dict[str, Any] = {}
    ids = [f"q{n}" for n in range(9)]  # one running and eight waiting
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_prompt, agent, session, "running", ids[0], results)
        await wait_until(lambda: fake_api.attempts == 1, "the first request at the model")
        for request_id in ids[1:]:
            tg.start_soon(send_prompt, agent, session, f"waiting {request_id}", request_id, results)
        await wait_until(
            lambda: (
                sum(1 for m in agent.sent if isinstance(m, dict) and str(m.get("id", "")).startswith("q"))
                == 9
            ),
            "all nine prompts sent",
        )
        await agent.round_trip()  # all nine are in the agent's hands
        full = await agent.prompt(session, "one too many")
        assert full["error"]["code"] == -32001, full
        assert "queue" in full["error"]["message"] and "full" in full["error"]["message"]
        assert full["error"]["data"]["waiting"] == 8
        assert results == {}
        with anyio.fail_after(CANCEL_BOUND):
            await agent.notify("session/cancel", {"sessionId": session})
            await wait_until(lambda: len(results) == 9, "nine answers", timeout=CANCEL_BOUND)
    assert [results[i]["result"]["stopReason"] for i in ids] == ["cancelled"] * 9
    assert [answer_index(agent, i) for i in ids] == sorted(answer_index(agent, i) for i in ids)
    assert fake_api.attempts == 1
    assert all(turn_record(results[i])["modelRequests"] == 0 for i in ids[1:])
    # A prompt after the cancel runs normally.
    fake_api.script(replies.text("fresh"))
    again = await agent.prompt(session, "again")
    assert again["result"]["stopReason"] == "end_turn", again


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
@pytest.mark.parametrize("method", ["session/close", "session/delete"])
async def test_close_and_delete_cancel_the_running_and_queued_prompts_before_they_act(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, method: str
) -> None:
    fake_api.script(replies.stall())
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_prompt, agent, session, "running", "r", results)
        await wait_until(lambda: fake_api.attempts == 1, "the first request at the model")
        await agent.send_request("session/prompt", prompt_params(session, "waiting"), id="w")
        closed = await agent.request(method, {"sessionId": session}, id="close")
    results["w"] = await agent.response("w")
    assert closed["result"] == {}, closed
    assert results["r"]["result"]["stopReason"] == "cancelled"
    assert results["w"]["result"]["stopReason"] == "cancelled"
    assert answer_index(agent, "r") < answer_index(agent, "w") < answer_index(agent, "close")
    assert fake_api.attempts == 1


async def test_prompts_in_different_sessions_still_run_at_once(
    agent: AgentProcess, session: str, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    other = await agent.new_session(workspace)
    fake_api.script(replies.stall(), replies.text("other answer"))
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_prompt, agent, session, "slow", "slow", results)
        await wait_until(lambda: fake_api.attempts == 1, "the first request at the model")
        quick = await agent.prompt(other, "quick")
        assert quick["result"]["stopReason"] == "end_turn", quick
        assert "slow" not in results
        await agent.notify("session/cancel", {"sessionId": session})
    assert results["slow"]["result"]["stopReason"] == "cancelled"


async def test_a_slash_command_sent_mid_turn_waits_its_turn_and_runs_as_a_command(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    gate = threading.Event()

    def first(body: dict[str, Any], n: int) -> replies.Message:
        gate.wait(10)
        return replies.text("done")

    fake_api.script(first)
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_prompt, agent, session, "work", "work", results)
        await wait_until(lambda: fake_api.attempts == 1, "the first request at the model")
        await agent.send_request("session/prompt", prompt_params(session, "/status"), id="status")
        await agent.round_trip()  # the command has been read and queued behind the held turn
        assert results == {}
        gate.set()
    results["status"] = await agent.response("status")
    assert results["status"]["result"]["stopReason"] == "end_turn"
    assert answer_index(agent, "work") < answer_index(agent, "status")
    assert fake_api.attempts == 1  # /status is answered without a model request
    assert any(
        "Model:" in u["update"]["content"]["text"]
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_an_empty_prompt_ends_the_turn_without_a_model_request(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    response = await agent.prompt(session, [])
    assert response["result"]["stopReason"] == "end_turn", response
    record = turn_record(response)
    assert record["modelRequests"] == 0 and record["stopReason"] == "end_turn"
    blank = await agent.prompt(session, "  \n")
    assert blank["result"]["stopReason"] == "end_turn", blank
    assert fake_api.attempts == 0
    # The history stays valid: the next real prompt is the first user message the model sees.
    fake_api.script(replies.text("hi"))
    after = await agent.prompt(session, "hello")
    assert after["result"]["stopReason"] == "end_turn"
    assert [m["role"] for m in fake_api.requests[0].body["messages"]] == ["user"]
