"""One hook command run: its JSON on stdin, its output capped, its time bounded, its leftovers stopped.

A hook runs in the session's sandbox where there is one (`tools/sandbox/command_sandbox.py`),
without the agent's API key in its environment, as the leader of a new session whose every
process carries a mark (`process/lifetime.py`: it dies with the agent, a kill -9 included),
stopped with all it started when it ends, times out or the turn is cancelled
(`tools/shell/process_group.py`). The user's own hooks are the user's code: they see the whole
disk as the user has it, writable, but the agent's state and key (`whole`). A project's hooks
(run once the folder is trusted) are the repository's: they get the model's commands' sandbox
(the roots writable, a private `/tmp`), with what their command line names (an interpreter, a
script in `/tmp`) reachable read-only.

A hook that cannot start for a reason of ours (it names a path the sandbox hides or keeps
private, or bwrap itself fails) says so (`HookProcess.ours`): a PreToolUse hook's call is then
blocked with that reason, never let through as if no hook existed (`hook_payloads.read_answer`).

Its stdout and stderr are read apart, each up to `MAX_OUTPUT_BYTES`; the rest is read and dropped,
so a hook that writes 100 MB neither fills the agent's memory nor blocks on a full pipe.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox
from acp_agent.tools.shell.local import spawn
from acp_agent.tools.shell.output import bwrap_error
from acp_agent.tools.shell.process_group import stop_command

__all__ = ["MAX_OUTPUT_BYTES", "HookProcess", "run_hook_process"]

log = structlog.get_logger(__name__)

MAX_OUTPUT_BYTES = 1 << 20
"""What is kept of a hook's stdout, and of its stderr."""
KILL_GRACE = 1.0
DRAIN_SECONDS = 1.0
"""Reading what is left in the pipes once the hook is over."""


@dataclass(frozen=True, slots=True)
class HookProcess:
    """How a hook run ended: its exit code (None: it never started, or was stopped), what it
    printed (capped), how many bytes it wrote in all, and why it failed to give an answer."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    error: str | None = None
    """It could not start (`error`), or timed out."""
    output_bytes: int = 0
    ours: bool = False
    """It could not start for a reason of the agent's, not the hook's: its sandbox (`error` says)."""


class _Capped:
    __slots__ = ("data", "eof", "total")

    def __init__(self) -> None:
        self.data = bytearray()
        self.total = 0
        self.eof = anyio.Event()

    async def read(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            async for chunk in stream:
                self.total += len(chunk)
                room = MAX_OUTPUT_BYTES - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            self.eof.set()

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


async def _feed(stream: anyio.abc.ByteSendStream, data: bytes) -> None:
    """Write the hook's input and close its stdin; a hook that does not read it is no error."""
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        with contextlib.suppress(anyio.BrokenResourceError, OSError):
            await stream.aclose()


async def run_hook_process(
    command: str,
    args: Sequence[str] | None,
    *,
    stdin: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    sandbox: CommandSandbox | None,
    roots: Sequence[Path],
    users: bool = False,
) -> HookProcess:
    """Run one hook: `command` through bash, or exec'd with `args` (Claude Code's exec form);
    `env` is added to the agent's environment (less its key), inside the sandbox: bwrap itself
    starts with a fixed environment (`bwrap.launch`). `users`: the hook is the user's own (see
    the module doc)."""
    argv = [command, *args] if args is not None else [_shell(), "-c", command]
    sandboxed = False
    if sandbox is not None:
        names = (command, *args) if args is not None else command
        wrapped = await sandbox.wrap(argv, cwd=cwd, roots=roots, names=names, whole=users)
        if wrapped.unreachable is not None:
            return HookProcess(
                None, error=f"cannot start in the sandbox: it names {wrapped.unreachable}", ours=True
            )
        argv, sandboxed = wrapped.argv, wrapped.confinement is not None
    started = time.monotonic()
    try:
        spawned = await spawn(
            argv, cwd, env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE, sandboxed=sandboxed
        )
    except ToolError as exc:
        return HookProcess(None, error=f"could not start: {exc}", ours=sandboxed)
    proc, mark = spawned.proc, spawned.mark
    out, err = _Capped(), _Capped()
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stopped = False
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_feed, proc.stdin, stdin)
            group.start_soon(out.read, proc.stdout)
            group.start_soon(err.read, proc.stderr)
            with anyio.move_on_after(timeout) as limit:
                await proc.wait()
            await stop_command(proc.pid, mark, KILL_GRACE)  # what it left running
            stopped = True
            with anyio.move_on_after(DRAIN_SECONDS):
                await out.eof.wait()
                await err.eof.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(KILL_GRACE + 2.0, shield=True):
            if not stopped:  # a cancel: stop it and all it started
                await stop_command(proc.pid, mark, KILL_GRACE)
            await proc.aclose()
    seconds = time.monotonic() - started
    total = out.total + err.total
    if limit.cancelled_caught:
        return HookProcess(
            None, out.text(), err.text(), seconds, True, f"timed out after {timeout:g} s", total
        )
    if sandboxed and not out.data and (failed := bwrap_error(proc.returncode, err.text())) is not None:
        return HookProcess(
            None, "", err.text(), seconds, error=f"the sandbox could not start: {failed}", ours=True
        )
    return HookProcess(proc.returncode, out.text(), err.text(), seconds, output_bytes=total)
