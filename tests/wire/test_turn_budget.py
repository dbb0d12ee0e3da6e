"""The per-turn request budget: exactly N requests reach the API, and every turn starts afresh."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import chunks, turn_record


def always_tool_use(body: dict, n: int) -> replies.Message:
    """A model that asks for a tool forever (varying input, so nothing looks stuck)."""
    return replies.tool_use("list_files", {"pattern": f"*{n}*"}, usage=(100 + n, 7))


async def test_limit_n_sends_exactly_n_requests_and_stops_with_max_turn_requests(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    fake_api.set_fallback(always_tool_use)
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 3}})
    response = await agent.prompt(session, "loop forever")
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert fake_api.attempts == 3
    record = turn_record(response)
    assert record["modelRequests"] == 3
    assert record["maxTurnRequests"] == 3
    assert record["limit"] == "maxTurnRequests"
    assert record["toolCalls"] == 3  # the tools of the last allowed response still ran
    assert record["streaming"] is streaming
    for key in ("retries", "inputTokens", "outputTokens", "durationMs"):
        assert isinstance(record[key], int)
    assert record["inputTokens"] == 101 + 102 + 103 and record["outputTokens"] == 21
    # The history sent last is valid: every tool_use answered in the next message.
    last = fake_api.requests[-1].body["messages"]
    assert last[-1]["role"] == "user" and last[-1]["content"][0]["type"] == "tool_result"


async def test_a_second_prompt_gets_a_fresh_request_budget(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(always_tool_use)
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 2}})
    first = await agent.prompt(session, "one")
    second = await agent.prompt(session, "two")
    assert turn_record(first)["modelRequests"] == 2
    assert turn_record(second)["modelRequests"] == 2
    assert fake_api.attempts == 4
    # The second prompt was merged after the trailing tool_result blocks, not sent as a 2nd user turn.
    messages = fake_api.requests[2].plain_body["messages"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert messages[-1]["content"][-1] == {"type": "text", "text": "two"}


async def test_limit_stop_tells_the_user_which_limit_and_how_to_raise_it(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(always_tool_use)
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 1}})
    await agent.prompt(session, "go")
    notices = [c for c in chunks(agent, session) if "maxTurnRequests" in c["content"]["text"]]
    assert len(notices) == 1
    assert "--max-turn-requests" in notices[0]["content"]["text"]
    # The notice is for the user only: the next request's history does not hold it.
    fake_api.set_fallback(replies.text("ok"))
    await agent.prompt(session, "continue")
    sent = str(fake_api.requests[-1].body["messages"])
    assert "maxTurnRequests" not in sent


async def test_the_environment_sets_the_default_limit(
    agent_env: dict[str, str], acp_schema: object, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(always_tool_use)
    env = {**agent_env, "ACP_AGENT_MAX_TURN_REQUESTS": "2"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    assert turn_record(response)["modelRequests"] == 2
    assert fake_api.attempts == 2


async def test_the_flag_wins_over_the_environment(
    agent_env: dict[str, str], acp_schema: object, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(always_tool_use)
    env = {**agent_env, "ACP_AGENT_MAX_TURN_REQUESTS": "5"}
    async with AgentProcess.start(args=["--max-turn-requests", "1"], env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    assert turn_record(response)["modelRequests"] == 1


@pytest.mark.model_free
async def test_invalid_limit_override_is_invalid_params_naming_the_field(
    agent: AgentProcess, workspace: Path
) -> None:
    for bad in (0, None, "three", -2):
        response = await agent.request(
            "session/new",
            {"cwd": str(workspace), "mcpServers": [], "_meta": {"acp-agent": {"maxTurnRequests": bad}}},
        )
        assert response["error"]["code"] == -32602, bad
        assert "maxTurnRequests" in response["error"]["message"]


async def test_overloaded_then_ok_is_a_retry_not_a_new_request(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 2}})
    fake_api.script(
        replies.tool_use("list_files", {}),
        replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=20),
        replies.tool_use("list_files", {"pattern": "*.md"}),
    )
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert fake_api.attempts == 3
    assert record["modelRequests"] == 2
    assert record["retries"] == 1
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert fake_api.requests[1].body == fake_api.requests[2].body


async def test_tool_call_budget_runs_the_prefix_and_answers_the_rest(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxToolCalls": 3}})
    batch = [replies.tool_use_block("list_files", {"pattern": f"*{i}"}) for i in range(5)]
    fake_api.script(replies.message(batch, stop_reason="tool_use"))
    fake_api.set_fallback(replies.text("unused"))
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert record["limit"] == "maxToolCalls"
    assert record["toolCalls"] == 3 and record["toolCallsSkipped"] == 2
    assert fake_api.attempts == 1
    fake_api.script(replies.text("next"))
    await agent.prompt(session, "next")
    results = fake_api.requests[-1].body["messages"][2]["content"]
    assert [r["type"] for r in results[:5]] == ["tool_result"] * 5
    assert all(r.get("is_error") for r in results[3:5])
