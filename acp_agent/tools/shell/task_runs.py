"""The two ways a background command runs, as run_command's foreground commands do: here, as the
leader of its own session (`LocalRun`), or in the editor's terminal (`TerminalRun`).

Each is watched in the session's task group until the command ends, is stopped, or the session
ends; then whatever it left is stopped (its process group and its marked processes here, the
terminal killed and released there). Each keeps the output the model has not read yet: here a
capped head and tail in memory (and the whole, capped, in the spool); there, the editor's
terminal, which caps what it keeps itself (`outputByteLimit`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import anyio
import structlog

from acp_agent.tools.base import Progress, TerminalExit, TerminalHost, TerminalOutput
from acp_agent.tools.shell.local import DRAIN_SECONDS, Spawned, pump, report_tail, signal_name
from acp_agent.tools.shell.output import CommandOutput
from acp_agent.tools.shell.spool import Spool
from acp_agent.tools.truncate import cap_text

__all__ = ["LocalRun", "RunLimits", "TaskRun", "TerminalRun", "Unread"]

log = structlog.get_logger(__name__)

TERMINAL_CLEANUP_SECONDS = 2.0
"""Bound on killing and releasing an editor's terminal once its task ends (an editor that is gone,
at the agent's exit, must not hold the exit up)."""
_SEEN_CHARS = 512
"""How much of what was read last is looked for in an editor's output that dropped its start."""


@dataclass(frozen=True, slots=True)
class RunLimits:
    """How a background command is capped and shown (`tasks.py:TaskLimits` holds the values)."""

    max_output_bytes: int
    kill_grace: float
    progress_interval: float
    progress_tail_bytes: int


@dataclass(frozen=True, slots=True)
class Unread:
    """The output since the last read: `text` capped (head and tail), `size` in bytes when known."""

    text: str
    size: int | None
    cut: bool


class TaskRun(Protocol):
    """A background command being run: what `tasks.py` watches, reads and stops."""

    ended: anyio.Event
    exit: TerminalExit | None
    """How it ended (None while it runs, or when that is not known)."""
    terminal_id: str | None
    total: int | None
    """Bytes it printed so far (None in an editor's terminal: the editor counts them)."""

    async def watch(self) -> None:
        """Run until the command ends or this is cancelled; then stop what it left, always."""
        ...

    async def unread(self) -> Unread:
        """The output since the last call (capped), and from now on none of it again."""
        ...

    async def stop(self) -> None:
        """Stop the command and all it started; `watch` returns."""
        ...

    def tail(self, limit: int) -> str:
        """Its latest output, for the editor's view (empty in a terminal: the editor shows it)."""
        ...


class LocalRun:
    """A background command run here: a spawned process group, its output piped into the unread
    head and tail, the editor's tail (at most one update per interval, D6) and the spool."""

    def __init__(
        self,
        spawned: Spawned,
        limits: RunLimits,
        spool: Spool | None,
        report: Callable[[Progress], Awaitable[None]],
        heading: Callable[[], str],
    ) -> None:
        self.spawned, self.limits, self.spool = spawned, limits, spool
        self._report, self._heading = report, heading
        self.ended = anyio.Event()
        self.exit: TerminalExit | None = None
        self.terminal_id: str | None = None
        self.total: int | None = 0
        self.left: list[tuple[int, str]] = []
        """What was still running of it when its own process ended (stopped then)."""
        self._unread = CommandOutput(limits.max_output_bytes)
        self._shown = CommandOutput(2 * limits.progress_tail_bytes + 128)

    def _add(self, data: bytes) -> None:
        self.total = (self.total or 0) + len(data)
        self._unread.add(data)
        self._shown.add(data)
        if self.spool is not None:
            self.spool.write(data)

    async def watch(self) -> None:
        proc, limits = self.spawned.proc, self.limits
        assert proc.stdout is not None
        eof = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump, proc.stdout, self._add, eof)
                tg.start_soon(self._report_tail)
                await proc.wait()
                self.left = await self.spawned.stop(limits.kill_grace)  # what it left behind
                with anyio.move_on_after(DRAIN_SECONDS):
                    await eof.wait()
                tg.cancel_scope.cancel()
        finally:
            with anyio.move_on_after(limits.kill_grace + 2.0, shield=True):
                await self.spawned.stop(limits.kill_grace)
                await proc.aclose()
            code = proc.returncode
            if code is not None:
                self.exit = TerminalExit(None if code < 0 else code, signal_name(code))
            if self.spool is not None:
                self.spool.close()
            self.ended.set()

    async def _report_tail(self) -> None:
        """The editor's tail, from one interval on: the call that started the command ends meanwhile
        (its final update would replace an earlier tail with its result)."""
        limits = self.limits
        await anyio.sleep(limits.progress_interval)
        await report_tail(
            self._shown, self._report, limits.progress_interval, limits.progress_tail_bytes, self._heading
        )

    async def unread(self) -> Unread:
        out, self._unread = self._unread, CommandOutput(self.limits.max_output_bytes)
        text = out.text()
        if len(text.encode("utf-8", "replace")) > self.limits.max_output_bytes:
            text = cap_text(text, self.limits.max_output_bytes)  # replacement chars can grow it
        return Unread(text, out.total, out.total > len(out.head) + len(out.tail))

    async def stop(self) -> None:
        await self.spawned.stop(self.limits.kill_grace)
        with anyio.move_on_after(self.limits.kill_grace + DRAIN_SECONDS + 2.0):
            await self.ended.wait()

    def tail(self, limit: int) -> str:
        return self._shown.recent(limit)


class TerminalRun:
    """A background command run in the editor's terminal, embedded in the call that started it:
    the editor streams it; here it is waited for, read on request, killed and released."""

    def __init__(self, host: TerminalHost, terminal_id: str, limits: RunLimits) -> None:
        self.host, self.limits = host, limits
        self.terminal_id: str | None = terminal_id
        self._id = terminal_id
        self.ended = anyio.Event()
        self.exit: TerminalExit | None = None
        self.total: int | None = None
        self.output_at_end: TerminalOutput | None = None
        """What the terminal held when the command ended by itself (read before the release)."""
        self._seen = ""
        """The end of what the last read returned, to find where the new output starts."""
        self._read_upto = 0
        self._released = False

    async def watch(self) -> None:
        finished = False
        try:
            self.exit = await self.host.wait_for_exit(self._id)
            with anyio.move_on_after(TERMINAL_CLEANUP_SECONDS):
                self.output_at_end = await self.host.output(self._id)
            finished = True
        finally:
            with anyio.move_on_after(TERMINAL_CLEANUP_SECONDS, shield=True):
                try:
                    if not finished:  # failed or cancelled: the command may still run
                        await self.host.kill(self._id)
                    await self.host.release(self._id)
                except Exception as exc:
                    log.warning("shell.terminal_cleanup_failed", error=str(exc))
            self._released = True
            self.ended.set()

    async def unread(self) -> Unread:
        if self._released:
            held = self.output_at_end
        else:
            try:
                with anyio.fail_after(TERMINAL_CLEANUP_SECONDS * 5):
                    held = await self.host.output(self._id)
            except TimeoutError:
                held = None
        if held is None:
            return Unread("(the editor did not say what the terminal printed)", None, False)
        return self._new_part(held)

    def _new_part(self, held: TerminalOutput) -> Unread:
        output, dropped = held.output, False
        if not held.truncated and len(output) >= self._read_upto:
            new = output[self._read_upto :]
        elif self._seen and (at := output.find(self._seen)) >= 0:
            new = output[at + len(self._seen) :]  # the first match: a repeat may come twice, none is lost
        elif overlap := _overlap(self._seen, output):  # it dropped nearly all that was read
            new = output[overlap:]
        else:
            new, dropped = output, bool(self._read_upto)
        self._read_upto, self._seen = len(output), output[-_SEEN_CHARS:]
        text = cap_text(new, self.limits.max_output_bytes) if new else ""
        if dropped:
            text = f"[earlier output dropped: the editor kept only the last part]\n{text}"
        size = len(new.encode("utf-8", "replace"))
        return Unread(text, size, text != new)

    async def stop(self) -> None:
        with anyio.move_on_after(TERMINAL_CLEANUP_SECONDS):
            try:
                await self.host.kill(self._id)
            except Exception as exc:
                log.warning("shell.terminal_kill_failed", error=str(exc))
        with anyio.move_on_after(TERMINAL_CLEANUP_SECONDS * 2):
            await self.ended.wait()

    def tail(self, limit: int) -> str:
        return ""


def _overlap(seen: str, output: str) -> int:
    """The length of the longest end of `seen` that `output` starts with (0: none)."""
    for length in range(min(len(seen) - 1, len(output)), 0, -1):
        if output.startswith(seen[-length:]):
            return length
    return 0
