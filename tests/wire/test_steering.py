"""`_session/steering`: a message for the running turn joins it at its next request boundary (after
the pending tool results), is shown as the user's message, journaled and replayed, and never adds
a request beyond the turn's limit; with no turn running it starts one (`startedNewTurn`), or is
left to the client (`promptRequired`) when it asks so."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import HANG_GUARD, wait_until
from tests.wire.conftest import chunks, turn_record


def steering(session: str, text: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    return params | ({"_meta": meta} if meta is not None else {})


def tool_loop(gates: dict[int, threading.Event]) -> Any:
    """A model that calls a tool on every request; request n waits for `gates[n]`, if there is one."""

    def reply(body: dict[str, Any], n: int) -> replies.Message:
        if n in gates:
            gates[n].wait(HANG_GUARD)
        return replies.tool_use("list_files", {"pattern": f"*{n}*"})

    return reply


def user_texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


async def steer_while_held(
    agent: AgentProcess, fake_api: FakeMessagesAPI, gate: threading.Event, request: int, params: Any
) -> dict[str, Any]:
    """Send `params` as `_session/steering` while request `request` is held at the fake; release it."""
    await wait_until(lambda: fake_api.attempts >= request, f"request {request} at the model")
    answer = await agent.request("_session/steering", params)
    gate.set()
    return answer


async def test_a_steering_message_joins_the_next_request_and_the_turn_still_stops_at_its_limit(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    gates = {1: threading.Event(), 3: threading.Event()}
    fake_api.set_fallback(tool_loop(gates))
    answers: dict[str, Any] = {}
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        init = await agent.initialize()
        assert init["_meta"]["steering"] == {"supported": True}
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 3}})
        async with anyio.create_task_group() as tg:

            async def run_prompt() -> None:
                answers["prompt"] = await agent.prompt(session, "list things")

            tg.start_soon(run_prompt)
            answers["first"] = await steer_while_held(
                agent, fake_api, gates[1], 1, steering(session, "only look in src")
            )
            # The last request allowed: a message sent now finds no request left in this turn.
            answers["late"] = await steer_while_held(
                agent, fake_api, gates[3], 3, steering(session, "and tests")
            )
        shown = [u["content"]["text"] for u in chunks(agent, session, "user_message_chunk")]
        fake_api.set_fallback(replies.text("done"))
        after = await agent.prompt(session, "go on")
    assert answers["first"]["result"] == {"outcome": "injected"}, answers["first"]
    assert answers["late"]["result"] == {"outcome": "injected"}, answers["late"]
    response = answers["prompt"]
    assert response["result"]["stopReason"] == "max_turn_requests", response
    assert turn_record(response)["modelRequests"] == 3
    # Request 2 carries it after request 1's tool results: a user message, results first.
    last = fake_api.requests[1].plain_body["messages"][-1]
    assert last["role"] == "user"
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert user_texts(last) == ["only look in src"]
    # The late one added no request; it was kept in the history, so the next turn's first request
    # carries it, then that turn's prompt.
    assert "and tests" not in str(fake_api.requests[2].plain_body["messages"])
    assert after["result"]["stopReason"] == "end_turn", after
    assert fake_api.attempts == 4
    last = fake_api.requests[3].plain_body["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text", "text"]
    assert user_texts(last) == ["and tests", "go on"]
    # Both were shown as the user's messages, in the order they joined.
    assert shown == ["only look in src", "and tests"]
    # Journaled in order and replayed by session/load: each steering message where it joined.
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as again:
        await again.initialize()
        loaded = await again.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded, loaded
        replayed = [
            (u["update"]["sessionUpdate"], u["update"].get("content", {}).get("text"))
            for u in again.updates(session)
            if u["update"]["sessionUpdate"] in {"user_message_chunk", "tool_call"}
        ]
    assert [text for kind, text in replayed if kind == "user_message_chunk"] == [
        "list things",
        "only look in src",
        "and tests",
        "go on",
    ]
    before = replayed[: replayed.index(("user_message_chunk", "only look in src"))]
    assert [kind for kind, _ in before].count("tool_call") == 1  # after request 1's call only


async def test_a_message_sent_as_the_model_ends_its_turn_is_answered_in_that_turn(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    gate = threading.Event()

    def held_answer(body: dict[str, Any], n: int) -> replies.Message:
        gate.wait(HANG_GUARD)
        return replies.text("all done")

    fake_api.script(held_answer, replies.text("ok, only src then"))
    answers: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:

        async def run_prompt() -> None:
            answers["prompt"] = await agent.prompt(session, "tidy up")

        tg.start_soon(run_prompt)
        answers["steer"] = await steer_while_held(agent, fake_api, gate, 1, steering(session, "only src"))
    assert answers["steer"]["result"] == {"outcome": "injected"}
    response = answers["prompt"]
    assert response["result"]["stopReason"] == "end_turn"
    assert turn_record(response)["modelRequests"] == 2
    messages = fake_api.requests[1].plain_body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert user_texts(messages[-1]) == ["only src"]


async def test_with_no_turn_running_a_steering_message_starts_one_or_is_left_to_the_client(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    asked = await agent.request(
        "_session/steering", steering(session, "hello", {"steering": {"idleBehavior": "promptRequired"}})
    )
    assert asked["result"] == {"outcome": "promptRequired", "reason": "noRunningTurn"}
    assert fake_api.attempts == 0
    fake_api.script(replies.text("hi there"))
    started = await agent.request("_session/steering", steering(session, "hello"))
    assert started["result"] == {"outcome": "startedNewTurn"}, started
    # The turn runs with nobody awaiting it: its updates show it, the user's message first.
    await wait_until(lambda: chunks(agent, session), "the answer")
    assert [u["content"]["text"] for u in chunks(agent, session, "user_message_chunk")] == ["hello"]
    assert fake_api.requests[0].plain_body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    ]
    # The session goes on as usual.
    fake_api.script(replies.text("again"))
    assert (await agent.prompt(session, "next"))["result"]["stopReason"] == "end_turn"


async def test_steering_bad_input_gets_clear_errors(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    unknown = await agent.request("_session/steering", steering("sess_" + "0" * 32, "hi"))
    assert unknown["error"]["code"] == -32002, unknown
    for params in (
        {"sessionId": session},
        {"sessionId": session, "prompt": "not a list"},
        {"sessionId": session, "prompt": []},
        steering(session, "/status"),
    ):
        answer = await agent.request("_session/steering", params)
        assert answer["error"]["code"] == -32602, (params, answer)
    # The agent goes on.
    fake_api.script(replies.text("fine"))
    assert (await agent.prompt(session, "still there?"))["result"]["stopReason"] == "end_turn"
