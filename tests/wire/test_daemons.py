"""Daemons do not outlive run_command: setsid, a double fork, a Python daemonize and a job in its
own process group are all stopped when the command ends, and the result says so (issue 19, item 9),
sandboxed or not (issue 29)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.procs import marked_sleep, running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

DAEMONIZE = (
    "import os, sys, time\n"
    "if os.fork(): sys.exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit(0)\n"
    "for fd in (0, 1, 2): os.close(fd)\n"
    "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
    "time.sleep(300)\n"
)


def command(sleeps: dict[str, str], daemon: str) -> str:
    """Each kind of daemon, each with a command line of its own (a sandboxed `$!` is no use here)."""
    return (
        f"setsid sh -c 'echo SETSID=$$; exec {sleeps['SETSID']}' > setsid.out 2>&1 < /dev/null &\n"
        f"( setsid sh -c '{sleeps['DOUBLE']} & echo DOUBLE=$!' > double.out 2>&1 < /dev/null & )\n"
        f"set -m; {sleeps['JOB']} & echo JOB=$!; set +m\n"
        f"nohup {sleeps['NOHUP']} > /dev/null 2>&1 & echo NOHUP=$!\n"
        f"{daemon}\n"
        # Until the detached ones have said who they are (a fixed `sleep 0.5` could lose that race on a
        # loaded box); 30 s at most.
        "for _ in $(seq 300); do [ -s setsid.out ] && [ -s double.out ] && [ -s daemon.pid ] && break; "
        "sleep 0.1; done\n"
        "cat setsid.out double.out; echo DAEMON=$(cat daemon.pid)\n"
    )


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_background_processes_of_every_kind_are_stopped_and_reported(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, sandbox: str
) -> None:
    (workspace / "daemonize.py").write_text(DAEMONIZE)
    sleeps = {name: marked_sleep() for name in ("SETSID", "DOUBLE", "JOB", "NOHUP")}
    daemon = f"python3 daemonize.py daemon.pid {marked_sleep().split()[1]}"
    fake_api.script(
        replies.tool_use("run_command", {"command": command(sleeps, daemon)}, id="toolu_d"),
        replies.text("done"),
    )
    env = {**agent_env, "ACP_AGENT_SANDBOX": sandbox}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "start some daemons")
        assert response["result"]["stopReason"] == "end_turn", response
        result = next(
            b
            for m in fake_api.requests[-1].body["messages"]
            for b in m["content"]
            if b.get("tool_use_id") == "toolu_d"
        )
        text = str(result["content"])
        started = set(re.findall(r"^(\w+)=\d+$", text, re.MULTILINE))
        assert started == {"SETSID", "DOUBLE", "JOB", "NOHUP", "DAEMON"}, text
        survivors = [line for line in [*sleeps.values(), daemon] if running(line)]  # the agent still runs
    assert survivors == [], text
    assert re.search(r"\[stopped [5-9] background process\(es\) still running", text), text
    assert "bwrap" not in text.split("[stopped", 1)[1]  # the sandbox's own init is not the command's
