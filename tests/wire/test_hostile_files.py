"""Hostile files and hostile text: a name that is not UTF-8, or a lone surrogate in a prompt, never
breaks the session (issue 19, item 1); a FIFO never blocks a tool, and no stuck thread keeps the
agent alive (item 3)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.history import assert_valid_history


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result"
    }


def latin1_file(workspace: Path, text: str) -> bytes:
    """`café.txt` named in Latin-1 (byte e9), which is not UTF-8; returns its real path."""
    real = os.fsencode(workspace) + b"/caf\xe9.txt"
    with open(real, "wb") as f:
        f.write(text.encode())
    return real


async def test_a_latin1_file_name_is_listed_read_and_edited_by_its_shown_name(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    real = latin1_file(workspace, "bonjour\n")
    fake_api.script(
        replies.tool_use("list_files", {"path": "."}, id="toolu_list"),
        replies.tool_use("search_text", {"pattern": "bonjour"}, id="toolu_search"),
        replies.tool_use("read_file", {"path": "caf\\xe9.txt"}, id="toolu_read"),
        replies.tool_use(
            "edit_file",
            {"path": "caf\\xe9.txt", "old_string": "bonjour", "new_string": "bonsoir"},
            id="toolu_edit",
        ),
        replies.text("done"),
        replies.text("still fine"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "look around")
        assert response["result"]["stopReason"] == "end_turn", response
        follow_up = await agent.prompt(session, "and again")
        assert follow_up["result"]["stopReason"] == "end_turn", follow_up
    bodies = [r.body for r in fake_api.requests]
    assert len(bodies) == 6  # every request reached the API as valid JSON
    for body in bodies:
        assert_valid_history(body["messages"])
    results = results_of(bodies[-1])
    assert "caf\\xe9.txt" in str(results["toolu_list"]["content"])
    assert "caf" in str(results["toolu_search"]["content"])
    assert not results["toolu_read"].get("is_error"), results["toolu_read"]
    assert "bonjour" in str(results["toolu_read"]["content"])
    assert not results["toolu_edit"].get("is_error"), results["toolu_edit"]
    with open(real, "rb") as f:
        assert f.read() == b"bonsoir\n"
    assert not (workspace / "caf\\xe9.txt").exists()  # no new file under the escaped name
    journal = Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl"
    journal.read_bytes().decode("utf-8")  # the journal holds the same shown text: strict UTF-8


async def test_a_lone_surrogate_in_a_prompt_is_replaced_and_the_session_goes_on(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("got it"), replies.text("next"))
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "lone",
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "half a pair: \ud800!"}]},
        }
    )
    await agent.send_raw(line + "\n")
    answer = await agent.wait_for(lambda m: m.get("id") == "lone")
    assert answer["result"]["stopReason"] == "end_turn", answer
    assert (await agent.prompt(session, "more"))["result"]["stopReason"] == "end_turn"
    sent = fake_api.requests[-1].body["messages"]
    assert_valid_history(sent)
    assert sent[0]["content"][0]["text"] == "half a pair: \ufffd!"


async def test_a_fifo_is_refused_at_once_by_every_file_tool(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    os.mkfifo(workspace / "pipe")
    calls = [
        ("read_file", {"path": "pipe"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
        ("search_text", {"pattern": "never-there"}),
        ("list_files", {"path": "."}),
    ]
    fake_api.script(
        replies.message(
            [replies.tool_use_block(name, args, id=f"toolu_{n}") for n, (name, args) in enumerate(calls)],
            stop_reason="tool_use",
        ),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        # Refused at once: each result names the FIFO (a blocked open would end in a timeout).
        response = await agent.prompt(session, "touch the pipe", timeout=20)
    assert response["result"]["stopReason"] == "end_turn", response
    results = results_of(fake_api.requests[-1].body)
    for n in range(3):
        assert results[f"toolu_{n}"].get("is_error"), results[f"toolu_{n}"]
        assert "FIFO" in results[f"toolu_{n}"]["content"], results[f"toolu_{n}"]
    assert "No matches" in results["toolu_3"]["content"]
    assert stat.S_ISFIFO(os.lstat(workspace / "pipe").st_mode)  # never replaced by a file


@pytest.mark.model_free
async def test_a_stuck_worker_thread_does_not_keep_the_agent_alive(
    agent_env: dict[str, str], acp_schema: Any
) -> None:
    """Stands in for a tool thread blocked in the kernel, which no cancel can interrupt."""
    stuck = (
        "import sys, threading, time; "
        "threading.Thread(target=time.sleep, args=(600,), name='stuck').start(); "
        "from acp_agent.cli import main; sys.exit(main())"
    )
    async with AgentProcess.start(
        command=[sys.executable, "-c", stuck], env=agent_env, schema=acp_schema, exit_timeout=1
    ) as agent:
        await agent.initialize()
        await agent.close_stdin()
        code = await agent.wait_exit(timeout=10)  # D5's exit bound; the stuck thread sleeps 600 s
        log = agent.stderr_text()
    assert code == 0, code
    assert "agent.stuck_threads" in log and "stuck" in log
