"""Notices and compactions, gated on the client (issue 24 item 4): a client that advertises
`session.notices` / `session.compaction` gets ACP `notice` and `compaction_*` updates; any other
client (Zed 1.16 advertises neither) gets exactly what it always got: the limit as a message, the
retry and the compaction as thoughts. Both ways, over real pipes, on both model paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.zed import ZED_CAPABILITIES, zed_initialize

SHOWS = {**ZED_CAPABILITIES["session"], "notices": {}, "compaction": {}}
"""Zed's `session` capabilities, plus notices and compactions."""
SHOWN = pytest.mark.parametrize("shows", [True, False], ids=["shown", "not-shown"])


def kinds_of(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def text_of(updates: list[dict[str, Any]], kind: str) -> str:
    return "".join(u["content"]["text"] for u in kinds_of(updates, kind))


async def load(agent: AgentProcess, session: str, workspace: Path) -> list[dict[str, Any]]:
    """session/load in the same process; the updates it replayed."""
    start = len(agent.messages)
    answer = await agent.request(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert "result" in answer, answer
    end = agent.messages.index(answer)
    return [m["params"]["update"] for m in agent.messages[start:end] if m.get("method") == "session/update"]


@SHOWN
async def test_a_retry_and_a_limit_are_notices_only_for_a_client_that_shows_them(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, shows: bool
) -> None:
    fake_api.script(
        replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=50),
        replies.tool_use("list_files", {}),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent, **({"session": SHOWS} if shows else {}))
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 1}})
        response = await agent.prompt(session, "list the files")
        live = [p["update"] for p in agent.updates(session)]
        replayed = await load(agent, session, workspace)
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert fake_api.attempts == 2  # the 529, then the one request allowed
    notices = kinds_of(live, "notice")
    if shows:
        retry, limit = notices
        assert retry["severity"] == "warning" and retry["title"].startswith("The API is busy; retrying in")
        assert "529" in retry["description"]
        assert limit == {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "This turn stopped at its limit of 1 model requests (maxTurnRequests)",
            "description": limit["description"],
        }
        assert limit["description"].startswith("Send another prompt to continue")
        assert "[acp-agent]" not in text_of(live, "agent_message_chunk")
        assert "The API is busy" not in text_of(live, "agent_thought_chunk")
        # A notice is a live event, not history: a load does not show it again.
        assert "stopped at its limit" not in text_of(replayed, "agent_message_chunk")
        assert not kinds_of(replayed, "notice")
    else:
        assert not notices
        message = text_of(live, "agent_message_chunk")
        assert "[acp-agent] This turn stopped at its limit of 1 model requests (maxTurnRequests)." in message
        assert "The API is busy (" in text_of(live, "agent_thought_chunk")
        assert "stopped at its limit" in text_of(replayed, "agent_message_chunk")  # replayed, as always


@SHOWN
async def test_a_compaction_is_shown_as_compaction_updates_only_to_a_client_that_shows_them(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, shows: bool
) -> None:
    env = {**agent_env, "ACP_AGENT_CONTEXT_WINDOW": "1000"}
    fake_api.script(
        replies.text("first answer", usage=(100, 10)),
        replies.text("second answer", usage=(200, 10)),
        replies.text("third answer", usage=(900, 50)),  # 950 >= 0.8 * 1000: compact before the next
        replies.text("SUMMARY OF THE EARLY TURNS", chunks=3, usage=(300, 20)),
        replies.text("fourth answer", usage=(400, 10)),
    )
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await zed_initialize(agent, **({"session": SHOWS} if shows else {}))
        session = await agent.new_session(workspace)
        for text in ("first prompt", "second prompt", "third prompt", "fourth prompt"):
            response = await agent.prompt(session, text)
            assert response["result"]["stopReason"] == "end_turn"
        live = [p["update"] for p in agent.updates(session)]
        replayed = await load(agent, session, workspace)
    assert "SUMMARY OF THE EARLY TURNS" in str(fake_api.requests[4].plain_body["messages"][0])
    updates = kinds_of(live, "compaction_update")
    if shows:
        started, ended = updates
        assert started["status"] == "in_progress" and ended["status"] == "completed"
        compaction_id = started["compactionId"]
        assert ended["compactionId"] == compaction_id
        pieces = kinds_of(live, "compaction_summary_chunk")
        assert {c["compactionId"] for c in pieces} == {compaction_id}
        assert "".join(c["content"]["text"] for c in pieces) == "SUMMARY OF THE EARLY TURNS"
        # In its place in the timeline: after the third answer, before the fourth.
        order = [u["sessionUpdate"] for u in live]
        assert order.index("compaction_update") > live.index(kinds_of(live, "agent_message_chunk")[2])
        assert "summarised" not in text_of(live, "agent_thought_chunk")
        # Part of the replay: the completed compaction with its summary, where it happened.
        [again] = kinds_of(replayed, "compaction_update")
        assert again == {
            "sessionUpdate": "compaction_update",
            "compactionId": compaction_id,
            "status": "completed",
            "summary": [{"type": "text", "text": "SUMMARY OF THE EARLY TURNS"}],
        }
        messages = [u for u in replayed if u["sessionUpdate"] in ("agent_message_chunk", "compaction_update")]
        assert [u.get("content", {}).get("text") for u in messages] == [
            "first answer",
            "second answer",
            "third answer",
            None,
            "fourth answer",
        ]
    else:
        assert not updates and not kinds_of(live, "compaction_summary_chunk")
        assert "Context is getting full: summarised 4 earlier messages." in text_of(
            live, "agent_thought_chunk"
        )
        assert not [u for u in replayed if u["sessionUpdate"].startswith("compaction")]


@pytest.mark.model_free
@SHOWN
async def test_a_model_switch_is_a_notice_only_for_a_client_that_shows_them(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, shows: bool
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent, **({"session": SHOWS} if shows else {}))
        session = await agent.new_session(workspace)
        answer = await agent.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "model", "value": "claude-opus-5-5"},
        )
        assert "result" in answer, answer
        live = [p["update"] for p in agent.updates(session)]
    if shows:
        [notice] = kinds_of(live, "notice")
        assert notice == {
            "sessionUpdate": "notice",
            "severity": "info",
            "title": "Switched model: claude-test-1 → claude-opus-5-5",
        }
        assert not kinds_of(live, "agent_thought_chunk")
    else:
        assert not kinds_of(live, "notice")
        assert text_of(live, "agent_thought_chunk") == "Switched model: claude-test-1 → claude-opus-5-5.\n"
