"""Steering while a turn is still starting (issue 41 item 11): a message sent after a prompt (or a
first steering message) but before its turn's first request joins that turn, answered `injected`;
it never starts a turn of its own while one exists or is starting, so the prompt's request limit
holds exactly. The turn is held at its start by the project's trust question (asked before the
session's runner is built), answered only once every message is in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import write_settings
from tests.wire.test_steering import steering, user_texts

MESSAGES = 20


class HeldTrust:
    """The editor: holds the trust question until `release` is set, then trusts the folder."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.release = anyio.Event()

    async def __call__(self, method: str, params: Any) -> Any:
        assert method == "session/request_permission", method
        self.asked.append(params)
        await self.release.wait()
        return {"outcome": {"outcome": "selected", "optionId": "trust_once"}}


def untrusted_repo(tmp_path: Path) -> Path:
    """A repository whose settings wait for trust: its first turn asks before it starts."""
    workspace = claude_repo(tmp_path)
    write_settings(workspace / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make *)"]}})
    return workspace


async def steer_all(agent: AgentProcess, session: str, first: int = 0) -> list[Any]:
    outcomes = []
    for n in range(first, MESSAGES):
        answer = await agent.request("_session/steering", steering(session, f"steer {n}"))
        outcomes.append(answer.get("result", answer))
    return outcomes


async def test_messages_sent_while_the_prompts_turn_starts_join_it_and_the_limit_holds(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = untrusted_repo(tmp_path)
    editor = HeldTrust()
    fake_api.script(replies.text("first answer"), replies.text("second answer"))
    answers: dict[str, Any] = {}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 1}})
        async with anyio.create_task_group() as tg:

            async def first() -> None:
                answers["first"] = await agent.prompt(session, "the prompt")

            tg.start_soon(first)
            await wait_until(lambda: editor.asked, "the trust question (the turn is starting)")
            outcomes = await steer_all(agent, session)
            editor.release.set()
        assert outcomes == [{"outcome": "injected"}] * MESSAGES
        assert turn_record(answers["first"])["modelRequests"] == 1
        # Had any message started a turn of its own, it would run before this prompt (FIFO).
        second = await agent.prompt(session, "next prompt")
    assert turn_record(second)["modelRequests"] == 1
    assert len(fake_api.requests) == 2, [r.plain_body["messages"][-1] for r in fake_api.requests]
    carried = user_texts(fake_api.requests[0].plain_body["messages"][-1])
    assert carried == ["the prompt", *(f"steer {n}" for n in range(MESSAGES))]


async def test_messages_after_one_that_started_a_turn_join_that_turn(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = untrusted_repo(tmp_path)
    editor = HeldTrust()
    fake_api.script(replies.text("steered answer"), replies.text("second answer"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 1}})
        started = await agent.request("_session/steering", steering(session, "steer 0"))
        assert started["result"] == {"outcome": "startedNewTurn"}, started
        await wait_until(lambda: editor.asked, "the trust question (the steered turn is starting)")
        outcomes = await steer_all(agent, session, first=1)
        editor.release.set()
        assert outcomes == [{"outcome": "injected"}] * (MESSAGES - 1)
        await wait_until(lambda: fake_api.requests, "the steered turn's request")
        second = await agent.prompt(session, "next prompt")
    assert turn_record(second)["modelRequests"] == 1
    assert len(fake_api.requests) == 2, [r.plain_body["messages"][-1] for r in fake_api.requests]
    carried = user_texts(fake_api.requests[0].plain_body["messages"][-1])
    assert carried == [f"steer {n}" for n in range(MESSAGES)]
