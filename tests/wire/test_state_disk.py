"""`session/new` on a state disk that is full, read-only or gone: -32010 naming the state dir, no
journal left behind, no session kept (issue 29, item 14).

The tests run as root, which ignores permission bits, so a `chmod` proves nothing. The disk is made
full or read-only for real, inside the agent's own mount namespace (`unshare -m`): a 16 KiB tmpfs
filled to the last page gives ENOSPC, and a bind mount remounted read-only (with `nsenter`, after
the agent checked its state dir at start-up) gives EROFS. Nothing outside that namespace changes.
Where mount namespaces cannot be had, those two tests say so and skip; the third (the state dir
replaced by a file after start-up: ENOTDIR) runs everywhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.errors import JOURNAL_ERROR
from acp_agent.testing import FakeMessagesAPI
from tests.support import base_env
from tests.support.agent import AgentProcess


def _mount_namespaces() -> str | None:
    """Why mount namespaces cannot be used here, or None when they can."""
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        return "needs unshare and nsenter (util-linux)"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"], capture_output=True, timeout=10
    )
    if probe.returncode != 0:
        return f"cannot mount in a new mount namespace: {probe.stderr.decode(errors='replace').strip()}"
    return None


NO_NAMESPACES = _mount_namespaces()
needs_namespaces = pytest.mark.skipif(
    NO_NAMESPACES is not None, reason=f"a real full or read-only disk {NO_NAMESPACES}"
)


def agent_env(tmp_path: Path, api: FakeMessagesAPI, state: Path) -> dict[str, str]:
    return base_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=api.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STATE_DIR=str(state),
    )


def in_namespace(setup: str) -> list[str]:
    """The agent's command, started in its own mount namespace after `setup` (a shell line)."""
    return ["unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh", sys.executable, "-m", "acp_agent"]


def seen_by(agent: AgentProcess, path: Path) -> Path:
    """`path` as the agent sees it (inside its mount namespace)."""
    return Path(f"/proc/{agent.pid}/root{path}")


async def refused(agent: AgentProcess, workspace: Path, state: Path) -> dict[str, Any]:
    """A `session/new` that must fail with -32010 naming the state dir; its error."""
    answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    error = answer.get("error")
    assert error is not None and error["code"] == JOURNAL_ERROR, answer
    assert str(state) in error["message"], error
    assert error["data"]["stateDir"] == str(state)
    assert "Traceback" not in agent.stderr_text()
    return dict(error)


async def nothing_kept(agent: AgentProcess, state: Path) -> None:
    """No journal left in the state dir, no session listed."""
    assert not [p.name for p in state.iterdir() if p.name.endswith(".jsonl")]
    listed = await agent.request("session/list", {})
    assert listed["result"]["sessions"] == [], listed


@needs_namespaces
async def test_session_new_on_a_full_state_disk_is_32010_and_leaves_no_journal(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    fill = f"dd if=/dev/zero of={state}/fill bs=4096 count=4 2>/dev/null"
    command = in_namespace(f"mount -t tmpfs -o size=16k,mode=0700 tmpfs {state} && {fill}")
    env = agent_env(tmp_path, fake_api, state)
    async with AgentProcess.start(command=command, env=env, schema=acp_schema) as agent:
        assert (await agent.initialize())["agentCapabilities"]["loadSession"] is True
        inside = seen_by(agent, state)
        error = await refused(agent, workspace, state)
        assert "the disk is full" in error["message"]
        await nothing_kept(agent, inside)
        (inside / "fill").unlink()  # space is freed: the next session/new works
        session = await agent.new_session(workspace)
        assert (inside / f"{session}.jsonl").stat().st_size > 0
        assert [s["sessionId"] for s in (await agent.request("session/list", {}))["result"]["sessions"]] == [
            session
        ]
    assert not list(state.iterdir())  # the tmpfs was the agent's alone


@needs_namespaces
async def test_session_new_on_a_read_only_state_disk_is_32010_and_leaves_nothing(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    command = in_namespace(f"mount --bind {state} {state}")
    env = agent_env(tmp_path, fake_api, state)
    async with AgentProcess.start(command=command, env=env, schema=acp_schema) as agent:
        await agent.initialize()
        first = await agent.new_session(workspace)  # the disk was writable at start-up
        kept = sorted(p.name for p in state.iterdir())  # its journal, and the local-settings record
        assert f"{first}.jsonl" in kept
        remount = ["nsenter", "-t", str(agent.pid), "-m", "mount", "-o", "remount,bind,ro", str(state)]
        subprocess.run(remount, check=True, capture_output=True, timeout=10)
        error = await refused(agent, workspace, state)
        assert "Read-only file system" in error["message"]
        assert sorted(p.name for p in state.iterdir()) == kept
        listed = await agent.request("session/list", {})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [first]


async def test_session_new_when_the_state_dir_became_a_file_is_32010_and_registers_nothing(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    state = tmp_path / "state"
    env = agent_env(tmp_path, fake_api, state)
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        state.rmdir()  # made empty at start-up; now a regular file sits in its place
        state.write_text("not a directory")
        error = await refused(agent, workspace, state)
        assert "Not a directory" in error["message"]
        assert "session.created" not in agent.stderr_text()
        os.remove(state)
        state.mkdir(mode=0o700)
        session = await agent.new_session(workspace)
        assert (state / f"{session}.jsonl").is_file()
