"""Claude Code's everyday commands on the wire (issue 33 item 8): `/context` and `/cost` answer
without a model request and with the figures of the turn records, `/init` and `/review` run as a
command's turn, and a project command of the same name wins."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from acp_agent.journal.store import SessionStore
from acp_agent.session.loading.replay import replay_updates
from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.turn.journal.entries import TurnEntry
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_mcp import command_text
from tests.wire.test_claude_settings import Editor
from tests.wire.test_conventions import user_text
from tests.wire.test_prompt_caching import SONNET


def figure(text: str, pattern: str) -> int:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in {text!r}"
    return int(found.group(1).replace(",", ""))


async def test_context_and_cost_answer_unasked_with_the_turn_records_figures(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / "CLAUDE.md").write_text("MEMORY: run the tests with make test.\n" * 40, encoding="utf-8")
    fake_api.script(
        replies.tool_use("read_file", {"path": "README.md"}),
        replies.text("done"),
        replies.text("again", usage=(50, 7)),
    )
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        records = [turn_record(await agent.prompt(session, text)) for text in ("look", "again")]
        requests = len(fake_api.requests)
        cost = await command_text(agent, session, "/cost")
        context = await command_text(agent, session, "/context")
        assert len(fake_api.requests) == requests  # neither asked the model
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        loaded_cost = await command_text(agent, session, "/cost")

    total = sum(r["costUsd"] for r in records)
    assert total > 0
    assert f"Session cost so far: ${total:.6f}\n" in cost
    assert figure(cost, r"model requests: ([\d,]+)") == sum(r["modelRequests"] for r in records) == 3
    assert figure(cost, r"([\d,]+) input") == sum(r["inputTokens"] for r in records)
    assert figure(cost, r"([\d,]+) output") == sum(r["outputTokens"] for r in records)
    assert figure(cost, r"([\d,]+) read from the cache") == sum(r["cacheReadInputTokens"] for r in records)
    assert figure(cost, r"([\d,]+) written to it") == sum(r["cacheCreationInputTokens"] for r in records)
    assert loaded_cost == cost  # after session/load: the journal's records

    usage = fake_api.served[-1].usage
    assert usage is not None
    measured = sum(
        usage[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    assert figure(context, r"The last request measured ([\d,]+) tokens") == measured + usage["output_tokens"]
    memory = figure(context, r"Memory files \(CLAUDE.md, AGENTS.md, rules\)\s+([\d,]+)")
    assert memory >= len("MEMORY: run the tests with make test.\n" * 40) // 4
    for part in ("System prompt (the agent's own)", "Tool definitions (", "Messages (", "Tool results"):
        assert figure(context, re.escape(part) + r".*?\s{2,}([\d,]+)") > 0
    assert "Output style (Default)" in context and "Free" in context


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=base_env(cwd.parent))


async def test_review_runs_the_diff_unasked_a_project_review_wins_and_init_writes_claude_md(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    git(plain, "init", "-q")
    git(plain, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "calc.py")
    git(plain, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first")
    (plain / "calc.py").write_text("def add(a, b):\n    return a - b  # CHANGED\n", encoding="utf-8")
    project = claude_repo(tmp_path / "elsewhere")  # its user's /review is not in this HOME
    editor = Editor("allow_once")
    fake_api.script(
        replies.text("one finding"),
        replies.text("project review done"),
        replies.tool_use("write_file", {"path": "CLAUDE.md", "content": "# CLAUDE.md\nmake test\n"}),
        replies.text("written"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(plain)
        review = turn_record(await agent.prompt(session, "/review the sign"))
        built_in = user_text(fake_api, 0)
        asked_by_review = list(editor.asked)
        other = await agent.new_session(project)
        await agent.prompt(other, "/review src/app.py")
        projects = user_text(fake_api, 1)
        init = turn_record(await agent.prompt(session, "/init"))
    assert review["modelRequests"] == 1
    assert built_in.startswith("Review the uncommitted changes of this working tree")
    assert "M calc.py" in built_in and "+    return a - b  # CHANGED" in built_in and "the sign" in built_in
    assert asked_by_review == []  # its git lines are granted
    assert projects.startswith("Review src/app.py carefully")  # the project's own /review
    assert "uncommitted changes" not in projects
    assert "Write a CLAUDE.md at the root of this workspace" in user_text(fake_api, 2)
    assert [q["toolCall"]["rawInput"].get("path") for q in editor.asked] == ["CLAUDE.md"]  # asked as usual
    assert init["modelRequests"] == 2 and (plain / "CLAUDE.md").read_text() == "# CLAUDE.md\nmake test\n"


def without_ids(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in u.items() if k != "messageId"} for u in updates]


def said_by_agent(updates: list[dict[str, Any]]) -> str:
    shown = (u["update"] for u in updates)
    return "".join(u["content"]["text"] for u in shown if u["sessionUpdate"] == "agent_message_chunk")


async def test_cost_counts_a_compaction_the_same_before_and_after_session_load(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """`/compact`'s request is a turn of the session's spend: its record is journaled as a
    prompt turn's is, so a loaded session's `/cost` sums it too, and it replays as nothing."""
    fake_api.script(
        replies.text("one", usage=(120, 9)),
        replies.text("two", usage=(150, 11)),
        replies.text("three", usage=(180, 13)),
        replies.text("THE SUMMARY", usage=(300, 20)),  # /compact's (it keeps the last two prompts)
    )
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        records = [turn_record(await agent.prompt(session, text)) for text in ("p1", "p2", "p3", "/compact")]
        await command_text(agent, session, "/status")  # a command that asks the model nothing
        cost = await command_text(agent, session, "/cost")
        again = await command_text(agent, session, "/cost")
        live = agent.updates(session)
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = agent.updates(session)
        loaded_cost = await command_text(agent, session, "/cost")

    assert records[3]["modelRequests"] == 1 and records[3]["costUsd"] > 0  # the compaction's request
    assert figure(cost, r"model requests: ([\d,]+)") == 4
    assert figure(cost, r"Turns that asked the model: ([\d,]+)") == 4
    assert figure(cost, r"([\d,]+) output") == sum(r["outputTokens"] for r in records) == 53
    for pattern, field in (
        (r"([\d,]+) input", "inputTokens"),
        (r"([\d,]+) read from the cache", "cacheReadInputTokens"),
        (r"([\d,]+) written to it", "cacheCreationInputTokens"),
    ):
        assert figure(cost, pattern) == sum(r[field] for r in records)
    assert f"Session cost so far: ${sum(r['costUsd'] for r in records):.6f}\n" in cost
    assert figure(loaded_cost, r"model requests: ([\d,]+)") == 4  # the journal's: the compaction's too
    assert loaded_cost == cost
    assert again == cost  # neither /status nor /cost asked the model: no turn of the spend

    # The journaled record shows nothing on replay: what the editor is shown again is what it saw.
    assert said_by_agent(replayed) == said_by_agent(live)
    shown_live = {u["update"]["sessionUpdate"] for u in live}
    assert {u["update"]["sessionUpdate"] for u in replayed} <= shown_live | {"user_message_chunk"}
    entries = SessionStore(Path(agent_env["ACP_AGENT_STATE_DIR"])).read(session)
    compaction = [e for e in entries if isinstance(e, TurnEntry) and e.record == records[3]]
    assert len(compaction) == 1  # journaled as the answer's `_meta` carried it
    assert without_ids(replay_updates(entries)) == without_ids(
        replay_updates(e for e in entries if e not in compaction)
    )
