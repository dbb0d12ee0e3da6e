"""Every per-turn budget ends the turn with its own `limit`, and each turn starts with a fresh meter."""

from __future__ import annotations

from pathlib import Path

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import turn_record


async def test_the_fifth_identical_call_and_result_ends_the_turn(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "same.txt").write_text("unchanging\n")
    fake_api.set_fallback(replies.tool_use("read_file", {"path": "same.txt"}))
    session = await agent.new_session(workspace)
    response = await agent.prompt(session, "loop")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert record["limit"] == "repeatedToolCall"
    assert record["modelRequests"] == 5 and fake_api.attempts == 5
    third = fake_api.requests[3].body["messages"][-1]["content"][-1]
    assert "change approach" in str(third["content"])
    second = fake_api.requests[2].body["messages"][-1]["content"][-1]
    assert "change approach" not in str(second["content"])


async def test_identical_calls_with_changing_results_are_not_stopped(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    counter = workspace / "counter.txt"

    def reply(body: dict, n: int) -> replies.Message:
        counter.write_text(f"version {n}\n")  # the file changes between reads: polling, not a loop
        return replies.tool_use("read_file", {"path": "counter.txt"}) if n <= 7 else replies.text("done")

    fake_api.set_fallback(reply)
    session = await agent.new_session(workspace)
    response = await agent.prompt(session, "poll")
    assert response["result"]["stopReason"] == "end_turn"
    assert turn_record(response)["modelRequests"] == 8


async def test_output_token_budget_ends_the_turn_with_max_tokens(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(
        lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}, usage=(10, 40))
    )
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnOutputTokens": 100}})
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_tokens"
    assert record["limit"] == "maxTurnOutputTokens"
    assert record["modelRequests"] == 3 and record["outputTokens"] == 120


async def test_turn_wall_clock_ends_the_turn_with_its_limit(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    warm = await agent.new_session(workspace)  # the SDK's first request is slow; not this test's point
    fake_api.script(replies.text("warm"), replies.stall())
    await agent.prompt(warm, "warm up")
    session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnSeconds": 2}})
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert record["limit"] == "maxTurnSeconds"
    fake_api.script(replies.text("next turn, fresh clock"))
    again = await agent.prompt(session, "again")
    assert again["result"]["stopReason"] == "end_turn"


async def test_cost_budget_ends_the_turn_and_cost_is_reported(
    agent_env: dict[str, str], acp_schema: object, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"claude-test-1": {"input": 1000, "output": 1000}}')  # $0.001 per token
    fake_api.set_fallback(
        lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}, usage=(10, 10))
    )  # $0.02 a request
    env = {**agent_env, "ACP_AGENT_PRICES": str(prices)}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnCostUsd": 0.05}})
        response = await agent.prompt(session, "spend")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert record["limit"] == "maxTurnCostUsd"
    assert record["modelRequests"] == 3 and record["costUsd"] == 0.06


async def test_an_unknown_price_reports_null_cost_never_zero(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("hi"))
    response = await agent.prompt(session, "go")
    assert turn_record(response).get("costUsd") is None


async def test_wrap_up_spends_the_last_request_on_a_summary_without_tools(
    agent_env: dict[str, str], acp_schema: object, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}))
    env = {**agent_env, "ACP_AGENT_ON_LIMIT": "wrap_up"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 3}})
        response = await agent.prompt(session, "loop")
    record = turn_record(response)
    assert fake_api.attempts == 3
    assert response["result"]["stopReason"] == "max_turn_requests" and record["wrapUp"] is True
    last = fake_api.requests[-1].body
    assert last["tool_choice"] == {"type": "none"}
    assert "last model request" in str(last["messages"][-1]["content"][-1])
    assert "tool_choice" not in fake_api.requests[1].body
