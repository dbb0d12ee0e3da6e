"""Subagents on the wire: the `task` tool runs child loops at once, inside the turn's one meter,
shows each as one tool call, and gives the parent only their answers (issue 26, D27)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.testing.recorded import RecordedRequest
from tests.support.agent import AgentProcess, RpcError
from tests.support.history import assert_valid_history
from tests.wire.conftest import turn_record


def task(description: str, prompt: str, id: str | None = None) -> replies.ToolUseBlock:
    return replies.tool_use_block("task", {"description": description, "prompt": prompt}, id=id)


def both_at_once(reply: replies.Reply, barrier: threading.Barrier) -> replies.ReplyFactory:
    """`reply`, served only once the other child's first request has arrived too: run one after
    the other, the first would wait alone, and the test fails on the barrier instead of hanging."""

    def serve(body: dict[str, Any], attempt: int) -> replies.Reply:
        barrier.wait(timeout=30)  # a hang guard, for a loaded box
        return reply

    return serve


def conversation(request: RecordedRequest) -> str:
    """Which conversation a request belongs to: its first user message's text."""
    first = request.body["messages"][0]["content"]
    return "".join(b.get("text", "") for b in first if isinstance(b, dict))


def updates_of(agent: AgentProcess, session: str, call_id: str) -> list[dict[str, Any]]:
    return [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == call_id]


async def test_two_task_calls_run_at_once_and_the_parent_gets_only_their_answers(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
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
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "ask two helpers")
        shown = {call: updates_of(agent, session, call) for call in ("toolu_task_a", "toolu_task_b")}
    assert response["result"]["stopReason"] == "end_turn", response
    requests = fake_api.requests
    assert len(requests) == 6
    order = [conversation(r) for r in requests]
    firsts = [order.index("question A"), order.index("question B")]
    seconds = [len(order) - 1 - order[::-1].index(q) for q in ("question A", "question B")]
    assert max(firsts) < min(seconds)  # both children's first requests before either's second
    for request in requests[1:5]:  # the children: their own prompt, tools and no parent history
        system = request.body["system"][0]["text"]
        assert system.startswith(SUBAGENT_MARKER)
        assert [t["name"] for t in request.body["tools"]] == ["read_file", "list_files", "search_text"]
        assert len(request.body["messages"]) in (1, 3)
    parent = requests[5].plain_body["messages"]
    assert_valid_history(parent)
    assert len(parent) == 3  # the prompt, the two task calls, their two results: no child history
    results = {b["tool_use_id"]: b["content"] for b in parent[2]["content"]}
    assert results == {
        "toolu_task_a": "answer A: notes.txt holds alpha, beta, gamma",
        "toolu_task_b": "answer B: notes.txt holds alpha, beta, gamma",
    }
    record = turn_record(response)
    assert record["modelRequests"] == 6 and record["toolCalls"] == 4  # 2 task calls + 2 reads
    children = {s["description"]: s for s in record["subagents"]}
    assert set(children) == {"Find A", "Find B"}
    for child in children.values():
        assert (child["requests"], child["toolCalls"], child["stop"]) == (2, 1, "end_turn")
        assert child["inputTokens"] == 20 and child["outputTokens"] == 10
    assert record["inputTokens"] == 60  # the tree's totals: 6 requests of 10 input tokens
    for call, name in (("toolu_task_a", "A"), ("toolu_task_b", "B")):
        started, *rest = shown[call]
        assert (started["title"], started["kind"]) == (f"Subagent: Find {name}", "think")
        progress = [u["content"][0]["content"]["text"] for u in rest if "content" in u]
        assert "Read notes.txt" in progress  # the child's tool call, as a line of the parent's
        final = rest[-1]
        assert final["status"] == "completed"
        assert [c["content"]["text"] for c in final["content"]] == [
            "Read notes.txt",
            f"answer {name}: notes.txt holds alpha, beta, gamma",
        ]


async def test_a_subagent_is_offered_the_read_only_tools_only_and_no_task(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(
        routes.system_has(SUBAGENT_MARKER),
        replies.tool_use("write_file", {"path": "made.txt", "content": "x"}),
        replies.text("I could not write it"),
    )
    fake_api.script(
        replies.message([task("Try a write", "write made.txt")], stop_reason="tool_use"),
        replies.text("ok"),
    )
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        asked.append(method)
        return RpcError(-32601, method)

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "end_turn"
    parent_tools = [t["name"] for t in fake_api.requests[0].body["tools"]]
    assert "task" in parent_tools and "write_file" in parent_tools
    child = fake_api.requests[1].body
    assert "write_file" not in [t["name"] for t in child["tools"]]
    assert "task" not in [t["name"] for t in child["tools"]]
    result = fake_api.requests[2].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and "unknown tool 'write_file'" in result["content"]
    assert not (workspace / "made.txt").exists() and asked == []
