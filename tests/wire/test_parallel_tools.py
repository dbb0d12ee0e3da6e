"""Read-only tool calls of one reply run at once; the rest one at a time; results in model order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record


def statuses(agent: AgentProcess, session: str, call_id: str) -> list[str]:
    return [
        p["update"]["status"]
        for p in agent.updates(session)
        if p["update"].get("toolCallId") == call_id and "status" in p["update"]
    ]


def tool_results(fake_api: FakeMessagesAPI) -> list[dict[str, Any]]:
    return [
        b for b in fake_api.requests[-1].body["messages"][-1]["content"] if b.get("type") == "tool_result"
    ]


async def test_five_reads_of_one_reply_are_in_the_editors_hands_at_once_and_come_back_in_order(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    names = [f"f{i}.txt" for i in range(5)]
    buffers = {str((workspace / name).resolve()): f"contents of {name}\n" for name in names}
    asked: list[str] = []
    answered: list[str] = []
    all_open = anyio.Event()

    async def editor(method: str, params: Any) -> Any:
        if method != "fs/read_text_file":
            return RpcError(-32601, method)
        name = Path(params["path"]).name
        asked.append(name)
        if len(asked) == len(names):
            all_open.set()
        # No read is answered before all five are asked: reads run one at a time would never ask
        # the second, and this fails instead of hanging.
        with anyio.fail_after(10):
            await all_open.wait()
            # The first file answers last: completion order is the reverse of the model's order.
            await wait_until(lambda: set(names[names.index(name) + 1 :]) <= set(answered), "the later reads")
        answered.append(name)
        return {"content": buffers[params["path"]]}

    calls = [
        replies.tool_use_block("read_file", {"path": name}, id=f"toolu_r{i}") for i, name in enumerate(names)
    ]
    fake_api.script(replies.message(calls, stop_reason="tool_use"), replies.text("read them"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": False})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "read the five files")
        assert response["result"]["stopReason"] == "end_turn"
        assert turn_record(response)["toolCalls"] == 5
        for i in range(5):
            assert statuses(agent, session, f"toolu_r{i}") == ["pending", "in_progress", "completed"]
    assert sorted(asked) == names and answered == names[::-1]  # all at once, answered last to first
    results = tool_results(fake_api)
    assert [r["tool_use_id"] for r in results] == [f"toolu_r{i}" for i in range(5)]
    assert [r["content"] for r in results] == [f"contents of {name}\n" for name in names]


async def test_calls_that_need_permission_run_alone_between_runs_of_reads(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text(f"{name}\n")
    events: list[str] = []
    both_asked = anyio.Event()

    async def editor(method: str, params: Any) -> Any:
        if method == "fs/read_text_file":
            name = Path(params["path"]).name
            events.append(f"read {name}")
            if name == "a.txt":
                # deliberate: a stall the editor holds, in which a question asked beside the read would come
                await anyio.sleep(0.2)
            else:  # b and c run together: each ends once both are asked (no race with a delay)
                if {"read b.txt", "read c.txt"} <= set(events):
                    both_asked.set()
                with anyio.move_on_after(10):  # one at a time: b ends alone, and the test fails
                    await both_asked.wait()
            events.append(f"done {name}")
            return {"content": (workspace / name).read_text()}
        if method == "session/request_permission":
            events.append(f"ask {params['toolCall']['toolCallId']}")
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return RpcError(-32601, method)

    calls = [
        replies.tool_use_block("read_file", {"path": "a.txt"}, id="toolu_a"),
        replies.tool_use_block("run_command", {"command": "echo one"}, id="toolu_one"),
        replies.tool_use_block("run_command", {"command": "echo two"}, id="toolu_two"),
        replies.tool_use_block("read_file", {"path": "b.txt"}, id="toolu_b"),
        replies.tool_use_block("read_file", {"path": "c.txt"}, id="toolu_c"),
    ]
    fake_api.script(replies.message(calls, stop_reason="tool_use"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": False})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "end_turn"
    assert events[:4] == ["read a.txt", "done a.txt", "ask toolu_one", "ask toolu_two"]
    assert sorted(events[4:6]) == ["read b.txt", "read c.txt"]  # b and c together, after both
    results = tool_results(fake_api)
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_one", "toolu_two", "toolu_b", "toolu_c"]
    assert "one" in str(results[1]["content"]) and "two" in str(results[2]["content"])


async def test_cancel_during_a_parallel_batch_fails_every_open_call_and_keeps_history_valid(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    released = anyio.Event()

    async def editor(method: str, params: Any) -> Any:
        if method != "fs/read_text_file":
            return RpcError(-32601, method)
        await released.wait()  # reads the editor never answers by itself
        return {"content": ""}

    calls = [
        replies.tool_use_block("read_file", {"path": f"slow{i}.txt"}, id=f"toolu_p{i}") for i in range(3)
    ]
    calls.append(replies.tool_use_block("write_file", {"path": "x.txt", "content": "x"}, id="toolu_w"))
    fake_api.script(replies.message(calls, stop_reason="tool_use"))
    results: dict = {}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": False})
        session = await agent.new_session(workspace)

        async def prompt() -> None:
            results["response"] = await agent.prompt(session, "read them")

        def running() -> int:
            return sum(p["update"].get("status") == "in_progress" for p in agent.updates(session))

        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt)
            # All three reads at once (one at a time would stop at one).
            await wait_until(lambda: running() >= 3, "three reads running", timeout=10)
            await agent.notify("session/cancel", {"sessionId": session})
            # D5's cancel bound: the reads are never answered by themselves.
            await wait_until(lambda: "response" in results, "the cancelled answer", timeout=5)
        response = results["response"]
        assert response["result"]["stopReason"] == "cancelled"
        assert turn_record(response)["abortedDuring"] == "tools"
        for i in range(3):
            assert statuses(agent, session, f"toolu_p{i}") == ["pending", "in_progress", "failed"]
        assert statuses(agent, session, "toolu_w") == []  # never started, so never shown
        assert not (workspace / "x.txt").exists()
        fake_api.script(replies.text("after"))
        released.set()
        await agent.prompt(session, "next")
    history = fake_api.requests[-1].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    answered = [b for b in history[2]["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in answered] == ["toolu_p0", "toolu_p1", "toolu_p2", "toolu_w"]
    assert all(b.get("is_error") for b in answered)
