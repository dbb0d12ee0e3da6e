"""A kill -9 of the agent ends what it started (issue 35, item 11): a command it was running,
sandboxed or not, with its jobs and the daemons it detached with `setsid`; an MCP server's own
children; a search's rg. And a kill -9 of the harness ends the agent and the fake model it
started. Stdin EOF and SIGTERM were clean already (`test_shutdown.py`)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
from pathlib import Path
from subprocess import DEVNULL
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.client import allow, prompt_until_killed
from tests.support.procs import alive, children, gone, marked_sleep, running, running_with, started, strays
from tests.support.sandbox import require_bwrap
from tests.support.waits import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_command_running_when_the_agent_is_killed_dies_with_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, sandbox: str
) -> None:
    boxed = sandbox == "auto"
    if boxed:
        require_bwrap()
    token = f"loop-{secrets.token_hex(6)}"
    detached, job, unmarked = marked_sleep(), marked_sleep(), marked_sleep()
    command = (
        f"setsid {detached} > /dev/null 2>&1 < /dev/null &\n"
        f"{job} &\n"
        # Sandboxed, even a daemon that cleared its environment dies (with the PID namespace).
        + (f"env -i PATH=/usr/bin:/bin setsid {unmarked} > /dev/null 2>&1 < /dev/null &\n" if boxed else "")
        + f"while :; do sleep 0.05; done  # {token}\n"
    )
    fake_api.script(replies.tool_use("run_command", {"command": command}, id="toolu_loop"))
    env = {**agent_env, "ACP_AGENT_SANDBOX": sandbox}

    def mine() -> list[int]:  # the shell (and bwrap, whose argv holds the script) and its sleeps
        return [*running_with(token), *running(detached), *running(job), *running(unmarked)]

    async with (
        strays(mine),
        AgentProcess.start(env=env, schema=acp_schema, on_request=allow, check_on_exit=False) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_killed, agent, session)
            for sleep in [detached, job, *([unmarked] if boxed else [])]:
                await started(sleep)
            await wait_until(lambda: running_with(token), "the loop's shell to run")
            pids = mine()
            os.kill(agent.pid, signal.SIGKILL)
        await gone(pids)
    assert len(pids) >= (6 if boxed else 3)  # the loop's shell and its sleeps (and two bwraps)


@pytest.mark.model_free
async def test_an_mcp_servers_children_die_with_a_killed_agent(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    child = marked_sleep()
    server = {  # a shell that leaves a child behind, then becomes the server (which ends on EOF)
        "name": "demo",
        "command": "/bin/sh",
        "args": ["-c", f'{child} & exec "$0" "$1"', sys.executable, str(SERVER)],
        "env": [],
    }
    async with (
        strays(lambda: running(child)),
        AgentProcess.start(env=agent_env, schema=acp_schema, check_on_exit=False) as agent,
    ):
        await agent.initialize()
        await agent.new_session(workspace, mcp_servers=[server])
        pids = await started(child)
        os.kill(agent.pid, signal.SIGKILL)
        await gone(pids)


async def test_a_search_running_when_the_agent_is_killed_dies_with_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    hung = marked_sleep()
    rg = tmp_path / "rg"  # an rg that hangs, and whose child would outlive even the agent's kill of it
    rg.write_text(f"#!/bin/sh\n{hung} &\nwait\n")
    rg.chmod(0o755)
    fake_api.script(replies.tool_use("search_text", {"pattern": "greet"}, id="toolu_rg"))
    env = {**agent_env, "ACP_AGENT_RIPGREP": str(rg)}
    async with (
        strays(lambda: running(hung)),
        AgentProcess.start(env=env, schema=acp_schema, check_on_exit=False) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_killed, agent, session)
            pids = await started(hung)
            os.kill(agent.pid, signal.SIGKILL)
        await gone([*pids, *running(hung)])


async def test_a_killed_harness_leaves_neither_its_agent_nor_its_fake_model(tmp_path: Path) -> None:
    agent = marked_sleep()  # an agent that ignores the EOF on its stdin (ours ends there)
    script = tmp_path / "script.jsonl"
    steps = [{"op": "model", "fake": "acp_agent.testing", "reply": "text"}, {"op": "wait", "seconds": 300}]
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    command = [sys.executable, "-m", "acp_agent.harness.script", str(script), "--agent", agent]
    pids: list[int] = []
    async with strays(lambda: [pid for pid in pids if alive(pid)]):
        harness = await anyio.open_process(
            command, env=base_env(tmp_path), cwd=tmp_path, stdout=DEVNULL, stderr=DEVNULL
        )
        async with harness:
            [agent_pid] = await started(agent)
            pids = children(harness.pid)  # the fake (started first), the agent, the harness's warden
            os.kill(harness.pid, signal.SIGKILL)
        await gone(pids)
        assert agent_pid in pids and len(pids) >= 2
