"""Every request that reaches the API is on the turn's record (issue 35, item 9): a request the
agent sends again after mending what the API refused (a field, an image, a prompt too long) is a
retry of that request, not a new one (decisions D1, turn-semantics C2.3), and a retry of any request
of the turn (a compaction's too) is counted. What the fake received is modelRequests + retries.
(The re-send without `diagnostics`: `test_prompt_caching.py`; a refused image: `test_image_budget.py`.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import turn_record

TOO_LONG = "prompt is too long: 212345 tokens > 200000 maximum"


async def third_turn(
    env: dict[str, str], schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> tuple[dict[str, Any], int]:
    """Three prompts in one session (compaction keeps the last two turns: the third can compact
    the first); the third's response and how many attempts the fake received during it."""
    async with AgentProcess.start(env=env, schema=schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "first prompt")
        await agent.prompt(session, "second prompt")
        before = len(fake_api.requests)
        response = await agent.prompt(session, "third prompt")
    return response, len(fake_api.requests) - before


def on_record(response: dict[str, Any], attempts: int) -> dict[str, Any]:
    """The turn's record, once it says what the API received."""
    record = turn_record(response)
    assert record["modelRequests"] + record["retries"] == attempts, (attempts, record)
    return record


async def test_a_retried_compaction_request_is_on_the_record(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.text("first answer", usage=(100, 10)),
        replies.text("second answer", usage=(200, 10)),
        replies.tool_use("list_files", {}, usage=(900, 50)),  # 950 >= 0.8 * 1000: compact next
        replies.error(529, "overloaded_error", "Overloaded"),  # the compaction's first attempt
        replies.text("SUMMARY", usage=(300, 20)),
        replies.text("third answer", usage=(400, 10)),
    )
    response, attempts = await third_turn(
        {**agent_env, "ACP_AGENT_CONTEXT_WINDOW": "1000"}, acp_schema, workspace, fake_api
    )
    assert response["result"]["stopReason"] == "end_turn", response
    record = on_record(response, attempts)
    assert (record["modelRequests"], record["retries"]) == (3, 1)  # tool_use, summary, answer
    assert "SUMMARY" in str(fake_api.requests[-1].body["messages"][0])


async def test_a_prompt_too_long_is_compacted_and_sent_again_as_a_retry(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.text("first answer"),
        replies.text("second answer"),
        replies.error(400, "invalid_request_error", TOO_LONG),
        replies.text("SUMMARY OF THE FIRST TURN"),  # the compaction: a request of its own
        replies.text("third answer"),  # the refused request, sent again: a retry of it
    )
    response, attempts = await third_turn(agent_env, acp_schema, workspace, fake_api)
    assert response["result"]["stopReason"] == "end_turn", response
    record = on_record(response, attempts)
    assert (record["modelRequests"], record["retries"]) == (2, 1)  # the refused one, the summary
    resent = fake_api.requests[-1].body["messages"]
    assert "SUMMARY OF THE FIRST TURN" in str(resent[0]) and "third prompt" in str(resent)
