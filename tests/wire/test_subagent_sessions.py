"""Subagents as child sessions (ACP's unstable `subagents`, issue 26, D27): announced on the
parent by `subagent_update` (cancellable alone) before any of their traffic, told their task by a
`session_message` from the parent, their own live updates under their own session ids, a final
state; nothing of it for a client that did not advertise the capability;
and a request naming a child's id is answered with the usual unknown-session error.

Every message of these agents is checked against `schema.unstable.json` where the client
advertised `subagents`, and against the stable schema where it did not."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.test_subagent_limits import endless_child
from tests.wire.test_subagents import both_at_once, task, updates_of

CALLS = {"toolu_task_a": "A", "toolu_task_b": "B"}
UNKNOWN = f"sess_{'0' * 32}"


def script_two_children(fake_api: FakeMessagesAPI) -> None:
    barrier = threading.Barrier(2)
    for name in ("A", "B"):
        fake_api.route(
            routes.first_prompt_has(f"question {name}"),
            both_at_once(replies.tool_use("read_file", {"path": "notes.txt"}), barrier),
            replies.text(f"answer {name}: notes.txt holds alpha, beta, gamma"),
        )
    fake_api.script(
        replies.message(
            [task("Find A", "question A", "toolu_task_a"), task("Find B", "question B", "toolu_task_b")],
            stop_reason="tool_use",
        ),
        replies.text("both answered"),
    )


def assert_parent_calls_as_ever(agent: AgentProcess, session: str) -> None:
    """The parent's `task` calls are what every client is shown: one call per subagent, its
    tool calls as lines, then its answer."""
    for call, name in CALLS.items():
        started, *rest = updates_of(agent, session, call)
        assert (started["sessionUpdate"], started["title"], started["kind"]) == (
            "tool_call",
            f"Subagent: Find {name}",
            "think",
        )
        final = rest[-1]
        assert final["status"] == "completed"
        assert [c["content"]["text"] for c in final["content"]] == [
            "Read notes.txt",
            f"answer {name}: notes.txt holds alpha, beta, gamma",
        ]


def session_updates(agent: AgentProcess) -> list[dict[str, Any]]:
    return [m["params"] for m in agent.messages if m.get("method") == "session/update" and "id" not in m]


async def test_each_subagent_is_announced_then_shown_in_its_own_session_then_ended(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    script_two_children(fake_api)
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "ask two helpers")
        sent = session_updates(agent)
        assert_parent_calls_as_ever(agent, session)
    assert response["result"]["stopReason"] == "end_turn", response
    told = [(i, p["update"]) for i, p in enumerate(sent) if p["update"]["sessionUpdate"] == "subagent_update"]
    assert all(sent[i]["sessionId"] == session for i, _ in told)  # on the parent session
    announced = {u["title"]: (i, u["sessionId"]) for i, u in told if "title" in u}
    assert set(announced) == {"Find A", "Find B"}
    children = {child for _, child in announced.values()}
    assert len(children) == 2 and session not in children
    for title, (at, child) in announced.items():
        name = title[-1]
        announcement = told[[i for i, _ in told].index(at)][1]
        assert announcement["state"] == {"state": "running"}
        assert announcement["capabilities"] == {"cancel": {}}  # a client may cancel it alone
        own = [(i, p["update"]) for i, p in enumerate(sent) if p["sessionId"] == child]
        assert own and min(i for i, _ in own) > at  # announced before any of its traffic
        task_told = own[0][1]  # first in its session: its task, a message from the parent
        assert (
            task_told["sessionUpdate"],
            task_told["senderSessionId"],
            task_told["recipientSessionId"],
        ) == (
            "session_message",
            session,
            child,
        )
        assert task_told["content"] == [{"type": "text", "text": f"question {name}"}]
        kinds = [u["sessionUpdate"] for _, u in own]
        text = "".join(u["content"]["text"] for _, u in own if u["sessionUpdate"] == "agent_message_chunk")
        assert text == f"answer {name}: notes.txt holds alpha, beta, gamma"
        [call] = [u for _, u in own if u["sessionUpdate"] == "tool_call"]
        assert (call["title"], call["kind"], call["rawInput"]) == (
            "Read notes.txt",
            "read",
            {"path": "notes.txt"},
        )
        finished = [u for _, u in own if u.get("toolCallId") == call["toolCallId"] and "status" in u]
        assert finished[-1]["status"] == "completed"
        assert "tool_call" in kinds and "subagent_update" not in kinds
        [(end_at, end)] = [(i, u) for i, u in told if u["sessionId"] == child and "title" not in u]
        assert end_at > max(i for i, _ in own)  # the final state, after all of its traffic
        assert end["state"]["state"] == "idle" and end["state"]["stopReason"] == "end_turn"
        assert end["capabilities"] is None  # ended: nothing left to cancel
        assert end["state"]["usage"]["inputTokens"] == 20 and end["state"]["usage"]["outputTokens"] == 10
    parent_ids = {p["sessionId"] for p in sent} - children
    assert parent_ids == {session}


async def test_without_the_capability_no_subagent_update_and_no_other_session_is_sent(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    script_two_children(fake_api)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize(subagents=None)  # null: not advertised
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "ask two helpers")
        sent = session_updates(agent)
        assert_parent_calls_as_ever(agent, session)
    assert response["result"]["stopReason"] == "end_turn", response
    assert {p["sessionId"] for p in sent} == {session}
    assert not [p for p in sent if p["update"]["sessionUpdate"] == "subagent_update"]
    # The children's text is theirs: the parent's session shows only its own answer.
    text = "".join(
        p["update"]["content"]["text"] for p in sent if p["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "both answered"


async def test_a_request_naming_a_child_session_gets_the_unknown_session_error_and_the_agent_goes_on(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(routes.first_prompt_has("question C"), replies.text("answer C"))
    fake_api.script(
        replies.message([task("Find C", "question C", "toolu_task_c")], stop_reason="tool_use"),
        replies.text("answered"),
        replies.text("still here"),
    )
    requests: list[tuple[str, dict[str, Any]]] = [
        ("session/prompt", {"prompt": [{"type": "text", "text": "hi"}]}),
        ("session/load", {"cwd": str(workspace), "mcpServers": []}),
        ("session/resume", {"cwd": str(workspace), "mcpServers": []}),
        ("session/set_mode", {"modeId": "plan"}),
        ("session/set_config_option", {"configId": "mode", "value": "plan"}),
        ("session/set_title", {"title": "mine now"}),
        ("session/close", {}),
        ("session/delete", {}),  # idempotent: an id it does not know is deleted already
    ]
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "ask a helper")
        [child] = [
            p["update"]["sessionId"]
            for p in agent.updates(session)
            if p["update"]["sessionUpdate"] == "subagent_update" and "title" in p["update"]
        ]
        answers = {}
        for method, params in requests:
            named = await agent.request(method, {"sessionId": child, **params})
            unknown = await agent.request(method, {"sessionId": UNKNOWN, **params})
            answers[method] = (named, unknown)
        await agent.notify("session/cancel", {"sessionId": child})
        listed = await agent.request("session/list", {})
        after = await agent.prompt(session, "and now?")
    assert first["result"]["stopReason"] == "end_turn", first
    named, unknown = answers.pop("session/delete")
    assert named["result"] == unknown["result"] == {}
    for method, (named, unknown) in answers.items():
        assert "error" in named, (method, named)
        # the usual unknown-session error: the same as for an id nobody ever made
        assert named["error"]["code"] == unknown["error"]["code"], (method, named, unknown)
        assert named["error"]["message"] == unknown["error"]["message"].replace(UNKNOWN, child)
    assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session]
    assert after["result"]["stopReason"] == "end_turn", after


def ends(agent: AgentProcess, session: str) -> dict[str, dict[str, Any]]:
    """Each child's final state, by the title it was announced with."""
    told = [p["update"] for p in agent.updates(session) if p["update"]["sessionUpdate"] == "subagent_update"]
    titles = {u["sessionId"]: u["title"] for u in told if "title" in u}
    return {titles[u["sessionId"]]: u["state"] for u in told if "title" not in u}


async def test_a_cancel_during_two_children_ends_both_child_sessions_cancelled_before_the_answer(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(routes.system_has(SUBAGENT_MARKER), otherwise=replies.stall())
    fake_api.script(
        replies.message(
            [task("Slow A", "wait A", "toolu_a"), task("Slow B", "wait B", "toolu_b")], stop_reason="tool_use"
        )
    )
    results: dict[str, Any] = {}
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace)

        async def prompt() -> None:
            results["response"] = await agent.prompt(session, "ask two slow helpers")

        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt)
            await anyio.to_thread.run_sync(fake_api.wait_for_attempts, 3)  # both children wait
            await agent.notify("session/cancel", {"sessionId": session})
            await wait_until(lambda: "response" in results, "the cancelled answer", timeout=5)  # D5
        response = results["response"]
        answered_at = agent.messages.index(response)
        told_at = [
            i
            for i, m in enumerate(agent.messages)
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "subagent_update"
        ]
        ended = ends(agent, session)
        finals = [
            p["update"]
            for p in agent.updates(session)
            if p["update"]["sessionUpdate"] == "subagent_update" and "title" not in p["update"]
        ]
    assert response["result"]["stopReason"] == "cancelled"
    assert len(told_at) == 4 and max(told_at) < answered_at  # told before the prompt's answer
    assert {title: (s["state"], s["stopReason"]) for title, s in ended.items()} == {
        "Slow A": ("idle", "cancelled"),
        "Slow B": ("idle", "cancelled"),
    }
    assert all(u["capabilities"] is None for u in finals)  # cleared: nothing left to cancel


async def test_a_child_stopped_by_the_turns_budget_ends_with_max_turn_requests(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(routes.system_has(SUBAGENT_MARKER), otherwise=endless_child())
    fake_api.script(
        replies.message([task("Loop", "loop forever", "toolu_loop")], stop_reason="tool_use"),
        replies.text("done with what I have"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace, {"acp-agent": {"maxTurnRequests": 3}})
        response = await agent.prompt(session, "explore")
        ended = ends(agent, session)
    assert response["result"]["stopReason"] == "end_turn", response
    assert len(fake_api.requests) == 3  # one meter for the tree: parent, child's share of 1, parent
    assert (ended["Loop"]["state"], ended["Loop"]["stopReason"]) == ("idle", "max_turn_requests")
