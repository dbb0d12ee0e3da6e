"""Usage figures from the API are counts (issue 35, item 8): a negative count or one that is not a
whole number makes the reply malformed, on both paths, and none of it reaches the turn's record, its
cost or its search budget. A whole count >= 0 is what the API bills, however large (issue 42, item
10): more searches than the request's `max_uses` keep the reply, are counted as reported, and spend
the turn's search budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.model.pricing import WEB_SEARCH_USD
from acp_agent.model.stream_events import MAX_EXACT_COUNT
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import chunks, turn_record

SONNET = "claude-sonnet-5-5"

MALFORMED = {
    # The adversarial run's case: the next request offered 512 searches under maxWebSearches 10.
    "searches -1000": replies.tool_use(
        "list_files", {}, reported_usage={"server_tool_use": {"web_search_requests": -1000}}
    ),
    "input tokens -1,000,000 (a negative cost)": replies.text(
        "x", reported_usage={"input_tokens": -1_000_000}
    ),
    "cache reads -5": replies.text("x", reported_usage={"cache_read_input_tokens": -5}),
    "fetches -1": replies.text(
        "x", reported_usage={"server_tool_use": {"web_search_requests": 0, "web_fetch_requests": -1}}
    ),
    "output tokens past what JSON carries exactly": replies.text(
        "x", reported_usage={"output_tokens": MAX_EXACT_COUNT + 1}
    ),
    "searches 2.5": replies.text("x", reported_usage={"server_tool_use": {"web_search_requests": 2.5}}),
    "input tokens as text": replies.text("x", reported_usage={"input_tokens": "many"}),
}


async def test_usage_figures_the_api_cannot_send_make_the_reply_malformed(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    fake_api.set_fallback(replies.error(400, "invalid_request_error", "fake: no second request was scripted"))
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        for case, reply in MALFORMED.items():
            before = len(fake_api.requests)
            fake_api.script(reply)
            response = await agent.prompt(session, f"case {case}")
            assert "error" in response, (case, response)
            error = response["error"]
            assert error["code"] == -32603 and "malformed" in error["message"], (case, error)
            assert error["data"]["acp-agent"]["kind"] == "stream_broken", (case, error)
            record = error["data"]["acp-agent"]["turn"]
            assert len(fake_api.requests) - before == 1 == record["modelRequests"], (case, record)
            assert record["webSearches"] == 0 and record["webFetches"] == 0, (case, record)
            assert record["inputTokens"] >= 0 and record["outputTokens"] <= MAX_EXACT_COUNT, (case, record)
            assert record["costUsd"] is None or 0 <= record["costUsd"] < 1, (case, record)
        if not streaming:  # checked before any of the reply is relayed (a stream's last figures
            assert chunks(agent, session) == []  # come after its text, as a broken stream's do)
        fake_api.script(replies.text("fine again"))
        response = await agent.prompt(session, "and now?")
    assert response["result"]["stopReason"] == "end_turn", response
    assert turn_record(response)["webSearches"] == 0
    searches = [t for t in fake_api.requests[-1].body["tools"] if t.get("name") == "web_search"]
    assert [t["max_uses"] for t in searches] == [8]  # maxWebSearches 10, none used


@pytest.mark.parametrize("count", [0, 8])
async def test_searches_within_max_uses_are_taken(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, count: int
) -> None:
    fake_api.script(
        replies.text(
            "x", reported_usage={"server_tool_use": {"web_search_requests": count, "web_fetch_requests": 3}}
        )
    )
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "search")
    assert response["result"]["stopReason"] == "end_turn", response
    record = turn_record(response)
    assert (record["webSearches"], record["webFetches"]) == (count, 3)


async def test_a_reply_reporting_more_searches_than_allowed_is_kept_counted_and_spends_the_budget(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    """Replayed real exchanges reported 10 searches to a request that allowed fewer: the reply (paid
    for) was thrown away as malformed. Now its text and tool call are kept, the 12 searches are the
    turn's (and its cost), and the next request of the turn offers no search tool: the budget of 10
    is spent."""
    searched = {"server_tool_use": {"web_search_requests": 12, "web_fetch_requests": 1}}
    fake_api.script(
        replies.message(
            [replies.text_block("PAID-FOR TEXT"), replies.tool_use_block("list_files", {}, id="toolu_l")],
            stop_reason="tool_use",
            reported_usage=searched,
        ),
        replies.text("done, without searching"),
        # A session whose budget is 0 offers no search tool; the reply reports 3 all the same.
        replies.text("three more", reported_usage={"server_tool_use": {"web_search_requests": 3}}),
    )
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "search a lot")
        text = "".join(c["content"]["text"] for c in chunks(agent, session))
        no_budget = await agent.new_session(workspace, {"acp-agent": {"maxWebSearches": 0}})
        none_left = await agent.prompt(no_budget, "no searches here")
        stderr = agent.stderr_text()
    assert response["result"]["stopReason"] == "end_turn", response
    assert "PAID-FOR TEXT" in text and "done, without searching" in text
    record = turn_record(response)
    assert (record["webSearches"], record["webFetches"], record["modelRequests"]) == (12, 1, 2)
    assert record["toolCalls"] == 1 and record["costUsd"] >= 12 * WEB_SEARCH_USD
    first, second = fake_api.requests[0].body, fake_api.requests[1].body
    assert [t["max_uses"] for t in first["tools"] if t.get("name") == "web_search"] == [8]
    assert [t for t in second["tools"] if t.get("name") == "web_search"] == []  # 12 of 10: none left
    assert any(t.get("name") == "web_fetch" for t in second["tools"])  # fetch stays
    assert second["messages"][1]["content"][0] == {"type": "text", "text": "PAID-FOR TEXT"}
    assert none_left["result"]["stopReason"] == "end_turn", none_left
    assert turn_record(none_left)["webSearches"] == 3
    assert [t for t in fake_api.requests[2].body["tools"] if t.get("name") == "web_search"] == []
    assert '"model.searches_past_max_uses"' in stderr and '"reported": 12' in stderr
