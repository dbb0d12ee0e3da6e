"""Prompt caching on the wire: breakpoints on every request, the switch to turn it off, and why a
cache missed, on a fake that bills the markers it receives as the API does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.wire.conftest import turn_record

SONNET = "claude-sonnet-5-5"


def loop_replies() -> list[replies.Message]:
    return [
        replies.tool_use("list_files", {}),
        replies.tool_use("read_file", {"path": "notes.txt"}),
        replies.text("done"),
    ]


async def test_every_request_carries_at_most_four_breakpoints_on_the_sessions_prefix(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(*loop_replies(), replies.text("again"))
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "look")
        response = await agent.prompt(session, "once more")
    assert [r.breakpoints() for r in fake_api.requests] == [3, 4, 4, 4]
    first, *rest = (r.body for r in fake_api.requests)
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    for body in rest:  # the fixed prefix is byte-stable within the session
        assert body["tools"] == first["tools"] and body["system"] == first["system"]
    # The first request of the next prompt reads nearly all of its input from the cache.
    usage = fake_api.served[3].usage
    assert usage is not None
    prompt = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    assert usage["cache_read_input_tokens"] / prompt >= 0.9
    assert turn_record(response)["cacheReadInputTokens"] == usage["cache_read_input_tokens"]


async def test_prompt_cache_off_sends_no_cache_control_anywhere(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(*loop_replies())
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET, "ACP_AGENT_PROMPT_CACHE": "off"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "look")
    assert response["result"]["stopReason"] == "end_turn"
    assert fake_api.attempts == 3
    for request in fake_api.requests:
        assert "cache_control" not in json.dumps(request.body)
        assert "diagnostics" not in request.body
    assert turn_record(response)["cacheReadInputTokens"] == 0


async def test_a_cache_miss_reason_is_logged_with_the_request_number(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("opus here"), replies.text("sonnet here"))
    async with AgentProcess.start(
        env={**agent_env, "ACP_AGENT_MODEL": "claude-opus-5-5"}, schema=acp_schema
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "hello")
        await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "model", "value": SONNET}
        )
        await agent.prompt(session, "hello again")
        stderr = agent.stderr_text()
    first, second = (r.body for r in fake_api.requests)
    assert first["diagnostics"] == {"previous_message_id": None}
    assert second["diagnostics"] == {"previous_message_id": fake_api.served[0].message_id}
    events = [json.loads(line) for line in stderr.splitlines() if '"model.cache_miss"' in line]
    assert [(e["reason"], e["request"]) for e in events] == [("model_changed", 1)]


async def test_a_gateway_that_refuses_diagnostics_gets_none_after_the_first_400(
    tmp_path: Path, acp_schema: Any, workspace: Path, streaming: bool
) -> None:
    with FakeMessagesAPI(reject_diagnostics=True) as api:
        api.script(*loop_replies())
        env = base_env(
            tmp_path,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=api.base_url,
            ACP_AGENT_MODEL=SONNET,
            ACP_AGENT_STREAMING="1" if streaming else "0",
            ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        )
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            response = await agent.prompt(session, "look")
            stderr = agent.stderr_text()
            thoughts = [
                p["update"] for p in agent.updates(session) if "thought" in p["update"]["sessionUpdate"]
            ]
    assert response["result"]["stopReason"] == "end_turn"
    record = turn_record(response)
    # The re-send is a retry (issue 35: it was on no record), told to nobody: the API is not busy.
    assert (record["modelRequests"], record["retries"]) == (3, 1)
    assert record["modelRequests"] + record["retries"] == len(api.requests)
    assert not any("retrying" in str(t) for t in thoughts)
    assert ["diagnostics" in r.body for r in api.requests] == [True, False, False, False]
    assert stderr.count('"model.diagnostics_refused"') == 1
