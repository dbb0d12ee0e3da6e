"""run_command: a shell command in the editor's terminal, or locally in its own session.

Locally the command is the leader of a new session and carries a mark in its environment that
everything it starts inherits. On timeout, on cancel and when it ends, whatever is left of it is
stopped: its process group, its session (jobs put in other groups), and every process with its
mark (daemons that left the session with `setsid` or a double fork); the result says what was
stopped. A kill -9 of the agent itself cannot do this: a command running then is orphaned.
Output is kept as a capped head and a rolling tail, never whole, and the editor sees at most one
tail-only progress update per interval (docs/decisions.md D6). With the client's `terminal` capability the
editor runs and streams the command; the tool waits, kills on timeout or cancel, and always releases.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.base import (
    Permission,
    Preview,
    Progress,
    TerminalExit,
    TerminalHost,
    ToolContext,
    ToolResult,
)
from acp_agent.tools.paths import resolve_inside
from acp_agent.tools.truncate import cap_text, clip_line

__all__ = ["RunCommand"]

log = structlog.get_logger(__name__)

_NOTE_RESERVE = 64  # bytes kept free for a "[… N bytes cut …]" note
_DRAIN_SECONDS = 1.0  # reading what is left in the pipe once the command is over
_POLL_SECONDS = 0.05  # how often a dying process group is checked (no event exists for it)
_HOST_SECONDS = 5.0  # bound on each terminal/* call made while cleaning up
# Credentials of the agent itself are not handed to the commands the model runs.
_SCRUBBED_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_MARK = "ACP_AGENT_COMMAND"
"""Set to a fresh id in each local command's environment: its descendants inherit it."""
_LISTED = 5  # leftover processes named in the result
# Typed, so that `permission = _EXECUTE` on a class matches the Tool protocol's attribute type.
_EXECUTE: Permission | None = "execute"


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_end(data: bytes | bytearray) -> int:
    """The length of `data` without a last character that was cut in half."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if not _is_continuation(byte):
            need = 4 if byte >= 0xF0 else 3 if byte >= 0xE0 else 2 if byte >= 0xC0 else 1
            return len(data) - back if need > back else len(data)
    return len(data)


def _char_start(data: bytes) -> int:
    """Where the first whole character of `data` starts."""
    start = 0
    while start < min(3, len(data)) and _is_continuation(data[start]):
        start += 1
    return start


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class _Output:
    """A command's output as a capped head and a rolling tail, with a 'something new' event."""

    __slots__ = ("changed", "head", "head_limit", "tail", "tail_limit", "total")

    def __init__(self, cap: int) -> None:
        budget = cap - _NOTE_RESERVE
        self.head_limit = budget // 2
        self.tail_limit = budget - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.changed = anyio.Event()

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches: amortised O(1) per byte
                del self.tail[: -self.tail_limit]
        self.changed.set()

    def _whole(self) -> bool:
        return self.total == len(self.head) + len(self.tail)

    def text(self) -> str:
        """Everything if it fits, else head + "[… N bytes cut …]" + tail."""
        if self._whole() and len(self.tail) <= self.tail_limit:
            return _decode(bytes(self.head + self.tail))
        head = bytes(self.head[: _char_end(self.head)])
        tail = bytes(self.tail[-self.tail_limit :])
        tail = tail[_char_start(tail) :]
        cut = self.total - len(head) - len(tail)
        return f"{_decode(head)}\n[… {cut:,} bytes cut …]\n{_decode(tail)}"

    def recent(self, limit: int) -> str:
        """The last bytes within `limit`, with a note when earlier output is not shown."""
        kept = bytes(self.head + self.tail) if self._whole() else bytes(self.tail)
        if self.total <= limit:
            return _decode(kept)
        part = kept[-(limit - _NOTE_RESERVE) :]
        part = part[_char_start(part) :]
        return f"[… {self.total - len(part):,} earlier bytes not shown …]\n{_decode(part)}"


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _marked(proc_dir: str, mark: bytes) -> bool:
    try:
        with open(os.path.join(proc_dir, "environ"), "rb") as f:
            return mark in f.read().split(b"\0")
    except OSError:  # gone, or another user's process
        return False


def _remains(pgid: int, mark: bytes) -> list[tuple[int, str]]:
    """(pid, name) of every live process of a command: in its group or session, or marked.

    Without /proc only the group can be seen (kill 0); zombies, which no signal reaches, do not
    count.
    """
    if not os.path.exists("/proc/self/stat"):
        return [(pgid, "?")] if _signal_group(pgid, 0) else []
    found = []
    me = os.getpid()
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) < 4 or fields[0] in (b"Z", b"X"):
                continue
            if pgid in (int(fields[2]), int(fields[3])) or _marked(entry.path, mark):
                name = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode("utf-8", "replace")
                found.append((int(entry.name), name))
    return found


def _signal_all(pgid: int, pids: list[tuple[int, str]], sig: int) -> None:
    _signal_group(pgid, sig)
    for pid, _ in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


async def _still_there(pgid: int, mark: bytes) -> list[tuple[int, str]]:
    return await anyio.to_thread.run_sync(_remains, pgid, mark, abandon_on_cancel=True)


async def _wait_gone(pgid: int, mark: bytes, seconds: float) -> list[tuple[int, str]]:
    """What still runs after up to `seconds` (empty once everything is gone)."""
    left = await _still_there(pgid, mark)
    with anyio.move_on_after(seconds):
        # No event tells when a set of processes is gone: polling is the only way to know.
        while left:
            await anyio.sleep(_POLL_SECONDS)
            left = await _still_there(pgid, mark)
    return left


async def _stop_command(pgid: int, mark: bytes, grace: float) -> list[tuple[int, str]]:
    """SIGTERM what is left of a command, SIGKILL what outlives `grace`; returns what was left."""
    left = await _still_there(pgid, mark)
    if not left:
        return []
    _signal_all(pgid, left, signal.SIGTERM)
    remaining = await _wait_gone(pgid, mark, grace)
    if remaining:
        log.debug("shell.sigkill", pgid=pgid, pids=[pid for pid, _ in remaining])
        _signal_all(pgid, remaining, signal.SIGKILL)
        await _wait_gone(pgid, mark, 1.0)
    return left


def _stopped_note(left: list[tuple[int, str]]) -> str:
    named = ", ".join(f"{name} ({pid})" for pid, name in left[:_LISTED])
    more = f" and {len(left) - _LISTED} more" if len(left) > _LISTED else ""
    return (
        f"[stopped {len(left)} background process(es) still running after the command ended: {named}{more}]"
    )


async def _pump(stream: anyio.abc.ByteReceiveStream, out: _Output, eof: anyio.Event) -> None:
    try:
        async for chunk in stream:
            out.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        eof.set()


def _status(exit_code: int | None, sig: str | None) -> str:
    if sig:
        return f"terminated by signal {sig}"
    return f"exit code {exit_code}" if exit_code is not None else "exit code unknown"


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


async def _quietly(step: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """A cleanup call to the editor: bounded, and its failure only logged."""
    try:
        with anyio.move_on_after(_HOST_SECONDS, shield=True):
            return await call()
    except Exception as exc:
        log.warning("shell.terminal_cleanup_failed", step=step, error=str(exc))
    return None


async def _tell_cancelled(ctx: ToolContext, started: float, what: str, output: str) -> None:
    """Say how long the command ran before the cancel and what it printed (not "not executed")."""
    text = f"cancelled after {time.monotonic() - started:.1f} s; {what}\n{output or '(no output)'}"
    await ctx.report(Progress(text=text, cancelled=True))


@dataclass(frozen=True, slots=True)
class RunCommand:
    """Run a shell command and give the model its exit code and (capped) output."""

    max_output_bytes: int = 32 * 1024
    default_timeout: float = 120.0
    max_timeout: float = 600.0
    kill_grace: float = 2.0
    progress_interval: float = 0.25
    progress_tail_bytes: int = 8 * 1024
    terminal_output_limit: int = 1024 * 1024

    name = "run_command"
    kind = "execute"
    permission = _EXECUTE
    description = (
        "Run a shell command with bash -c in the working directory (or in `cwd`, a directory "
        "inside it) and return its exit code and combined stdout and stderr. stdin is empty, so "
        "nothing can prompt for input. `timeout` is in seconds (default 120, at most 600); on "
        "timeout the command and every process it started are killed and the output so far is "
        "returned. Background processes still running when the command ends are stopped, so do "
        "not start servers with '&'. Output over 32 KiB keeps its first and last 16 KiB with a "
        "note saying how much was cut. A non-zero exit code is reported, not treated as an error."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "Shell command line."},
            "cwd": {
                "type": "string",
                "description": "Directory to run in, relative to the cwd; default '.'.",
            },
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": 600,
                "description": "Seconds before the command is killed; default 120.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return "Run command"
        lines = command.strip().splitlines()
        shown = clip_line(lines[0], 60) + (" …" if len(lines) > 1 else "")
        return f"Run `{shown}`"

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The command line and the directory it would run in, for the permission question."""
        shown_cwd = str(args.get("cwd") or ".")
        try:
            cwd = str(resolve_inside(ctx.roots, shown_cwd))
        except ToolError:
            cwd = shown_cwd  # the run will refuse it and say why
        return Preview(text=f"{args.get('command', '')}\n\nin {cwd}")

    def time_allowance(self, args: dict[str, Any]) -> float:
        """How long a caller should let `run` take: the command's timeout plus its cleanup."""
        return self._timeout(args) + self.kill_grace + _DRAIN_SECONDS + 3 * _HOST_SECONDS

    def _timeout(self, args: dict[str, Any]) -> float:
        value = args.get("timeout")
        if value is None:
            return self.default_timeout
        return min(max(float(value), 0.001), self.max_timeout)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        if not command.strip():
            raise ToolError("command must not be empty")
        shown_cwd = str(args.get("cwd") or ".")
        cwd = resolve_inside(ctx.roots, shown_cwd)
        if not cwd.is_dir():
            raise ToolError(
                f"cwd {shown_cwd!r} is not a directory"
                if cwd.exists()
                else f"no such directory: {shown_cwd!r}"
            )
        timeout = self._timeout(args)
        if ctx.terminal is not None:
            return await self._in_terminal(ctx.terminal, command, cwd, timeout, ctx)
        return await self._locally(command, cwd, timeout, ctx)

    # ── local process group ──────────────────────────────────────────────────────────────────

    async def _locally(self, command: str, cwd: Path, timeout: float, ctx: ToolContext) -> ToolResult:
        mark_id = secrets.token_hex(8)
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV} | {_MARK: mark_id}
        mark = f"{_MARK}={mark_id}".encode()
        try:
            proc = await anyio.open_process(
                [_shell(), "-c", command],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"cannot start the command: {exc.strerror or exc}") from exc
        log.debug("shell.started", pid=proc.pid)
        started = time.monotonic()
        out, eof = _Output(self.max_output_bytes), anyio.Event()
        assert proc.stdout is not None
        left: list[tuple[int, str]] = []
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_pump, proc.stdout, out, eof)
                tg.start_soon(self._report_progress, out, ctx)
                with anyio.move_on_after(timeout) as limit:
                    await proc.wait()
                left = await _stop_command(proc.pid, mark, self.kill_grace)  # it, or its leftovers
                with anyio.move_on_after(_DRAIN_SECONDS):
                    await eof.wait()
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(self.kill_grace + 2.0, shield=True):
                await _stop_command(proc.pid, mark, self.kill_grace)
                await _tell_cancelled(ctx, started, "the process group was killed", out.text())
            raise
        finally:
            with anyio.move_on_after(self.kill_grace + 2.0, shield=True):
                await _stop_command(proc.pid, mark, self.kill_grace)
                await proc.aclose()
        if left and not limit.cancelled_caught:
            log.info("shell.leftovers_stopped", count=len(left))
        result = self._local_result(out, proc.returncode, limit.cancelled_caught, timeout)
        if left and not limit.cancelled_caught:
            result = replace(
                result,
                text=f"{result.text}\n{_stopped_note(left)}",
                raw_output={**(result.raw_output or {}), "stoppedLeftovers": len(left)},
            )
        return result

    async def _report_progress(self, out: _Output, ctx: ToolContext) -> None:
        """At most one tail-only update per interval, and only when there is something new."""
        while True:
            await out.changed.wait()
            out.changed = anyio.Event()
            progress = Progress(text=out.recent(self.progress_tail_bytes))
            try:
                with anyio.move_on_after(2.0, shield=True):  # never cut a message in half
                    await ctx.report(progress)
            except Exception as exc:  # progress is cosmetic: the command goes on
                log.debug("shell.progress_failed", error=str(exc))
            await anyio.sleep(self.progress_interval)

    def _local_result(
        self, out: _Output, returncode: int | None, timed_out: bool, timeout: float
    ) -> ToolResult:
        output = out.text()
        if len(output.encode("utf-8", "replace")) > self.max_output_bytes:
            output = cap_text(output, self.max_output_bytes)  # replacement chars can grow it
        sig = _signal_name(returncode) if returncode is not None and returncode < 0 else None
        if timed_out:
            status = f"timed out after {timeout:g}s; process group killed"
        else:
            status = _status(returncode, sig)
        raw = {
            "exitCode": None if timed_out or sig else returncode,
            "signal": sig,
            "timedOut": timed_out,
            "outputBytes": out.total,
            "truncated": out.total > len(out.head) + len(out.tail),
        }
        return ToolResult(text=f"{status}\n{output or '(no output)'}", is_error=timed_out, raw_output=raw)

    # ── the editor's terminal ────────────────────────────────────────────────────────────────

    async def _in_terminal(
        self, term: TerminalHost, command: str, cwd: Path, timeout: float, ctx: ToolContext
    ) -> ToolResult:
        terminal_id = await term.create(_shell(), ["-c", command], cwd, self.terminal_output_limit)
        log.debug("shell.terminal_created", terminal_id=terminal_id)
        started = time.monotonic()
        finished = False
        try:
            try:
                with anyio.move_on_after(2.0, shield=True):
                    await ctx.report(Progress(terminal_id=terminal_id))
            except Exception as exc:  # the editor still runs it; only the live view is lost
                log.warning("shell.embed_failed", error=str(exc))
            status: TerminalExit | None = None
            with anyio.move_on_after(timeout) as limit:
                status = await term.wait_for_exit(terminal_id)
            if limit.cancelled_caught:
                await _quietly("kill", lambda: term.kill(terminal_id))
            try:
                with anyio.fail_after(_HOST_SECONDS):
                    result = await term.output(terminal_id)
            except TimeoutError:
                raise ToolError(
                    f"the editor did not answer terminal/output within {_HOST_SECONDS:g} s"
                ) from None
            finished = True
        except anyio.get_cancelled_exc_class():
            await _quietly("kill", lambda: term.kill(terminal_id))
            so_far = await _quietly("output", lambda: term.output(terminal_id))
            await _quietly(
                "report",
                lambda: _tell_cancelled(
                    ctx,
                    started,
                    "the command was killed",
                    cap_text(so_far.output, self.max_output_bytes) if so_far else "",
                ),
            )
            finished = True  # killed and read already
            raise
        finally:
            if not finished:  # failed: the command may still be running
                await _quietly("kill", lambda: term.kill(terminal_id))
                await _quietly("output", lambda: term.output(terminal_id))
            await _quietly("release", lambda: term.release(terminal_id))
        timed_out = limit.cancelled_caught
        output = cap_text(result.output, self.max_output_bytes) if result.output else ""
        if result.truncated:
            output = f"[earlier output dropped: the editor kept only the last part]\n{output}"
        exit_ = status or result.exit
        if timed_out:
            text = f"timed out after {timeout:g}s; the command was killed"
        else:
            text = _status(exit_.exit_code if exit_ else None, exit_.signal if exit_ else None)
        raw = {
            "exitCode": None if timed_out or exit_ is None else exit_.exit_code,
            "signal": None if exit_ is None else exit_.signal,
            "timedOut": timed_out,
            "truncated": result.truncated,
        }
        return ToolResult(
            text=f"{text}\n{output or '(no output)'}",
            is_error=timed_out,
            raw_output=raw,
            terminal_id=terminal_id,
        )
