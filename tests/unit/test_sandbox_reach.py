"""What bwrap itself starts with: the agent's two marks as its whole environment, the command's
variables reaching only the command (issue 41 item 1): a real bwrap, its `/proc/<pid>/environ`
and `cmdline` read while it runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from acp_agent.process.lifetime import OWNER
from acp_agent.tools.sandbox.bwrap import Confinement, bwrap_argv, find_bwrap
from acp_agent.tools.shell.local import spawn
from tests.support.sandbox import require_bwrap

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


@linux_only
async def test_bwrap_starts_with_the_marks_only_and_the_command_gets_its_env_inside(tmp_path: Path) -> None:
    """Issue 41 item 1: a settings `env` (here `LD_PRELOAD` of a file that is no library, which
    would make the loader complain in whatever took it) reaches the command and never bwrap."""
    require_bwrap()
    program = find_bwrap()
    assert program is not None
    bogus = tmp_path / "not-a-library.so"
    bogus.write_text("nothing")
    argv = bwrap_argv(
        program,
        ["sh", "-c", 'echo "LD=$LD_PRELOAD MARK=$SETTINGS_MARK"; read line; exit 0'],
        Confinement(cwd=tmp_path, writable=(tmp_path,), network=False),
    )
    env = {"LD_PRELOAD": str(bogus), "SETTINGS_MARK": "secret-value-41"}
    spawned = await spawn(
        argv, tmp_path, env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE, sandboxed=True
    )
    proc = spawned.proc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        with anyio.fail_after(30):
            said = (await proc.stdout.receive()).decode()
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        names = {item.split(b"=", 1)[0].decode() for item in environ if item}
        assert names == {OWNER, "ACP_AGENT_COMMAND"}, environ  # bwrap's own: the marks, nothing else
        assert b"secret-value-41" not in cmdline and b"--setenv" not in cmdline  # nor in its argv
        assert said.strip() == f"LD={bogus} MARK=secret-value-41"
        assert spawned.mark in b"\0".join(environ)  # what stop_command looks for
    finally:
        await proc.stdin.aclose()
        with anyio.fail_after(30):
            await proc.wait()
        errors = (await proc.stderr.receive()).decode() if proc.returncode else ""
        await proc.aclose()
    assert proc.returncode == 0, errors
