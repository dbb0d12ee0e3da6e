"""Subagents inside the turn's budgets: exactly N requests across the tree, a cancel that ends
every child, and a kill mid-child that leaves a history the API accepts (issue 26, D27)."""

from __future__ import annotations

import itertools
import os
import signal
from pathlib import Path
from typing import Any

import anyio

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.turn.context.history import INTERRUPTED
from tests.support.agent import AgentProcess
from tests.support.client import prompt_until_killed
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record

SONNET = "claude-sonnet-5-5"  # a current model: the fake applies its strict rules and its cache


def two_tasks(body: dict[str, Any], attempt: int) -> replies.Reply:
    """A parent that asks two subagents every time (fresh call ids each reply)."""
    return replies.message(
        [
            replies.tool_use_block("task", {"description": "Loop A", "prompt": "loop A"}),
            replies.tool_use_block("task", {"description": "Loop B", "prompt": "loop B"}),
        ],
        stop_reason="tool_use",
    )


def endless_child() -> replies.ReplyFactory:
    """A subagent that never answers: another listing each time (never a repeated call)."""
    counter = itertools.count()

    def reply(body: dict[str, Any], attempt: int) -> replies.Reply:
        return replies.tool_use("list_files", {"pattern": f"*{next(counter)}*"})

    return reply


async def test_max_turn_requests_5_with_endless_subagents_sends_exactly_5_requests(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    children = fake_api.route(routes.system_has(SUBAGENT_MARKER), otherwise=endless_child())
    fake_api.set_fallback(two_tasks)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, {"acp-agent": {"maxTurnRequests": 5}})
        response = await agent.prompt(session, "explore forever")
        notices = [
            p["update"]["content"]["text"]
            for p in agent.updates(session)
            if p["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
    assert response["result"]["stopReason"] == "max_turn_requests", response
    assert fake_api.attempts == 5  # across the parent and its children
    record = turn_record(response)
    assert (record["modelRequests"], record["limit"]) == (5, "maxTurnRequests")
    ran = [s for s in record["subagents"] if s["requests"]]
    assert children.served == sum(s["requests"] for s in record["subagents"]) == 2
    assert record["modelRequests"] - children.served == 3  # the parent's own three
    assert [(s["description"], s["requests"], s["stop"], s["limit"]) for s in ran] == [
        ("Loop A", 1, "max_turn_requests", "maxTurnRequests"),
        ("Loop B", 1, "max_turn_requests", "maxTurnRequests"),
    ]
    # The children's answers named their limit; the parent's next request carried them.
    results = fake_api.requests[3].body["messages"][-1]["content"]
    assert all("[subagent stopped at its limit: maxTurnRequests" in str(r["content"]) for r in results)
    assert any("limit of 5 model requests" in text for text in notices)


async def test_a_cancel_during_two_subagents_ends_the_turn_and_the_next_history_is_valid(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(routes.system_has(SUBAGENT_MARKER), otherwise=replies.stall())
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("task", {"description": "Slow A", "prompt": "wait A"}, id="toolu_a"),
                replies.tool_use_block("task", {"description": "Slow B", "prompt": "wait B"}, id="toolu_b"),
            ],
            stop_reason="tool_use",
        )
    )
    results: dict[str, Any] = {}
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)

        async def prompt() -> None:
            results["response"] = await agent.prompt(session, "ask two slow helpers")

        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt)
            await anyio.to_thread.run_sync(fake_api.wait_for_attempts, 3)  # both children wait
            await agent.notify("session/cancel", {"sessionId": session})
            # D5's cancel bound (bench/subagents.py measures it).
            await wait_until(lambda: "response" in results, "the cancelled answer", timeout=5)
        response = results["response"]
        statuses = {
            p["update"]["toolCallId"]: p["update"]["status"]
            for p in agent.updates(session)
            if p["update"].get("toolCallId") in {"toolu_a", "toolu_b"} and "status" in p["update"]
        }
        fake_api.script(replies.text("fine"))
        after = await agent.prompt(session, "and now?")
    assert response["result"]["stopReason"] == "cancelled"
    record = turn_record(response)
    assert record["abortedDuring"] == "tools"
    assert sorted(s["stop"] for s in record["subagents"]) == ["cancelled", "cancelled"]
    assert statuses == {"toolu_a": "failed", "toolu_b": "failed"}
    assert after["result"]["stopReason"] == "end_turn", after
    messages = fake_api.requests[-1].plain_body["messages"]
    assert_valid_history(messages)
    answered = [b for b in messages[2]["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in answered] == ["toolu_a", "toolu_b"]
    assert all(b["is_error"] and "cancelled" in b["content"] for b in answered)
    assert fake_api.requests[-1].body["model"] == SONNET
    assert len(fake_api.served) == fake_api.attempts == 4  # no 400 anywhere


async def test_a_kill_during_subagents_leaves_a_history_the_api_accepts_after_load(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(routes.system_has(SUBAGENT_MARKER), otherwise=replies.stall())
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("task", {"description": "A", "prompt": "wait A"}, id="toolu_a"),
                replies.tool_use_block("task", {"description": "B", "prompt": "wait B"}, id="toolu_b"),
            ],
            stop_reason="tool_use",
        )
    )
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema, check_on_exit=False) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_killed, agent, session)
            await anyio.to_thread.run_sync(fake_api.wait_for_attempts, 3)
            os.kill(agent.pid, signal.SIGKILL)
    fake_api.script(replies.text("after the crash"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded, loaded
        response = await agent.prompt(session, "are you back?")
    assert response["result"]["stopReason"] == "end_turn", response
    messages = fake_api.requests[-1].plain_body["messages"]
    assert_valid_history(messages)
    assert len(messages) == 3  # no child's history was kept, nor replayed
    results = {b["tool_use_id"]: b for b in messages[2]["content"] if b.get("type") == "tool_result"}
    assert results["toolu_a"]["content"] == results["toolu_b"]["content"] == INTERRUPTED
