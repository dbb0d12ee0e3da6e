"""The agent is non-dumpable from start-up (issue 29, items 1 and 2): another process of the same
user cannot read its memory or environment, nor write into its stdin, through /proc.

The agent, a control process (`sleep`) and the observer all run as one unprivileged user: the
test's own, or, when the tests run as root, `nobody` (`setpriv`, with CAP_DAC_READ_SEARCH as its
only capability so that it can reach the interpreter wherever it is installed). The kernel lets the
observer into the control's /proc files and keeps it out of the non-dumpable agent's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.support.agent import AgentProcess
from tests.support.sandbox import need

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")

NOBODY = 65534


def as_user() -> list[str]:
    """A command prefix that runs as one unprivileged user (ours, or nobody when we are root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    need(None if setpriv else "setpriv (util-linux) is not installed, needed to leave root")
    user = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return [str(setpriv), *user, "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


def read_as_observer(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*as_user(), "head", "-c", "64", path], capture_output=True, text=True, timeout=10)


def test_make_undumpable_clears_the_flag_in_the_process_that_calls_it() -> None:
    code = (
        "from acp_agent.process.hardening import is_dumpable, make_undumpable\n"
        "before = is_dumpable(); make_undumpable(); print(before, is_dumpable())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_the_running_agent_is_closed_to_other_processes_of_its_user(
    agent_env: dict[str, str], acp_schema: Any
) -> None:
    prefix = as_user()
    control = subprocess.Popen([*prefix, "sleep", "30"], cwd="/")
    command = [*prefix, sys.executable, "-m", "acp_agent", "--no-journal"]
    try:
        async with AgentProcess.start(command=command, env=agent_env, cwd="/", schema=acp_schema) as agent:
            await agent.initialize()
            owner = os.stat(f"/proc/{agent.pid}/environ").st_uid
            seen = {name: read_as_observer(f"/proc/{agent.pid}/{name}") for name in ("environ", "mem")}
            stdin = subprocess.run(
                [*prefix, "sh", "-c", f"echo '{{}}' > /proc/{agent.pid}/fd/0"], capture_output=True, text=True
            )
        readable = read_as_observer(f"/proc/{control.pid}/environ")
        control_owner = os.stat(f"/proc/{control.pid}/environ").st_uid
    finally:
        control.kill()
        control.wait()
    assert readable.returncode == 0, readable.stderr  # the observer can read a dumpable process
    assert control_owner != 0 and owner == 0  # the kernel gives a non-dumpable process's files to root
    for name, done in seen.items():
        assert done.returncode != 0 and "Permission denied" in done.stderr, (name, done)
    assert stdin.returncode != 0 and "Permission denied" in stdin.stderr, stdin
