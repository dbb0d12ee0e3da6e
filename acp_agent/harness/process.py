"""The spawned agent's process, as `client.AgentClient` holds it: started in a process group of its
own, its stdin written under a lock, its stderr drained (a full pipe would block the agent) with a
tail kept for reports, and stopped step by step: EOF, a grace period, signals, then SIGKILL to
whatever is left in its group. Should this process be killed, its warden stops the agent
(`process/lifetime.py`).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from subprocess import DEVNULL, PIPE
from typing import Literal, Protocol

import anyio
from anyio.abc import ByteReceiveStream, Process

from acp_agent.harness.agent_errors import AgentSpawnError
from acp_agent.process.lifetime import inherited_env, owned_env

__all__ = [
    "IO_ERRORS",
    "STOP_SIGNALS",
    "TAIL_BYTES",
    "AgentSpawnError",
    "ByteSink",
    "ChildProcess",
    "StderrMode",
    "open_agent_process",
]


class ByteSink(Protocol):
    """Where the agent's stderr is copied: a binary file, or a reader of its lines (`AgentLog`)."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> object: ...


StderrMode = Literal["pipe", "unread", "devnull"]
"""pipe: read, kept (see `stderr_keep`) and copied to `stderr`; unread: a pipe nobody reads (it
fills up); devnull: thrown away."""
STOP_SIGNALS: tuple[tuple[signal.Signals, float], ...] = ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0))
"""After EOF and the grace period: each signal, and how long to wait after it."""
TAIL_BYTES = 16 * 1024
IO_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
"""What reading or writing a pipe of a process that is gone raises."""


async def open_agent_process(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr_mode: StderrMode = "pipe",
) -> Process:
    """Start `command` with piped stdio, in its own session.

    Raises:
        AgentSpawnError: the command could not be started.
    """
    try:
        return await anyio.open_process(
            list(command),
            stdin=PIPE,
            stdout=PIPE,
            stderr=DEVNULL if stderr_mode == "devnull" else PIPE,
            cwd=cwd,
            # Should we be killed, no agent is left behind (one that ignores its stdin's EOF, say).
            env=owned_env(env) if env is not None else inherited_env(),
            start_new_session=True,  # Ctrl-C at the terminal reaches us, not the agent
        )
    except OSError as exc:
        raise AgentSpawnError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc


class ChildProcess:
    """One agent process: its stdin, the stderr it wrote (what was kept), and its ending."""

    def __init__(
        self, process: Process, *, stderr_sink: ByteSink | None = None, stderr_keep: int | None = TAIL_BYTES
    ) -> None:
        assert process.stdin is not None
        self._process, self._stdin = process, process.stdin
        self.pid = process.pid
        self._sink, self._stderr_keep = stderr_sink, stderr_keep
        self._stderr = bytearray()
        self._stderr_read: anyio.Event | None = None
        """Set once `drain_stderr` has read stderr to its end (None: nobody reads it)."""
        self._write_lock = anyio.Lock()

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdout(self) -> ByteReceiveStream:
        assert self._process.stdout is not None
        return self._process.stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        """The stderr pipe (None with stderr_mode devnull)."""
        return self._process.stderr

    def stderr_text(self) -> str:
        """All the agent's stderr that was kept."""
        return self._stderr.decode("utf-8", "replace")

    async def write(self, data: bytes) -> None:
        """Write to stdin, one writer at a time (raises one of `IO_ERRORS` when it is closed)."""
        async with self._write_lock:
            await self._stdin.send(data)

    async def close_stdin(self) -> None:
        with contextlib.suppress(*IO_ERRORS):
            await self._stdin.aclose()

    def send_signal(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signum)

    async def wait(self) -> int:
        return await self._process.wait()

    async def drain_stderr(self, stderr: ByteReceiveStream) -> None:
        """Read stderr to its end: keep its tail, copy it to the sink."""
        self._stderr_read = done = anyio.Event()
        try:
            with contextlib.suppress(*IO_ERRORS):
                async for chunk in stderr:
                    self._stderr += chunk
                    if self._stderr_keep is not None:
                        del self._stderr[: -self._stderr_keep]
                    if self._sink is not None:
                        with contextlib.suppress(OSError, ValueError):
                            self._sink.write(chunk)
                            self._sink.flush()
        finally:
            done.set()

    async def stderr_drained(self, timeout: float) -> None:
        """Return once stderr has been read to its end, or after `timeout` s (a grandchild may
        hold it open). The exit and the last bytes of stderr arrive apart: a caller that has seen
        the exit waits here before it looks at the last log lines."""
        if self._stderr_read is not None:
            with anyio.move_on_after(timeout):
                await self._stderr_read.wait()

    async def stop(self, grace: float, stop_signals: Sequence[tuple[signal.Signals, float]]) -> None:
        """EOF on stdin, `grace` s to leave, then each signal and its wait, until it has exited."""
        await self.close_stdin()
        for signum, wait in ((None, grace), *stop_signals):
            if signum is not None and self.returncode is None:
                self.send_signal(signum)
            with anyio.move_on_after(wait):
                await self._process.wait()
            if self.returncode is not None:
                break

    async def reap(self) -> None:
        """SIGKILL to the whole process group, then release the process."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # whatever the agent left in its process group
        self.send_signal(signal.SIGKILL)
        with anyio.move_on_after(5):
            await self._process.aclose()
