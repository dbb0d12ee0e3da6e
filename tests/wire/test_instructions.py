"""AGENTS.md files reach the system prompt the API receives: nested, user-level, capped, stable."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.race import Swapper
from tests.wire.conftest import chunks


def system_of(fake_api: FakeMessagesAPI, index: int = -1) -> str:
    system = fake_api.requests[index].body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def test_nested_and_user_level_instructions_reach_the_system_prompt_and_stay_put(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    (workspace / ".git").mkdir()  # the repository root
    (workspace / "AGENTS.md").write_text("ROOT RULE: run the tests with tox.\n")
    cwd = workspace / "pkg" / "app"
    cwd.mkdir(parents=True)
    (workspace / "pkg" / "CLAUDE.md").write_text("PKG RULE: no new dependencies.\n")
    (cwd / "AGENTS.md").write_text("NESTED RULE: keep app.py small.\n")
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPO: never read.\n")
    user_dir = tmp_path / "home" / ".config" / "acp-agent"  # XDG_CONFIG_HOME/acp-agent
    user_dir.mkdir(parents=True)
    (user_dir / "AGENTS.md").write_text("USER RULE: answer in English.\n")
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(cwd)
    await agent.prompt(session, "hello")
    system = system_of(fake_api)
    order = [system.find(rule) for rule in ("USER RULE", "ROOT RULE", "PKG RULE", "NESTED RULE")]
    assert -1 not in order and order == sorted(order), order  # general first, nearest last
    assert "ABOVE THE REPO" not in system
    for path in (
        user_dir / "AGENTS.md",
        workspace / "AGENTS.md",
        workspace / "pkg" / "CLAUDE.md",
        cwd / "AGENTS.md",
    ):
        assert f"--- {path.resolve()}" in system  # a line naming each file
    # Part of the cached prefix: an edit does not reach the running session...
    (cwd / "AGENTS.md").write_text("CHANGED RULE: split app.py.\n")
    await agent.prompt(session, "again")
    assert system_of(fake_api) == system
    await agent.prompt(session, "/status")
    status = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert str((cwd / "AGENTS.md").resolve()) in status and "(user-level)" in status
    # ...but a loaded (or resumed) session reads them again.
    for method in ("session/load", "session/resume"):
        answer = await agent.request(method, {"sessionId": session, "cwd": str(cwd), "mcpServers": []})
        assert "result" in answer
        await agent.prompt(session, "after " + method)
        assert "CHANGED RULE" in system_of(fake_api) and "NESTED RULE" not in system_of(fake_api)


async def test_instructions_are_capped_and_the_cut_is_noted(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("ROOT RULE\n")
    cwd = workspace / "deep"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("FIRST LINE\n" + "é" * 30_000 + "\nLAST LINE\n")  # ~60 KB
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(cwd)
    await agent.prompt(session, "hello")
    system = system_of(fake_api)
    assert "FIRST LINE" in system and "LAST LINE" not in system and "ROOT RULE" not in system
    # 11 + 60,000 + 11 bytes; the cut falls inside an "é", so the whole characters kept are
    # 11 + 2 * 16,378 bytes.
    assert "(cut at the 32,768-byte cap on instructions: the first 32,767 of 60,022 bytes)" in system
    assert "\ufffd" not in system
    assert f"{(workspace / 'AGENTS.md').resolve()} (left out: the 32,768-byte cap" in system
    assert len(system.encode()) < 32_768 + 6_000  # the rest of the prompt is a few KB


async def test_a_big_agents_md_leaves_the_claude_md_beside_it_whole(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Claude Code reads CLAUDE.md, not AGENTS.md: a 40 KB AGENTS.md took the 32 KiB cap and the
    repository's CLAUDE.md was left out (issue 42 item 4). Claude Code's files now get the room
    first, AGENTS.md what is left; /status names the cut."""
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("AGENTS FIRST LINE\n" + "a" * 40_000 + "\nAGENTS LAST LINE\n")
    (workspace / "CLAUDE.md").write_text("CLAUDE FIRST LINE\n" + "c" * 3_000 + "\nCLAUDE LAST LINE\n")
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace)
    await agent.prompt(session, "hello")
    system = system_of(fake_api)
    assert "CLAUDE FIRST LINE" in system and "CLAUDE LAST LINE" in system
    assert "AGENTS FIRST LINE" in system and "AGENTS LAST LINE" not in system
    assert system.index("AGENTS FIRST LINE") < system.index("CLAUDE FIRST LINE")  # the prompt's order
    await agent.prompt(session, "/status")
    status = "".join(c["content"]["text"] for c in chunks(agent, session))
    agents = (workspace / "AGENTS.md").resolve()
    assert f"- {agents} (cut at the 32,768-byte cap on instructions: the first " in status, status
    assert f"- {(workspace / 'CLAUDE.md').resolve()}: 3,036 bytes" in status, status


# ── issue 29 item 3: a hostile checkout's instruction files ───────────────────────────────────


async def test_links_out_fifos_and_other_users_files_never_reach_the_prompt_and_are_named(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    (workspace / ".git").mkdir()
    secret = tmp_path / "home" / ".ssh" / "id_rsa"  # HOME is tmp_path/home in the agent's env
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- SECRET\n")
    (workspace / "AGENTS.md").symlink_to(secret)
    (workspace / "CLAUDE.md").symlink_to("/proc/self/environ")
    src = workspace / "src"
    os.mkfifo(src / "AGENTS.md")  # opening it without O_NONBLOCK would wait for a writer forever
    (src / "CLAUDE.md").write_text("PLANTED RULE\n")
    os.chown(src / "CLAUDE.md", 12345, 12345)
    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(src)
        response = await agent.prompt(session, "hello", timeout=20)
        assert response["result"]["stopReason"] == "end_turn"
        system = system_of(fake_api)
        assert "SECRET" not in system and "PLANTED" not in system and "ANTHROPIC_API_KEY" not in system
        await agent.prompt(session, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, session))
        assert await agent.new_session(workspace)  # the agent answers what comes next
        agent.send_signal(signal.SIGTERM)
        assert await agent.wait_exit(timeout=10) == 0
        log = agent.stderr_text()
    for path, reason in [
        (workspace / "AGENTS.md", f"it resolves to {secret.resolve()}, outside {workspace.resolve()}"),
        (workspace / "CLAUDE.md", "it resolves to /proc/"),
        (src / "AGENTS.md", "it is a FIFO, not a regular file"),
        (src / "CLAUDE.md", "it is owned by uid 12345"),
    ]:
        assert f"{path} (refused: {reason}" in status, status
        assert str(path) in log and "instructions.refused" in log


async def test_a_fifo_swapped_in_while_the_files_are_read_never_stalls_the_agent(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """AGENTS.md and a FIFO exchange names again and again while sessions read it: each read is a
    refusal or the file, never a wait; later requests are answered and SIGTERM still exits."""
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("REAL RULE\n")
    os.mkfifo(workspace / "pipe")
    fake_api.set_fallback(replies.text("ok"))
    swapper = Swapper(workspace / "AGENTS.md", workspace / "pipe")
    swapper.start()
    try:
        async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            await agent.prompt(session, "first", timeout=20)
            for _ in range(20):  # each resume reads the instructions again, at its first command
                params = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
                assert "result" in await agent.request("session/resume", params, timeout=10)
                response = await agent.prompt(session, "/status", timeout=10)
                assert response["result"]["stopReason"] == "end_turn"
            agent.send_signal(signal.SIGTERM)
            assert await agent.wait_exit(timeout=10) == 0
    finally:
        swapper.stop.set()
        swapper.join(5)
    assert swapper.swaps > 100
