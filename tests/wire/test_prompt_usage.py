"""`PromptResponse.usage` (ACP's unstable `Usage`): every prompt answer carries the turn's tokens,
the same figures as its turn record, checked against the unstable schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import turn_record


def cached(read: int, write: int) -> dict[str, int]:
    return {"cache_read_input_tokens": read, "cache_creation_input_tokens": write}


async def test_a_turn_of_two_requests_answers_with_its_summed_usage(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("read_file", {"path": "notes.txt"}, usage=(120, 30), reported_usage=cached(900, 40)),
        replies.text("done", usage=(15, 8), reported_usage=cached(1000, 0)),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "read the notes")
        # Validated against the unstable PromptResponse (`usage` included) as it was read.
        assert acp_unstable_schema.validate("PromptResponse", response["result"]) == []
    usage, record = response["result"]["usage"], turn_record(response)
    assert usage == {
        "inputTokens": 135,
        "outputTokens": 38,
        "cachedReadTokens": 1900,
        "cachedWriteTokens": 40,
        "totalTokens": 135 + 38 + 1900 + 40,
    }
    # One source: the record's figures, named as ACP names them.
    assert (usage["inputTokens"], usage["outputTokens"]) == (record["inputTokens"], record["outputTokens"])
    assert usage["cachedReadTokens"] == record["cacheReadInputTokens"]
    assert usage["cachedWriteTokens"] == record["cacheCreationInputTokens"]


async def test_a_prompt_answered_without_a_request_says_it_used_no_tokens(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("hello", usage=(11, 3)))
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "hi")
        status = await agent.prompt(session, "/status")  # a command: no request
        empty = await agent.prompt(session, [])  # an empty prompt: no request
    assert first["result"]["usage"]["totalTokens"] == 14
    for response in (status, empty):
        assert response["result"]["usage"] == {
            "inputTokens": 0,
            "outputTokens": 0,
            "cachedReadTokens": 0,
            "cachedWriteTokens": 0,
            "totalTokens": 0,
        }, response
