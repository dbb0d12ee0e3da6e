"""Claude Code's memory on the wire (issue 33 item 4), in a temporary HOME and repository holding
every memory file: the system prompt's files in their documented order, the path rules and the
memory below the cwd joining the conversation after the read that needs them (once, through
session/load too), a cached prefix that holds across requests and turns, /status, and every bad
input left out with a note while the session goes on."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.conventions import write_file
from tests.wire.conftest import chunks
from tests.wire.test_instructions import system_of

SONNET = "claude-sonnet-5-5"
REMINDER = "<system-reminder>\nContents of "


def texts_of(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


def status_of(agent: AgentProcess, session: str) -> str:
    said = "".join(c["content"]["text"] for c in chunks(agent, session))
    return said[said.rindex("Instructions:") :]


def memory_tree(home: Path, repo: Path) -> dict[str, Path]:
    """Every memory file, each holding a marker word, in the order the prompt must show them."""
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    cwd = repo / "app"
    files = {
        "USER_MEMORY": write_file(home / ".claude" / "CLAUDE.md", "USER_MEMORY\n@prefs.md\n"),
        "USER_PREFS": write_file(home / ".claude" / "prefs.md", "USER_PREFS\n"),
        "USER_RULE": write_file(home / ".claude" / "rules" / "tone.md", "USER_RULE\n"),
        "CONFIG_AGENTS": write_file(home / ".config" / "acp-agent" / "AGENTS.md", "CONFIG_AGENTS\n"),
        "ROOT_CLAUDE": write_file(
            repo / "CLAUDE.md", "ROOT_CLAUDE\n@AGENTS.md\n@docs/style.md\nNot an import: `@docs/x.md`.\n"
        ),
        "ROOT_AGENTS": write_file(repo / "AGENTS.md", "ROOT_AGENTS\n"),  # read as ROOT_CLAUDE's import
        "STYLE_GUIDE": write_file(repo / "docs" / "style.md", "STYLE_GUIDE\n@deeper.md\n"),
        "DEEPER_GUIDE": write_file(repo / "docs" / "deeper.md", "DEEPER_GUIDE\n"),
        "DOT_CLAUDE": write_file(repo / ".claude" / "CLAUDE.md", "DOT_CLAUDE\n"),
        "GENERAL_RULE": write_file(repo / ".claude" / "rules" / "general.md", "GENERAL_RULE\n"),
        "LOCAL_MEMORY": write_file(repo / "CLAUDE.local.md", "LOCAL_MEMORY\n"),
        "APP_MEMORY": write_file(cwd / "CLAUDE.md", "APP_MEMORY\n"),
    }
    write_file(
        repo / ".claude" / "rules" / "api.md", '---\npaths:\n  - "app/src/api/**/*.{ts,tsx}"\n---\nAPI_RULE\n'
    )
    write_file(cwd / "pkg" / "CLAUDE.md", "NESTED_MEMORY\n")
    write_file(cwd / "src" / "api" / "handler.ts", "export const handler = 1;\n")
    write_file(cwd / "pkg" / "mod.py", "VALUE = 1\n")
    return files


async def test_every_memory_file_reaches_the_model_in_order_and_the_cached_prefix_holds(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    files = memory_tree(home, repo)
    cwd = repo / "app"
    fake_api.script(
        replies.tool_use("read_file", {"path": "src/api/handler.ts"}),
        replies.tool_use("read_file", {"path": "pkg/mod.py"}),
        replies.text("done"),
        replies.tool_use("read_file", {"path": "src/api/handler.ts"}),  # turn 2: the rule is held already
        replies.text("again"),
        replies.tool_use("read_file", {"path": "pkg/mod.py"}),  # after session/load: held already
        replies.text("third"),
    )
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(cwd)
        await agent.prompt(session, "look at the handler")
        await agent.prompt(session, "once more")
        await agent.prompt(session, "/status")
        status = status_of(agent, session)
        params = {"sessionId": session, "cwd": str(cwd), "mcpServers": []}
        assert "result" in await agent.request("session/load", params)
        await agent.prompt(session, "and the module")

    system = system_of(fake_api, 0)
    where = [system.find(marker) for marker in files]
    assert -1 not in where and where == sorted(where), dict(zip(files, where, strict=True))
    assert system.count("ROOT_AGENTS") == 1  # the `@AGENTS.md` bridge does not repeat it
    assert "API_RULE" not in system and "NESTED_MEMORY" not in system
    for path in files.values():
        assert f"--- {path}" in system  # a line naming each file
    # The rule joins after the read that matched it, behind the tool result, once.
    first_read = fake_api.requests[1].body["messages"][-1]
    assert first_read["content"][0]["type"] == "tool_result"
    [rule] = texts_of(first_read)
    assert rule.startswith(
        f"{REMINDER}{repo / '.claude' / 'rules' / 'api.md'} (rule for files matching app/src/"
    )
    assert "API_RULE" in rule
    second_read = fake_api.requests[2].body["messages"][-1]
    [nested] = texts_of(second_read)
    assert nested.startswith(
        f"{REMINDER}{cwd / 'pkg' / 'CLAUDE.md'} (instructions for the files under {cwd / 'pkg'})"
    )
    for request in fake_api.requests[3:]:
        sent = str(request.body["messages"])
        assert sent.count("API_RULE") == 1 and sent.count("NESTED_MEMORY") == 1
    # One system prompt for every request, so every request after the first reads its prefix from
    # the cache: within a turn and across turns (and a session/load rebuilds the same prompt).
    assert len(fake_api.requests) == 7
    assert all(system_of(fake_api, i) == system for i in range(7))
    for served in fake_api.served[1:]:
        usage = served.usage
        assert usage is not None
        prompt = (
            usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        )
        assert usage["cache_read_input_tokens"] / prompt >= 0.9, usage
    # /status lists them in order with their sizes, and what loaded on read.
    listed = [status.find(f"- {path}") for path in files.values()]
    assert -1 not in listed and listed == sorted(listed), status
    assert f"- {files['ROOT_AGENTS']} (imported by {files['ROOT_CLAUDE']}): 12 bytes" in status
    assert f"- {files['USER_PREFS']} (imported by {files['USER_MEMORY']}): 11 bytes" in status
    assert (
        f"Loaded when a matching file is read:\n- {repo / '.claude' / 'rules' / 'api.md'} (rule for" in status
    )
    assert "Loaded on read, in the conversation now:" in status and f"- {cwd / 'pkg' / 'CLAUDE.md'}" in status


async def test_a_subagents_read_brings_the_rule_into_its_own_conversation_only(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    memory_tree(home, repo)
    fake_api.route(
        routes.first_prompt_has("look at the api"),
        replies.tool_use("read_file", {"path": "src/api/handler.ts"}),
        replies.text("the handler exports 1"),
    )
    fake_api.script(
        replies.tool_use("task", {"description": "Read the api", "prompt": "look at the api"}),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(repo / "app")
        response = await agent.prompt(session, "ask a helper")
    assert response["result"]["stopReason"] == "end_turn"
    parent, child_first, child_second, parent_last = fake_api.requests
    assert system_of(fake_api, 1).startswith(SUBAGENT_MARKER) and "APP_MEMORY" in system_of(fake_api, 1)
    [rule] = texts_of(child_second.body["messages"][-1])
    assert rule.startswith(REMINDER) and "API_RULE" in rule
    assert "API_RULE" not in str(parent_last.body["messages"]) and "API_RULE" not in str(parent.body)
    assert "API_RULE" not in str(child_first.body)


async def test_bad_memory_is_left_out_with_a_note_and_the_session_goes_on(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "app"
    secret = write_file(home / ".ssh" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY----- SECRET_KEY\n")
    write_file(tmp_path / "elsewhere" / "team.md", "OUTSIDE_THE_REPO\n")
    write_file(repo / "CLAUDE.md", "ROOT_MEMORY\n@loop-a.md\n@missing.md\n@logo.png\n@../elsewhere/team.md\n")
    write_file(repo / "loop-a.md", "LOOP_A\n@loop-b.md\n")
    write_file(repo / "loop-b.md", "LOOP_B\n@loop-a.md\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR BINARY_BYTES")
    write_file(
        repo / ".claude" / "rules" / "broken.md", "---\npaths: [src/**\nnot yaml at all\n---\nBROKEN_RULE\n"
    )
    write_file(repo / "CLAUDE.local.md", "HUGE_START\n" + "x" * (10 * 1024 * 1024) + "\nHUGE_END\n")  # 10 MB
    write_file(cwd / "CLAUDE.md", "APP_MEMORY\n")
    (cwd / ".claude").mkdir()
    os.mkfifo(cwd / ".claude" / "CLAUDE.md")  # opening it without O_NONBLOCK would wait forever
    (cwd / "CLAUDE.local.md").symlink_to(secret)  # a link out of the tree
    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(cwd)
        response = await agent.prompt(session, "hello", timeout=30)
        assert response["result"]["stopReason"] == "end_turn"
        await agent.prompt(session, "/status")
        status = status_of(agent, session)
        assert (await agent.prompt(session, "still there?"))["result"]["stopReason"] == "end_turn"
        agent.send_signal(signal.SIGTERM)
        assert await agent.wait_exit(timeout=10) == 0
        log = agent.stderr_text()
    system = system_of(fake_api)
    assert "HUGE_START" in system and "HUGE_END" not in system and len(system.encode()) < 40_000
    assert f"{repo / 'CLAUDE.local.md'} (cut at the 32,768-byte cap on instructions" in system
    assert system.count("LOOP_A") == 1 and system.count("LOOP_B") == 1
    assert "ROOT_MEMORY" in system and "APP_MEMORY" in system
    for absent in ("SECRET_KEY", "OUTSIDE_THE_REPO", "BINARY_BYTES", "BROKEN_RULE"):
        assert absent not in system
    imported = f"imported by {repo / 'CLAUDE.md'}"
    for path, reason in [
        (repo / "loop-a.md", f"imported by {repo / 'loop-b.md'}: an import loop"),
        (repo / "missing.md", f"{imported}: no such file"),
        (repo / "logo.png", "it is a binary file (it holds a NUL byte)"),
        (tmp_path / "elsewhere" / "team.md", f"{imported}: outside {repo}, which needs the folder's trust"),
        (cwd / ".claude" / "CLAUDE.md", "it is a FIFO, not a regular file"),
        (cwd / "CLAUDE.local.md", f"it resolves to {secret}, outside {repo}"),
        (repo / ".claude" / "rules" / "broken.md", "skipped: line 3 of the frontmatter"),
    ]:
        assert f"- {path} (refused: {reason}" in status, (path, status)
        assert str(path) in log
    assert log.count("instructions.refused") >= 7
