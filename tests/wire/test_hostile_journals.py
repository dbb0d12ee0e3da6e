"""Corrupt or odd journals: one bad journal never breaks another session, a corrupt one is a clear
error naming the file and the line, symlinks are not followed, and a bad state dir is a clear
start-up error (issue 19, item 10); a journal that cannot be written ends the turn clearly and
loses nothing later (item 5)."""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path
from typing import Any

import pytest

from acp_agent.errors import JOURNAL_ERROR
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.history import assert_valid_history

HEADER = {"type": "meta", "version": 1, "cwd": "", "createdAt": "2026-01-01T00:00:00.000Z"}
PROMPT = {
    "type": "prompt",
    "blocks": [{"type": "text", "text": "hello"}],
    "prompt": [{"type": "text", "text": "hello"}],
}


def line(value: Any) -> str:
    return json.dumps(value) + "\n"


# name → (what follows the header, the line the error must name; None: the file as a whole)
VARIANTS: dict[str, tuple[str, int | None]] = {
    "nested 1,000 deep": ("[" * 1000 + "]" * 1000 + "\n", 2),
    "a non-JSON line": ("{not json\n" + line(PROMPT), 2),
    "a JSON array": (line([1, 2]), 2),
    "an entry without a type": (line({"blocks": []}), 2),
    "prompt blocks as a string": (line({**PROMPT, "blocks": "hello"}), 2),
    "a prompt block that is a number": (line({**PROMPT, "blocks": [7]}), 2),
    "a tool_use without an id": (
        line(PROMPT) + line({"type": "assistant", "blocks": [{"type": "tool_use", "name": "read_file"}]}),
        3,
    ),
    "a tool_result without its block": (line(PROMPT) + line({"type": "tool_result"}), 3),
    "bad locations": (
        line(PROMPT)
        + line(
            {
                "type": "tool_result",
                "block": {"type": "tool_result", "tool_use_id": "t", "content": "x"},
                "shown": {"locations": "here"},
            }
        ),
        3,
    ),
    "a rollback count as text": (line({"type": "rollback", "messages": "2", "blocks": 0}), 2),
    "a compacted message with a bad role": (
        line({"type": "compaction", "messages": [{"role": "system", "content": []}]}),
        2,
    ),
    "a text block without text": (line({**PROMPT, "blocks": [{"type": "text", "text": None}]}), 2),
}
WHOLE_FILE = {
    "empty": (b"", 1),
    "random bytes": (os.urandom(300).replace(b"\n", b"") + b"\n", 1),
    "no header": (line(PROMPT).encode(), 1),
}


def session_id(n: int) -> str:
    return f"sess_{n:032x}"


def write_journals(state: Path, cwd: Path) -> dict[str, tuple[str, int | None]]:
    """The good journal (id 0) and one per variant; returns variant → (id, line)."""
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    made = {}
    (state / f"{session_id(0)}.jsonl").write_text(
        line({**HEADER, "sessionId": session_id(0), "cwd": str(cwd)}) + line(PROMPT)
    )
    for n, (name, (rest, number)) in enumerate(VARIANTS.items(), 1):
        header = line({**HEADER, "sessionId": session_id(n), "cwd": str(cwd)})
        (state / f"{session_id(n)}.jsonl").write_text(header + rest)
        made[name] = (session_id(n), number)
    for n, (name, (data, number)) in enumerate(WHOLE_FILE.items(), 100):
        (state / f"{session_id(n)}.jsonl").write_bytes(data)
        made[name] = (session_id(n), number)
    return made


@pytest.mark.model_free
async def test_corrupt_journals_are_clear_errors_and_never_break_another_session(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, tmp_path: Path
) -> None:
    state = Path(agent_env["ACP_AGENT_STATE_DIR"])
    made = write_journals(state, workspace)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(line({**HEADER, "sessionId": session_id(500), "cwd": str(workspace)}) + line(PROMPT))
    linked = state / f"{session_id(500)}.jsonl"
    linked.symlink_to(outside)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        listed = (await agent.request("session/list", {}))["result"]["sessions"]
        ids = {s["sessionId"] for s in listed}
        # session/list reads a journal only up to its title: what is corrupt later shows on load
        assert ids == {session_id(0)} | {
            sid for sid, number in made.values() if number is not None and number > 2
        }
        for name, (sid, number) in made.items():
            answer = await agent.request(
                "session/load", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}
            )
            error = answer.get("error") or {}
            assert error.get("code") == JOURNAL_ERROR, (name, answer)
            assert f"{sid}.jsonl" in error["message"] and error["data"]["journal"], (name, error)
            assert error["data"].get("line") == number, (name, error)
            assert f"line {number}" in error["message"], (name, error)
        via_link = await agent.request(
            "session/load", {"sessionId": session_id(500), "cwd": str(workspace), "mcpServers": []}
        )
        assert via_link["error"]["code"] == -32002  # a symlink is not a journal
        good = await agent.request(
            "session/load", {"sessionId": session_id(0), "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in good, good
        escape = await agent.request("session/delete", {"sessionId": f"{session_id(0)}/../!"})
        assert escape["error"]["code"] == -32602
        assert (state / f"{session_id(0)}.jsonl").exists()
        assert (await agent.request("session/delete", {"sessionId": session_id(500)}))["result"] == {}
    assert not linked.exists() and outside.exists()  # the link went, never what it points to


async def test_a_state_dir_that_is_a_file_is_a_clear_start_up_error(acp_schema: Any, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.write_text("not a directory")
    env = base_env(
        tmp_path, ACP_AGENT_STATE_DIR=str(state), ANTHROPIC_API_KEY="k", ACP_AGENT_MODEL="claude-test-1"
    )
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        result = await agent.initialize()
        assert result["agentCapabilities"]["loadSession"] is False
        assert (await agent.request("session/list", {}))["error"]["code"] == -32601
        log = agent.stderr_text()
    assert "agent.state_dir_unusable" in log and str(state) in log
    assert "Traceback" not in log


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs prlimit (Linux)")
async def test_a_journal_that_cannot_be_written_ends_the_turn_clearly_and_loses_nothing_later(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """A file size limit set on the running agent stands in for a full disk (EFBIG, not ENOSPC)."""
    (workspace / "big.txt").write_text("a fairly long line of text for the journal\n" * 2000)
    env = {**agent_env, "PYTHONDONTWRITEBYTECODE": "1"}  # no .pyc written under the limit
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        fake_api.script(replies.text("ready"))  # the turn machinery is loaded before the limit
        assert (await agent.prompt(session, "hello"))["result"]["stopReason"] == "end_turn"
        journal = Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl"
        _, hard = resource.prlimit(agent.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(agent.pid, resource.RLIMIT_FSIZE, (journal.stat().st_size + 4000, hard))
        fake_api.script(replies.tool_use("read_file", {"path": "big.txt"}, id="toolu_big"))
        failed = await agent.prompt(session, "read the big file")
        error = failed["error"]
        assert error["code"] == JOURNAL_ERROR, error
        assert str(journal) in error["message"] and "cannot write" in error["message"]
        assert error["data"]["acp-agent"]["turn"]["stopReason"] == "error"
        final = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_big"][
            -1
        ]
        assert final["status"] == "failed"
        assert journal.read_bytes().endswith(b"\n")  # the partial entry was cut off again
        resource.prlimit(agent.pid, resource.RLIMIT_FSIZE, (hard, hard))  # space is freed
        fake_api.script(replies.text("recovered"))
        again = await agent.prompt(session, "the prompt after the disk was freed")
        assert again["result"]["stopReason"] == "end_turn", again
        assert_valid_history(fake_api.requests[-1].body["messages"])
    fake_api.script(replies.text("reloaded"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded, loaded
        assert (await agent.prompt(session, "still there?"))["result"]["stopReason"] == "end_turn"
    messages = fake_api.requests[-1].body["messages"]
    assert_valid_history(messages)
    assert "the prompt after the disk was freed" in json.dumps(messages)
