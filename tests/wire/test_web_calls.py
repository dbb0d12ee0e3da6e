"""What the editor sees of a web search or fetch, live and after session/load (issue 26, item 2).

The API runs these calls; the agent shows each as an ACP tool call (kind `search` / `fetch`, titled
with the query or the URL, its results as text and `resource_link`s) from the reply's own blocks,
so the replay of the journaled reply shows the same call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies, web_replies
from tests.support.agent import AgentProcess
from tests.wire.conftest import turn_record

SONNET = "claude-sonnet-5-5"
DOCS = [("ACP schema", "https://agentclientprotocol.com/schema"), ("ACP repo", "https://github.com/acp/acp")]
PAGE = "https://agentclientprotocol.com/protocol/tool-calls"


@pytest.fixture
def sonnet_env(agent_env: dict[str, str]) -> dict[str, str]:
    return {**agent_env, "ACP_AGENT_MODEL": SONNET}


def tool_updates(updates: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    calls: dict[str, list[dict[str, Any]]] = {}
    for update in updates:
        if update["sessionUpdate"] in {"tool_call", "tool_call_update"}:
            calls.setdefault(update["toolCallId"], []).append(update)
    return calls


def links(update: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (c["content"]["uri"], c["content"]["name"])
        for c in update.get("content", [])
        if c["type"] == "content" and c["content"]["type"] == "resource_link"
    ]


def text_of(update: dict[str, Any]) -> str:
    return "".join(
        c["content"]["text"]
        for c in update.get("content", [])
        if c["type"] == "content" and c["content"]["type"] == "text"
    )


async def live_and_replayed(
    env: dict[str, str], schema: Any, workspace: Path, *prompts: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run `prompts` in one session, then load it in a new agent: (responses, live, replayed)."""
    async with AgentProcess.start(env=env, schema=schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        responses = [await agent.prompt(session, text) for text in prompts]
        live = [p["update"] for p in agent.updates(session)]
    async with AgentProcess.start(env=env, schema=schema) as agent:
        await agent.initialize()
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = [p["update"] for p in agent.updates(session)]
    return responses, live, replayed


def same_calls(live: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every call is announced and finished on load as it was live; returns the live calls."""
    shown, again = tool_updates(live), tool_updates(replayed)
    assert list(again) == list(shown)
    for call_id, updates in shown.items():
        assert again[call_id][0] == updates[0], call_id  # title, kind, rawInput, pending
        assert updates[1] == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "in_progress",
        }
        for key in ("status", "content", "rawOutput"):
            assert again[call_id][-1].get(key) == updates[-1].get(key), (call_id, key)
    return shown


async def test_a_web_search_round_trips_to_the_editor_and_session_load_replays_it(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    search = web_replies.web_search("acp schema", DOCS, id="srvtoolu_s1")
    fake_api.script(
        web_replies.searched(replies.text_block("Let me look that up."), search, text="It is on the site.")
    )
    responses, live, replayed = await live_and_replayed(sonnet_env, acp_schema, workspace, "Where is it?")
    assert responses[0]["result"]["stopReason"] == "end_turn", responses[0]
    calls = same_calls(live, replayed)
    start, final = calls["srvtoolu_s1"][0], calls["srvtoolu_s1"][-1]
    assert start["kind"] == "search" and start["title"] == "Search the web for 'acp schema'"
    assert start["rawInput"] == {"query": "acp schema"} and start["status"] == "pending"
    assert final["status"] == "completed"
    assert links(final) == [(url, title) for title, url in DOCS]
    assert "2 results" in text_of(final) and DOCS[1][1] in text_of(final)
    # Shown where it happened: after the text before it, before the text after it.
    kinds = {"agent_message_chunk", "tool_call", "tool_call_update"}
    order = [u["sessionUpdate"] for u in live if u["sessionUpdate"] in kinds]
    assert order == [
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "agent_message_chunk",
    ]
    record = turn_record(responses[0])
    assert record["webSearches"] == 1 and record["costUsd"] > 0.01  # the search is in the cost


async def test_a_web_fetch_round_trips_and_replays(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fetch = web_replies.web_fetch(PAGE, "Tool calls report progress.", title="Tool Calls", id="srvtoolu_f1")
    fake_api.script(web_replies.searched(fetch, text="Read it."))
    responses, live, replayed = await live_and_replayed(sonnet_env, acp_schema, workspace, f"Read {PAGE}")
    calls = same_calls(live, replayed)
    start, final = calls["srvtoolu_f1"][0], calls["srvtoolu_f1"][-1]
    assert start["kind"] == "fetch" and start["title"] == f"Fetch {PAGE}"
    assert final["status"] == "completed" and links(final) == [(PAGE, "Tool Calls")]
    assert text_of(final) == f"Fetched {PAGE}: Tool Calls (27 characters)"
    record = turn_record(responses[0])
    assert record["webFetches"] == 1 and record["webSearches"] == 0


async def test_a_search_of_3000_results_is_one_small_update_with_a_note(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    long_url = "https://example.com/" + "u" * 10_000
    results = [("a title " + "t" * 300, long_url)] + [
        (f"result {n}", f"https://example.com/{n}") for n in range(2_999)
    ]
    search = web_replies.web_search("everything", results, id="srvtoolu_big")
    fake_api.script(web_replies.searched(search, text="Too many."), replies.text("ok"))
    responses, live, replayed = await live_and_replayed(
        sonnet_env, acp_schema, workspace, "Find all.", "And?"
    )
    assert responses[0]["result"]["stopReason"] == "end_turn", responses[0]
    final = same_calls(live, replayed)["srvtoolu_big"][-1]
    assert len(json.dumps(final)) < 16_000, len(json.dumps(final))  # was 3,000 links
    assert links(final) == [(f"https://example.com/{n}", f"result {n}") for n in range(20)]
    assert text_of(final).startswith("3,000 results:") and "… and 2,980 more" in text_of(final)
    assert long_url not in json.dumps(final)
    # Only what the editor is shown is capped: the model's history keeps every result.
    sent = fake_api.requests[1].body["messages"][1]["content"]
    assert len(next(b for b in sent if b["type"] == "web_search_tool_result")["content"]) == 3_000


async def test_error_results_are_failed_calls_live_and_on_load(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        web_replies.searched(
            web_replies.web_search("down", error="unavailable", id="srvtoolu_e1"),
            web_replies.web_fetch("https://private.example/x", error="url_not_accessible", id="srvtoolu_e2"),
            text="Neither worked.",
        )
    )
    _, live, replayed = await live_and_replayed(sonnet_env, acp_schema, workspace, "try")
    calls = same_calls(live, replayed)
    assert calls["srvtoolu_e1"][-1]["status"] == "failed"
    assert text_of(calls["srvtoolu_e1"][-1]) == "Web search failed: unavailable"
    assert calls["srvtoolu_e2"][-1]["status"] == "failed"
    assert text_of(calls["srvtoolu_e2"][-1]) == "Web fetch failed: url_not_accessible"


async def test_a_paused_search_is_one_call_finished_by_the_continuation(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    paused, result = web_replies.web_search("long", DOCS[:1], id="srvtoolu_p1")
    fake_api.script(
        web_replies.searched(paused, stop_reason="pause_turn"),
        web_replies.searched(result, text="Done."),
    )
    responses, live, replayed = await live_and_replayed(sonnet_env, acp_schema, workspace, "research")
    assert turn_record(responses[0])["continuations"] == 1
    calls = same_calls(live, replayed)
    assert list(calls) == ["srvtoolu_p1"] and calls["srvtoolu_p1"][-1]["status"] == "completed"


async def test_a_call_the_turn_never_saw_finish_is_failed_live_and_on_load(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    paused = web_replies.server_tool_use("web_search", {"query": "slow"}, id="srvtoolu_x1")
    fake_api.script(web_replies.searched(paused, stop_reason="pause_turn"), replies.text("next turn"))
    env = {**sonnet_env, "ACP_AGENT_MAX_TURN_REQUESTS": "1"}
    responses, live, replayed = await live_and_replayed(env, acp_schema, workspace, "research", "again")
    assert turn_record(responses[0])["limit"] == "maxTurnRequests"
    calls = same_calls(live, replayed)
    assert calls["srvtoolu_x1"][-1]["status"] == "failed"
    assert "not executed" in text_of(calls["srvtoolu_x1"][-1])


async def test_plan_mode_allows_the_web_tools(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        web_replies.searched(web_replies.web_search("docs", DOCS, id="srvtoolu_plan"), text="Planned.")
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        response = await agent.prompt(session, "plan it, look things up")
        calls = tool_updates([p["update"] for p in agent.updates(session)])
    assert response["result"]["stopReason"] == "end_turn"
    assert [t["name"] for t in fake_api.requests[0].body["tools"] if "type" in t] == [
        "web_search",
        "web_fetch",
    ]
    assert calls["srvtoolu_plan"][-1]["status"] == "completed"
