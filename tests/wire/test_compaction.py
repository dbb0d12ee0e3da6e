"""Compaction and slash commands: older turns become a summary, counted like any request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import chunks, turn_record


async def test_a_full_context_is_compacted_with_one_counted_request(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = {**agent_env, "ACP_AGENT_CONTEXT_WINDOW": "1000"}
    fake_api.script(
        replies.text("first answer", usage=(100, 10)),
        replies.text("second answer", usage=(200, 10)),
        replies.tool_use("list_files", {}, usage=(900, 50)),  # 950 >= 0.8 * 1000
        replies.text("SUMMARY OF TURN ONE", usage=(300, 20)),  # the compaction request
        replies.text("third answer", usage=(400, 10)),
    )
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "first prompt")
        await agent.prompt(session, "second prompt")
        response = await agent.prompt(session, "third prompt")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "end_turn"
    assert record["modelRequests"] == 3  # tool_use, the summary, the answer
    # The summary is the session's own request plus the instruction: tools, system, messages.
    summary_request = fake_api.requests[3].plain_body
    before = fake_api.requests[2].plain_body
    assert summary_request["tools"] == before["tools"] and summary_request["system"] == before["system"]
    assert (
        summary_request["messages"][:-1]
        == before["messages"] + summary_request["messages"][len(before["messages"]) : -1]
    )
    assert "summarise the conversation" in summary_request["messages"][-1]["content"][-1]["text"]
    assert "tool_choice" not in summary_request
    final = fake_api.requests[4].plain_body["messages"]
    assert "SUMMARY OF TURN ONE" in final[0]["content"][0]["text"]
    texts = str(final)
    assert "first prompt" not in texts and "second prompt" in texts and "third prompt" in texts
    thoughts = chunks(agent, session, "agent_thought_chunk")
    assert any("summarised" in t["content"]["text"] for t in thoughts)


@pytest.mark.model_free
async def test_status_answers_without_a_model_request(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    response = await agent.prompt(session, "/status")
    assert response["result"]["stopReason"] == "end_turn"
    assert turn_record(response)["modelRequests"] == 0
    assert fake_api.attempts == 0
    text = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert "Model: claude-test-1" in text and "maxTurnRequests 50" in text


@pytest.mark.model_free
async def test_commands_are_announced_after_session_new(agent: AgentProcess, workspace: Path) -> None:
    session = await agent.new_session(workspace)
    update = await agent.wait_for(
        lambda m: (
            m["params"]["update"]["sessionUpdate"] == "available_commands_update"
            and m["params"]["sessionId"] == session
        )
    )
    names = {c["name"] for c in update["params"]["update"]["availableCommands"]}
    assert names == {
        "status",
        "permissions",
        "hooks",
        "compact",
        "fork",
        "rewind",
        "agents",
        "tasks",
        "mcp",
        "context",
        "cost",
        "init",
        "review",
    }


async def test_compact_command_summarises_now(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.text("one"),
        replies.text("two"),
        replies.text("three"),
        replies.text("THE SUMMARY"),
        replies.text("after"),
    )
    for text in ("p1", "p2", "p3"):
        await agent.prompt(session, text)
    response = await agent.prompt(session, "/compact")
    assert turn_record(response)["modelRequests"] == 1
    await agent.prompt(session, "p4")
    assert "THE SUMMARY" in str(fake_api.requests[-1].body["messages"][0])
