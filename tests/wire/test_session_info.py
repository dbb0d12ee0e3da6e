"""A session's title and last activity (issue 24 item 3), as Zed 1.16 drives the agent: the first
prompt names the session in a `session_info_update` (the same title session/list shows, no model
request spent on it), every turn reports its `updatedAt`, a rename (ACP's unstable
`session/set_title`) is journaled and shows in list and load, and session/list pages with an
opaque cursor."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.zed import zed_initialize


def infos(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    return [
        p["update"] for p in agent.updates(session) if p["update"]["sessionUpdate"] == "session_info_update"
    ]


async def listed(agent: AgentProcess, **params: Any) -> dict[str, Any]:
    answer = await agent.request("session/list", params)
    assert "result" in answer, answer
    return dict(answer["result"])


async def test_the_first_prompt_names_the_session_and_every_turn_reports_its_activity(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("on it"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        assert infos(agent, session) == []  # nothing to name yet
        first = await agent.prompt(session, "  Fix the parser's error messages\nthey name no line")
        after_first = infos(agent, session)
        await agent.prompt(session, "And the tests?")
        after_second = infos(agent, session)
        page = await listed(agent)
    assert first["result"]["stopReason"] == "end_turn"
    named, touched = after_first
    assert named["title"] == "Fix the parser's error messages" and named["updatedAt"].endswith("Z")
    assert set(touched) == {"sessionUpdate", "updatedAt"}  # the end of the turn: activity only
    [again] = after_second[2:]
    assert set(again) == {"sessionUpdate", "updatedAt"} and again["updatedAt"] >= touched["updatedAt"]
    # Both came before the turn's answer.
    sent = [m.get("params", {}).get("update") for m in agent.messages]
    assert max(sent.index(named), sent.index(touched)) < agent.messages.index(first)
    [entry] = page["sessions"]
    assert entry["title"] == "Fix the parser's error messages" and "nextCursor" not in page
    assert fake_api.attempts == 2  # no request spent on the title


async def test_a_rename_shows_in_list_and_load_and_no_prompt_replaces_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("hello"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        init = await zed_initialize(agent)
        assert init["agentCapabilities"]["sessionCapabilities"]["title"] == {}
        session = await agent.new_session(workspace)
        renamed = await agent.request(
            "session/set_title", {"sessionId": session, "title": "  Parser\n  work  "}
        )
        assert renamed["result"] == {"title": "Parser work"}
        await agent.prompt(session, "What does the parser do?")
        told = infos(agent, session)
        blank = await agent.request("session/set_title", {"sessionId": session, "title": " \n "})
        missing = await agent.request("session/set_title", {"sessionId": f"sess_{'0' * 32}", "title": "x"})
    assert [u.get("title") for u in told] == ["Parser work", None]  # the rename, then the turn's end
    assert blank["error"]["code"] == -32602 and "title" in blank["error"]["message"]
    assert missing["error"]["code"] == -32002
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        # Any session the list shows can be renamed, open or not.
        again = await agent.request("session/set_title", {"sessionId": session, "title": "Parser, reviewed"})
        assert again["result"] == {"title": "Parser, reviewed"}
        [entry] = (await listed(agent))["sessions"]
        start = len(agent.messages)
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        replayed = [
            m["params"]["update"]
            for m in agent.messages[start : agent.messages.index(loaded)]
            if m.get("method") == "session/update"
        ]
    assert entry["title"] == "Parser, reviewed"
    [info] = [u for u in replayed if u["sessionUpdate"] == "session_info_update"]
    assert info["title"] == "Parser, reviewed" and info["updatedAt"].endswith("Z")
    assert [u["sessionUpdate"] for u in replayed][:2] == ["user_message_chunk", "agent_message_chunk"]


@pytest.mark.model_free
async def test_session_list_pages_with_a_cursor_and_stays_stable_when_a_session_changes(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        made = [await agent.new_session(workspace) for _ in range(53)]
        elsewhere = await agent.new_session(other)
        first = await listed(agent, cwd=str(workspace))
        assert len(first["sessions"]) == 50 and first["nextCursor"]
        # A session of the next page changes between the pages: it moves to the front of a
        # fresh list, and the next page neither repeats the first nor shows it again.
        shown = {s["sessionId"] for s in first["sessions"]}
        moved = next(s for s in made if s not in shown)
        await agent.request("session/set_title", {"sessionId": moved, "title": "moved"})
        second = await listed(agent, cwd=str(workspace), cursor=first["nextCursor"])
        fresh = await listed(agent)
        fresh_rest = await listed(agent, cursor=fresh["nextCursor"])
        bad = await agent.request("session/list", {"cursor": "not-a-cursor"})
        forged = base64.urlsafe_b64encode(json.dumps({"v": 1, "t": 0, "id": "../x"}).encode()).decode()
        forged_answer = await agent.request("session/list", {"cursor": forged})
    rest = [s["sessionId"] for s in second["sessions"]]
    assert "nextCursor" not in second
    assert not shown & set(rest) and moved not in rest
    assert shown | set(rest) | {moved} == set(made)
    assert elsewhere not in shown | set(rest)  # the cwd filter holds across pages
    assert fresh["sessions"][0]["sessionId"] == moved and fresh["sessions"][0]["title"] == "moved"
    everything = [s["sessionId"] for s in fresh["sessions"] + fresh_rest["sessions"]]
    assert len(everything) == len(set(everything)) == 54 and set(everything) == {*made, elsewhere}
    assert "nextCursor" not in fresh_rest
    assert bad["error"]["code"] == -32602 and "cursor" in bad["error"]["message"]
    assert forged_answer["error"]["code"] == -32602
