"""A shell command run here, as the leader of its own session, stopped with all it started.

The command carries a mark in its environment that everything it starts inherits; on timeout, on
cancel and when it ends, whatever is left of it is stopped (`process_group.py`) and the result says
what was stopped. Should the agent itself be killed (kill -9), its warden stops it all instead
(`process/lifetime.py`: the environment also carries the agent's own mark). A sandboxed command
(`tools/sandbox/command_sandbox.py`) is started the same way, its argv beginning with bwrap.
The editor sees at most one tail-only progress update per interval (docs/decisions.md D6).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import anyio
import anyio.abc
import structlog

from acp_agent.errors import ToolError
from acp_agent.process.lifetime import OWNER, owned_env
from acp_agent.tools.base import Progress, ToolContext, ToolResult
from acp_agent.tools.sandbox.bwrap import launch
from acp_agent.tools.shell.output import CommandOutput, exit_status, tell_cancelled
from acp_agent.tools.shell.process_group import stop_command, stopped_note
from acp_agent.tools.truncate import cap_text

__all__ = [
    "DRAIN_SECONDS",
    "LocalCommand",
    "Spawned",
    "own_leftovers",
    "pump",
    "report_tail",
    "signal_name",
    "spawn",
]

log = structlog.get_logger(__name__)

DRAIN_SECONDS = 1.0
"""Reading what is left in the pipe once the command is over."""
# Credentials of the agent itself are not handed to the commands the model runs.
_SCRUBBED_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_MARK = "ACP_AGENT_COMMAND"
"""Set to a fresh id in each local command's environment: its descendants inherit it."""


async def pump(stream: anyio.abc.ByteReceiveStream, add: Callable[[bytes], None], eof: anyio.Event) -> None:
    """Hand each chunk a command prints to `add`, and set `eof` when its pipe closes."""
    try:
        async for chunk in stream:
            add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        eof.set()


def signal_name(returncode: int) -> str | None:
    """The signal that ended a process (a negative return code), or None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def own_leftovers(left: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A sandboxed command's leftovers without bwrap, the PID namespace's init, which waits for
    them: it is stopped with them but is not one of the command's own."""
    return [(pid, name) for pid, name in left if name != "bwrap"]


@dataclass(frozen=True, slots=True)
class Spawned:
    """A local command started as the leader of its own session, and the mark in its environment
    that everything it starts inherits (what `process_group.py` looks for)."""

    proc: anyio.abc.Process
    mark: bytes

    async def stop(self, grace: float) -> list[tuple[int, str]]:
        """Stop the command and all it started (SIGTERM, SIGKILL past `grace`); what was left."""
        return await stop_command(self.proc.pid, self.mark, grace)


async def spawn(
    argv: list[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    stdin: int = subprocess.DEVNULL,
    stderr: int = subprocess.STDOUT,
    sandboxed: bool = False,
) -> Spawned:
    """Start `argv` in `cwd` with empty stdin, stdout and stderr on one pipe (or the `stdin` and
    `stderr` given: a hook's are pipes of their own), as the leader of a new session, marked (its
    own mark, and the agent's for the warden); without the agent's key, with `env` added.

    `sandboxed`: `argv` starts bwrap (`CommandSandbox.wrap`), which then gets the two marks as its
    whole environment, and the command inside gets the rest (`bwrap.launch`): no variable of a
    settings file's `env` ever reaches bwrap's own loader.

    Raises:
        ToolError: it could not be started (no such program, a bad cwd).
    """
    mark_id = secrets.token_hex(8)
    own = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    full = owned_env(own | _settable(env or {}) | {_MARK: mark_id})
    started: list[str] = argv
    passed: tuple[int, ...] = ()
    if sandboxed:
        try:
            launched = launch(argv, full, keep=(OWNER, _MARK))
        except OSError as exc:
            raise ToolError(f"cannot start the sandbox: {exc.strerror or exc}") from exc
        started, full, passed = launched.argv, launched.env, (launched.fd,)
    try:
        # Shielded: a cancel mid-spawn would leave a started process and its pipe behind. The
        # cancel then lands at the next await, where the process is stopped like any other.
        with anyio.CancelScope(shield=True):
            proc = await anyio.open_process(
                started,
                cwd=cwd,
                env=full,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                pass_fds=passed,
            )
    except OSError as exc:
        raise ToolError(f"cannot start the command: {exc.strerror or exc}") from exc
    finally:
        for fd in passed:
            os.close(fd)
    log.debug("shell.started", pid=proc.pid)
    return Spawned(proc, f"{_MARK}={mark_id}".encode())


def _settable(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without what no environment can hold (a name with `=`, a NUL: a settings file's
    `env` may say anything), which would stop the start with a ValueError."""
    kept = {k: v for k, v in env.items() if k and "=" not in k and "\0" not in k and "\0" not in v}
    if len(kept) < len(env):
        log.warning("shell.env_skipped", names=[k[:40] for k in env if k not in kept])
    return kept


async def report_tail(
    out: CommandOutput,
    report: Callable[[Progress], Awaitable[None]],
    interval: float,
    tail_bytes: int,
    heading: Callable[[], str] | None = None,
) -> None:
    """At most one tail-only update per `interval`, and only when there is something new (D6);
    `heading` is a first line above the tail (a background command's state)."""
    while True:
        await out.changed.wait()
        out.changed = anyio.Event()
        tail = out.recent(tail_bytes)
        progress = Progress(text=f"{heading()}\n{tail}" if heading is not None else tail)
        try:
            with anyio.move_on_after(2.0, shield=True):  # never cut a message in half
                await report(progress)
        except Exception as exc:  # progress is cosmetic: the command goes on
            log.debug("shell.progress_failed", error=str(exc))
        await anyio.sleep(interval)


@dataclass(frozen=True, slots=True)
class LocalCommand:
    """How a local run is capped and reported (the fields of `RunCommand` of the same names)."""

    max_output_bytes: int
    kill_grace: float
    progress_interval: float
    progress_tail_bytes: int

    async def run(
        self, argv: list[str], cwd: Path, timeout: float, ctx: ToolContext, *, sandboxed: bool = False
    ) -> ToolResult:
        """Run `argv` in `cwd` until it ends or `timeout`; stop all it left behind.

        `sandboxed`: argv starts bwrap, whose own process (the PID namespace's init) waits for
        the leftovers; it is stopped with them but is not one of the command's own.
        """
        spawned = await spawn(argv, cwd, sandboxed=sandboxed)
        proc = spawned.proc
        started = time.monotonic()
        out, eof = CommandOutput(self.max_output_bytes), anyio.Event()
        assert proc.stdout is not None
        left: list[tuple[int, str]] = []
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump, proc.stdout, out.add, eof)
                tg.start_soon(report_tail, out, ctx.report, self.progress_interval, self.progress_tail_bytes)
                with anyio.move_on_after(timeout) as limit:
                    await proc.wait()
                left = await spawned.stop(self.kill_grace)  # it, or its leftovers
                with anyio.move_on_after(DRAIN_SECONDS):
                    await eof.wait()
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(self.kill_grace + 2.0, shield=True):
                await spawned.stop(self.kill_grace)
                await tell_cancelled(ctx, started, "the process group was killed", out.text())
            raise
        finally:
            with anyio.move_on_after(self.kill_grace + 2.0, shield=True):
                await spawned.stop(self.kill_grace)
                await proc.aclose()
        if sandboxed:
            left = own_leftovers(left)
        if left and not limit.cancelled_caught:
            log.info("shell.leftovers_stopped", count=len(left))
        result = self._result(out, proc.returncode, limit.cancelled_caught, timeout)
        if left and not limit.cancelled_caught:
            result = replace(
                result,
                text=f"{result.text}\n{stopped_note(left)}",
                raw_output={**(result.raw_output or {}), "stoppedLeftovers": len(left)},
            )
        return result

    def _result(
        self, out: CommandOutput, returncode: int | None, timed_out: bool, timeout: float
    ) -> ToolResult:
        output = out.text()
        if len(output.encode("utf-8", "replace")) > self.max_output_bytes:
            output = cap_text(output, self.max_output_bytes)  # replacement chars can grow it
        sig = signal_name(returncode) if returncode is not None else None
        if timed_out:
            status = f"timed out after {timeout:g}s; process group killed"
        else:
            status = exit_status(returncode, sig)
        raw = {
            "exitCode": None if timed_out or sig else returncode,
            "signal": sig,
            "timedOut": timed_out,
            "outputBytes": out.total,
            "truncated": out.total > len(out.head) + len(out.tail),
        }
        return ToolResult(text=f"{status}\n{output or '(no output)'}", is_error=timed_out, raw_output=raw)
