"""Web search and web fetch through the API's server tools, end to end on both model paths (issue 26).

The agent runs on real model ids against the strict fake: it refuses a tool version the model lacks,
a `max_uses` below 1, both domain lists, a paused reply sent back as anything but a continuation, and
a scripted reply that searches past the request's `max_uses` (so the budget is checked honestly).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies, web_replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import chunks, turn_record

SONNET = "claude-sonnet-5-5"
HAIKU = "claude-haiku-4-5"
DOCS = [("ACP schema", "https://agentclientprotocol.com/schema"), ("ACP repo", "https://github.com/acp/acp")]


@pytest.fixture
def sonnet_env(agent_env: dict[str, str]) -> dict[str, str]:
    return {**agent_env, "ACP_AGENT_MODEL": SONNET}


def server_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The server tools of a request, without their cache markers."""
    return [
        {k: v for k, v in t.items() if k != "cache_control"} for t in body.get("tools", []) if "type" in t
    ]


def search_uses(body: dict[str, Any]) -> int | None:
    found = [t for t in server_tools(body) if t["name"] == "web_search"]
    return found[0].get("max_uses") if found else None


def priced(usage: dict[str, Any]) -> float:
    """Sonnet 5.5's tokens ($2 in, $10 out, $0.10 read, $2.50 write per million)."""
    return (
        usage["input_tokens"] * 2
        + usage["output_tokens"] * 10
        + usage["cache_read_input_tokens"] * 0.10
        + usage["cache_creation_input_tokens"] * 2.50
    ) / 1_000_000


async def test_the_newest_versions_go_to_sonnet_55_with_the_search_budget_as_max_uses(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        web_replies.searched(web_replies.web_search("acp schema", DOCS), text="Found the schema."),
        replies.text("Nothing else."),
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "Where is the ACP schema?")
        second = await agent.prompt(session, "Anything else?")
    assert first["result"]["stopReason"] == "end_turn", first
    assert server_tools(fake_api.requests[0].body) == [
        {"type": "web_search_20260318", "name": "web_search", "max_uses": 8},
        {"type": "web_fetch_20260318", "name": "web_fetch"},
    ]
    record = turn_record(first)
    assert record["webSearches"] == 1 and record["webFetches"] == 0
    served = fake_api.served[0].usage
    assert served is not None and served["server_tool_use"]["web_search_requests"] == 1
    assert record["costUsd"] == pytest.approx(priced(served) + 0.01, abs=1e-6)  # $10 per 1,000
    assert turn_record(second)["webSearches"] == 0
    # The search and its results stay in the history, in place, and go back as they came.
    replied = fake_api.requests[1].body["messages"][1]["content"]
    kinds = [b["type"] for b in replied]
    assert kinds[:2] == ["server_tool_use", "web_search_tool_result"], kinds
    assert replied[1]["content"][0]["url"] == DOCS[0][1]
    assert not any(
        b.get("type") == "tool_result" for m in fake_api.requests[1].body["messages"] for b in m["content"]
    )


async def test_max_web_searches_1_sends_max_uses_1_and_then_no_search_tool(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        web_replies.searched(
            replies.thinking_block("Search, then look.", "unsigned"),
            web_replies.web_search("one", DOCS),
            replies.tool_use_block("list_files", {}),
            stop_reason="tool_use",
        ),
        replies.text("Done with one search."),
        replies.text("Next turn."),
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, {"acp-agent": {"maxWebSearches": 1}})
        first = await agent.prompt(session, "Search once, then list the files.")
        second = await agent.prompt(session, "And now?")
    assert first["result"]["stopReason"] == "end_turn", first
    assert second["result"]["stopReason"] == "end_turn", second
    assert [search_uses(r.body) for r in fake_api.requests] == [1, None, 1]
    assert [t["name"] for t in server_tools(fake_api.requests[1].body)] == ["web_fetch"]
    # The tools changed: the thinking signed to the old ones went first (a 5.5 model refuses it).
    sent = fake_api.requests[1].body["messages"]
    assert not any(b["type"] == "thinking" for m in sent for b in m["content"])
    assert any(b["type"] == "web_search_tool_result" for m in sent for b in m["content"])
    assert turn_record(first)["webSearches"] == 1
    assert turn_record(first)["limits"]["maxWebSearches"] == 1


async def test_web_off_sends_no_server_tool(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("no web"), replies.text("no web either"))
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET, "ACP_AGENT_WEB": "off"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        by_flag = await agent.new_session(workspace)
        await agent.prompt(by_flag, "hi")
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        by_meta = await agent.new_session(workspace, {"acp-agent": {"web": False}})
        await agent.prompt(by_meta, "hi")
        await agent.prompt(by_meta, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, by_meta))
        with_web = await agent.new_session(workspace)
        await agent.prompt(with_web, "/status")
        status_on = "".join(c["content"]["text"] for c in chunks(agent, with_web))
    assert "Web tools: off" in status
    assert "Web tools: web_search_20260318, web_fetch_20260318" in status_on
    assert len(fake_api.requests) == 2
    for request in fake_api.requests:
        assert server_tools(request.body) == [], request.body["tools"]
        assert "web_search" not in json.dumps(request.body["tools"])


async def test_haiku_45_gets_the_basic_versions_and_a_test_model_none(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        web_replies.searched(web_replies.web_search("q", DOCS), text="basic works"),
        replies.text("unknown model"),
    )
    for model in (HAIKU, "claude-test-1"):
        async with AgentProcess.start(
            env={**agent_env, "ACP_AGENT_MODEL": model}, schema=acp_schema
        ) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            response = await agent.prompt(session, "search")
            assert response["result"]["stopReason"] == "end_turn", response  # the fake's 400 would fail it
    assert server_tools(fake_api.requests[0].body) == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 8},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    assert server_tools(fake_api.requests[1].body) == []


async def test_the_tools_are_byte_identical_across_a_turn_without_searches(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("list_files", {}),
        replies.tool_use("read_file", {"path": "notes.txt"}),
        replies.text("done"),
        web_replies.searched(
            web_replies.web_search("q", DOCS), web_replies.web_search("r", DOCS), text="two"
        ),
        replies.text("after two searches"),
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "look around")
        await agent.prompt(session, "search twice")
        await agent.prompt(session, "and then")
    tools = [json.dumps(r.body["tools"], sort_keys=True) for r in fake_api.requests]
    assert len(set(tools)) == 1  # two searches leave 8 of 10: max_uses stays 8, the prefix is kept
    later = fake_api.served[-1].usage
    assert later is not None and later["cache_read_input_tokens"] > 0


async def test_a_pause_turn_mid_search_continues_and_counts(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    paused, its_result = web_replies.web_search("long research", DOCS)
    fake_api.script(
        web_replies.searched(web_replies.web_search("first", DOCS), stop_reason="pause_turn"),
        web_replies.searched(paused, stop_reason="pause_turn"),  # the API paused before running it
        web_replies.searched(its_result, text="Both searched."),  # and ran it once continued
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "Research it")
    assert response["result"]["stopReason"] == "end_turn", response
    record = turn_record(response)
    assert record["modelRequests"] == 3 and record["continuations"] == 2
    assert record["webSearches"] == 2
    continued = fake_api.requests[2].body["messages"]
    assert continued[-1]["role"] == "assistant"  # the paused reply goes back as it came, last
    assert [b["type"] for b in continued[-1]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
    ]
    assert [search_uses(r.body) for r in fake_api.requests] == [8, 8, 8]  # 1 used: 9 left, still 8


async def test_domain_rules_pass_through_and_both_at_once_is_refused(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("ok"))
    env = {**sonnet_env, "ACP_AGENT_WEB_BLOCKED_DOMAINS": "ads.example.com"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(
            workspace, {"acp-agent": {"webAllowedDomains": ["docs.python.org"]}}
        )
        await agent.prompt(session, "hi")
        both = await agent.request(
            "session/new",
            {
                "cwd": str(workspace),
                "mcpServers": [],
                "_meta": {
                    "acp-agent": {"webAllowedDomains": ["a.example"], "webBlockedDomains": ["b.example"]}
                },
            },
        )
        scheme = await agent.request(
            "session/new",
            {
                "cwd": str(workspace),
                "mcpServers": [],
                "_meta": {"acp-agent": {"webBlockedDomains": ["https://x.io"]}},
            },
        )
    for tool in server_tools(fake_api.requests[0].body):
        assert tool["allowed_domains"] == ["docs.python.org"] and "blocked_domains" not in tool
    assert (
        both["error"]["code"] == -32602
        and "webAllowedDomains and webBlockedDomains" in both["error"]["message"]
    )
    assert scheme["error"]["code"] == -32602 and "webBlockedDomains" in scheme["error"]["message"]


async def test_a_clients_tool_set_names_the_web_tools_claude_codes_way(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("only search"), replies.text("no web"))
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        search_only = await agent.new_session(
            workspace, {"claudeCode": {"options": {"allowedTools": ["Read", "WebSearch"]}}}
        )
        await agent.prompt(search_only, "hi")
        no_web = await agent.new_session(workspace, {"claudeCode": {"options": {"allowedTools": ["Read"]}}})
        await agent.prompt(no_web, "hi")
    assert [t["name"] for t in server_tools(fake_api.requests[0].body)] == ["web_search"]
    assert server_tools(fake_api.requests[1].body) == []


async def test_the_web_switch_is_a_boolean_option_for_clients_that_take_one_and_load_keeps_it(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("with web"), replies.text("without web"), replies.text("still without"))
    booleans = {"configOptions": {"boolean": {}}}
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize(session=booleans)
        created = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = created["result"]["sessionId"]
        web = next(o for o in created["result"]["configOptions"] if o["id"] == "web")
        assert web["type"] == "boolean" and web["currentValue"] is True
        await agent.prompt(session, "one")
        changed = await agent.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "web", "type": "boolean", "value": False},
        )
        assert (
            next(o for o in changed["result"]["configOptions"] if o["id"] == "web")["currentValue"] is False
        )
        wrong = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "web", "value": "off"}
        )
        assert wrong["error"]["code"] == -32602
        await agent.prompt(session, "two")
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize(session=booleans)
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert next(o for o in loaded["result"]["configOptions"] if o["id"] == "web")["currentValue"] is False
        await agent.prompt(session, "three")
    assert [len(server_tools(r.body)) for r in fake_api.requests] == [2, 0, 0]


async def test_no_web_option_without_boolean_options(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("web stays on"))
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        created = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = created["result"]["sessionId"]
        assert "web" not in [o["id"] for o in created["result"]["configOptions"]]
        refused = await agent.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "web", "type": "boolean", "value": False},
        )
        await agent.prompt(session, "hi")
    assert refused["error"]["code"] == -32602
    assert len(server_tools(fake_api.requests[0].body)) == 2
