"""Cancelling one subagent alone (ACP's unstable `subagents`: a child session advertises
`capabilities.cancel` while it runs, D27): a `session/cancel` naming a running child stops only
that child, promptly; its partial answer goes back to the parent's `task` call with a note; its
sibling and the parent's turn go on; the meter counts exactly what reached the API. A cancel
naming an ended child, or an id nobody made, is ignored.

Every message of these agents is checked against `schema.unstable.json`."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.turn.subagents.task import CANCELLED_ALONE
from tests.support.agent import AgentProcess
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record
from tests.wire.test_subagent_sessions import UNKNOWN
from tests.wire.test_subagents import conversation, task, updates_of

SO_FAR = "So far: notes.txt is the place to look."


def told(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    """The `subagent_update`s sent on the parent session so far."""
    return [p["update"] for p in agent.updates(session) if p["update"]["sessionUpdate"] == "subagent_update"]


def child_of(agent: AgentProcess, session: str, title: str) -> str:
    [child] = [u["sessionId"] for u in told(agent, session) if u.get("title") == title]
    return child


def last_state(agent: AgentProcess, session: str, child: str) -> dict[str, Any] | None:
    ends = [u for u in told(agent, session) if u["sessionId"] == child and "title" not in u]
    return ends[-1] if ends else None


async def test_cancelling_one_of_two_running_subagents_stops_only_it_and_the_turn_goes_on(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    release_b = threading.Event()

    def b_waits(body: dict[str, Any], attempt: int) -> replies.Reply:
        """B's first reply waits until the test has cancelled A (B runs all that time)."""
        if not release_b.wait(timeout=20):
            raise TimeoutError("B was never released")
        return replies.tool_use("read_file", {"path": "notes.txt"})

    fake_api.route(  # A reads, then its next request hangs until the user cancels it
        routes.first_prompt_has("question A"),
        replies.tool_use("read_file", {"path": "notes.txt"}, text=SO_FAR),
        replies.stall(),
    )
    fake_api.route(
        routes.first_prompt_has("question B"), b_waits, replies.text("answer B: alpha, beta, gamma")
    )
    fake_api.script(
        replies.message(
            [task("Find A", "question A", "toolu_task_a"), task("Find B", "question B", "toolu_task_b")],
            stop_reason="tool_use",
        ),
        replies.text("B answered; A was cancelled"),
        replies.text("still here"),
    )
    env = {**agent_env, "ACP_AGENT_STALL_SECONDS": "30"}  # B's held reply is no stall
    results: dict[str, Any] = {}
    async with AgentProcess.start(env=env, schema=acp_unstable_schema) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace)

        async def prompt() -> None:
            results["response"] = await agent.prompt(session, "ask two helpers")

        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt)
            await anyio.to_thread.run_sync(fake_api.wait_for_attempts, 4)  # parent, A twice, B once
            a, b = child_of(agent, session, "Find A"), child_of(agent, session, "Find B")
            await agent.notify("session/cancel", {"sessionId": a})
            a_end = await wait_until(
                lambda: last_state(agent, session, a), "A's end", timeout=5
            )  # D5's bound
            assert last_state(agent, session, b) is None  # B still runs (its reply is held)
            release_b.set()
            await wait_until(lambda: results.get("response"), "the answer", timeout=20)
        response = results["response"]
        turn = fake_api.requests  # the first prompt's, before the next one
        b_end = last_state(agent, session, b)
        a_traffic = [p["update"] for p in agent.updates(a)]
        a_call = updates_of(agent, session, "toolu_task_a")
        # Now A has ended: a cancel naming it, or an id nobody made, is ignored; the agent goes on.
        await agent.notify("session/cancel", {"sessionId": a})
        await agent.notify("session/cancel", {"sessionId": UNKNOWN})
        await agent.round_trip()
        after = await agent.prompt(session, "and now?")

    assert response["result"]["stopReason"] == "end_turn", response  # the parent's turn went on
    assert after["result"]["stopReason"] == "end_turn", after
    announced = {u["title"]: u for u in told(agent, session) if "title" in u}
    assert all(u["capabilities"] == {"cancel": {}} for u in announced.values())  # cancellable while running
    assert a_end["capabilities"] is None and b_end is not None and b_end["capabilities"] is None  # cleared
    assert (a_end["state"]["state"], a_end["state"]["stopReason"]) == ("idle", "cancelled")
    assert (b_end["state"]["state"], b_end["state"]["stopReason"]) == ("idle", "end_turn")
    # A's read ran and finished; its cancelled request showed nothing more.
    [read] = [u for u in a_traffic if u["sessionUpdate"] == "tool_call"]
    assert [u["status"] for u in a_traffic if u.get("toolCallId") == read["toolCallId"] and "status" in u][
        -1
    ] == "completed"

    # Exactly what reached the API: the parent twice, A twice (its second one cancelled), B twice.
    assert sorted(conversation(r) for r in turn) == sorted(
        ["ask two helpers"] * 2 + ["question A"] * 2 + ["question B"] * 2
    )
    record = turn_record(response)
    assert record["modelRequests"] == len(turn) == 6
    assert {s["description"]: (s["requests"], s["toolCalls"], s["stop"]) for s in record["subagents"]} == {
        "Find A": (2, 1, "cancelled"),
        "Find B": (2, 1, "end_turn"),
    }
    # The parent's next request holds both answers: A's partial one with the note, and B's.
    parent_next = [r for r in turn if conversation(r) == "ask two helpers"][-1]
    results_sent = {r["tool_use_id"]: r for r in parent_next.body["messages"][-1]["content"]}
    assert set(results_sent) == {"toolu_task_a", "toolu_task_b"}
    a_result = str(results_sent["toolu_task_a"]["content"])
    assert SO_FAR in a_result and CANCELLED_ALONE in a_result
    assert not results_sent["toolu_task_a"].get("is_error")
    assert "answer B: alpha, beta, gamma" in str(results_sent["toolu_task_b"]["content"])
    assert a_call[-1]["status"] == "completed"  # the parent's call shows what A had, and why it stopped
    assert a_call[-1]["content"][-1]["content"]["text"] == f"{SO_FAR}\n\n{CANCELLED_ALONE}"
    assert_valid_history(fake_api.requests[-1].body["messages"])


async def test_a_subagent_cancelled_while_its_command_waits_for_permission_never_runs_it(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Like a turn cancel: its question is withdrawn (`$/cancel_request`), its call ends failed,
    the command never runs; the parent's turn goes on with the subagent's partial answer."""
    fake_api.route(
        routes.first_prompt_has("make it"),
        replies.tool_use("run_command", {"command": "echo ran > ran.txt"}, id="toolu_child_cmd", text=SO_FAR),
    )
    fake_api.script(
        replies.message([task("Helper", "make it", "toolu_task")], stop_reason="tool_use"),
        replies.text("the helper was cancelled"),
    )
    asked = anyio.Event()
    child_cancelled = anyio.Event()

    async def editor(method: str, params: Any) -> Any:
        assert method == "session/request_permission"
        asked.set()
        await child_cancelled.wait()  # a client answers `cancelled` once it cancelled the child
        return {"outcome": {"outcome": "cancelled"}}

    env = {**agent_env, "ACP_AGENT_SUBAGENT_TOOLS": "all"}
    results: dict[str, Any] = {}
    async with AgentProcess.start(env=env, schema=acp_unstable_schema, on_request=editor) as agent:
        await agent.initialize(subagents={})
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})

        async def prompt() -> None:
            results["response"] = await agent.prompt(session, "delegate")

        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt)
            with anyio.fail_after(30):  # a hang guard: two model requests and a child first
                await asked.wait()
            child = child_of(agent, session, "Helper")
            await agent.notify("session/cancel", {"sessionId": child})
            end = await wait_until(
                lambda: last_state(agent, session, child), "the child's end", timeout=5
            )  # D5
            child_cancelled.set()
            await wait_until(lambda: results.get("response"), "the answer", timeout=20)
        response = results["response"]
        question = next(m for m in agent.messages if m.get("method") == "session/request_permission")
        withdrawn = [m for m in agent.messages if m.get("method") == "$/cancel_request"]
        in_child = [
            p["update"] for p in agent.updates(child) if p["update"].get("toolCallId") == "toolu_child_cmd"
        ]
    assert response["result"]["stopReason"] == "end_turn", response
    assert (end["state"]["state"], end["state"]["stopReason"]) == ("idle", "cancelled")
    assert [m["params"]["requestId"] for m in withdrawn] == [question["id"]]
    assert in_child[0]["sessionUpdate"] == "tool_call" and in_child[-1]["status"] == "failed"
    assert not (workspace / "ran.txt").exists()
    assert len(fake_api.requests) == 3  # parent, the subagent's one, parent
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_task" and CANCELLED_ALONE in str(result["content"])
    assert SO_FAR in str(result["content"])
    assert turn_record(response)["subagents"][0]["stop"] == "cancelled"
