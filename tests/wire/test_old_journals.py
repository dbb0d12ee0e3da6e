"""Journals on disk over real pipes: one written by the 0.1.0 release loads and replays as it did
then, and goes on; a duplicated one is refused with the line where it repeats (issue 29 item 13)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from acp_agent.errors import JOURNAL_ERROR
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.history import assert_valid_history

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "journals" / "v0.1.0"
SESSION = "sess_9bc54f280c884fddabd097bbf928bb38"


def blank_ids(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**u, "messageId": ""} if "messageId" in u else u for u in updates]


def tool_names(journal: Path) -> dict[str, str]:
    """Call id → tool name, from the journal's tool_use blocks."""
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    return {
        b["id"]: b["name"]
        for e in lines
        if e["type"] == "assistant"
        for b in e["blocks"]
        if b["type"] == "tool_use"
    }


async def test_a_journal_of_the_010_release_loads_replays_and_goes_on(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    state = Path(agent_env["ACP_AGENT_STATE_DIR"])
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    journal = state / f"{SESSION}.jsonl"
    shutil.copy(FIXTURE / journal.name, journal)
    journal.chmod(0o600)
    old = journal.read_bytes()
    fake_api.script(replies.text("back again"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": SESSION, "cwd": str(workspace), "mcpServers": []}
        )
        position = agent.messages.index(loaded)
        replayed = [
            m["params"]["update"] for m in agent.messages[:position] if m.get("method") == "session/update"
        ]
        response = await agent.prompt(SESSION, "are you back?")
    assert "result" in loaded, loaded
    assert loaded["result"]["modes"]["currentModeId"] == "acceptEdits"
    # New since the release: each tool call's own name, and the title after the conversation
    [info] = [u for u in replayed if u["sessionUpdate"] == "session_info_update"]
    assert info["title"] == "What does notes.txt say?" and info["updatedAt"]
    named = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
    names = {u["toolCallId"]: u.pop("name") for u in named}
    assert names and names.items() <= tool_names(journal).items()
    replayed.remove(info)
    assert blank_ids(replayed) == json.loads((FIXTURE / "replayed.json").read_text())
    assert response["result"]["stopReason"] == "end_turn"
    sent = fake_api.requests[-1].plain_body["messages"]
    assert_valid_history(sent)
    history = json.loads((FIXTURE / "history.json").read_text())
    assert sent[:-1] == history[:-1]  # the prompt joins the last message (the repaired crash)
    assert sent[-1]["content"] == [*history[-1]["content"], {"type": "text", "text": "are you back?"}]
    kept = journal.read_bytes()
    assert kept.startswith(old)  # appended to, never rewritten
    assert [json.loads(line)["type"] for line in kept[len(old) :].splitlines()] == [
        "prompt",
        "assistant",
        "turn",
    ]


async def test_a_duplicated_journal_is_refused_with_the_line_where_it_repeats(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """A journal copied into itself loaded and then sent every tool_use id twice: a 400 from the
    API on every later request. It is refused on load instead, naming the line."""
    state = Path(agent_env["ACP_AGENT_STATE_DIR"])
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines = (FIXTURE / f"{SESSION}.jsonl").read_bytes().splitlines(keepends=True)
    # The body again after line 5: line 6 is the first prompt, line 7 its reply, which holds the
    # tool_use of line 4 a second time.
    (state / f"{SESSION}.jsonl").write_bytes(b"".join(lines[:5] + lines[2:]))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request(
            "session/load", {"sessionId": SESSION, "cwd": str(workspace), "mcpServers": []}
        )
        still = await agent.new_session(workspace)
        fake_api.script(replies.text("fine"))
        other = await agent.prompt(still, "another session works")
    error = answer["error"]
    assert error["code"] == JOURNAL_ERROR
    assert error["data"]["line"] == 7 and "line 7" in error["message"]
    assert "'t_read' appears again (first at line 4)" in error["message"] and "duplicated" in error["message"]
    assert other["result"]["stopReason"] == "end_turn"
    assert fake_api.attempts == 1
