"""Usage figures from the API are counts it could have sent (issue 35, item 8): a negative count, a
count past its bound, or more searches than the request's `max_uses` make the reply malformed, on
both paths; none of it reaches the turn's record, its cost or its search budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.model.stream_events import MAX_USAGE_TOKENS
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
    "9 searches under max_uses 8": replies.text(
        "x", reported_usage={"server_tool_use": {"web_search_requests": 9, "web_fetch_requests": 0}}
    ),
    "fetches -1": replies.text(
        "x", reported_usage={"server_tool_use": {"web_search_requests": 0, "web_fetch_requests": -1}}
    ),
    "output tokens past the bound": replies.text("x", reported_usage={"output_tokens": MAX_USAGE_TOKENS + 1}),
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
            assert record["inputTokens"] >= 0 and record["outputTokens"] < MAX_USAGE_TOKENS, (case, record)
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
