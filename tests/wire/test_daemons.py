"""Daemons do not outlive run_command: setsid, a double fork, a Python daemonize and a job in its
own process group are all stopped when the command ends, and the result says so (issue 19, item 9)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.procs import alive

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

COMMAND = (
    "setsid sh -c 'echo SETSID=$$; exec sleep 300' > setsid.out 2>&1 < /dev/null &\n"
    "( setsid sh -c 'sleep 300 & echo DOUBLE=$!' > double.out 2>&1 < /dev/null & )\n"
    "set -m; sleep 300 & echo JOB=$!; set +m\n"
    "nohup sleep 300 > /dev/null 2>&1 & echo NOHUP=$!\n"
    "python3 daemonize.py daemon.pid\n"
    "sleep 0.5; cat setsid.out double.out; echo DAEMON=$(cat daemon.pid)\n"
)


async def test_background_processes_of_every_kind_are_stopped_and_reported(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "daemonize.py").write_text(DAEMONIZE)
    fake_api.script(replies.tool_use("run_command", {"command": COMMAND}, id="toolu_d"), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
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
        pids = {name: int(pid) for name, pid in re.findall(r"^(\w+)=(\d+)$", text, re.MULTILINE)}
        assert set(pids) == {"SETSID", "DOUBLE", "JOB", "NOHUP", "DAEMON"}, text
        survivors = {name: pid for name, pid in pids.items() if alive(pid)}  # the agent still runs
    assert survivors == {}, text
    assert re.search(r"\[stopped [5-9] background process\(es\) still running", text), text
