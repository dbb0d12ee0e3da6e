"""Newline-delimited framing over raw file descriptors (stdin, stdout).

Raw fds instead of anyio streams: pipes and ttys go non-blocking and are awaited with
`anyio.wait_readable`/`wait_writable`, so a big read or a full stdout pipe never blocks the
event loop; regular files (not pollable) are read and written plainly. One `LineWriter`
owns stdout, so lines never interleave.
"""

from __future__ import annotations

import contextlib
import os
import stat

import anyio
import structlog
from anyio.lowlevel import checkpoint

from acp_agent.errors import LineTooLong

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "WRITE_HIGH_WATER",
    "LineReader",
    "LineWriter",
]

log = structlog.get_logger(__name__)

DEFAULT_MAX_LINE_BYTES = 50 * 1024 * 1024
WRITE_HIGH_WATER = 4 * 1024 * 1024
_READ_BLOCK = 256 * 1024  # a pipe hands over at most 64 KiB per read; files may give more


def _is_pollable(fd: int) -> bool:
    """Pipes, sockets and ttys can be waited on; regular files and /dev/null cannot."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


class _Fd:
    """An fd switched to non-blocking on first use when pollable, and switched back on close."""

    __slots__ = ("_was_blocking", "fd", "pollable")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pollable: bool | None = None
        self._was_blocking = False

    def prepare(self) -> bool:
        if self.pollable is None:
            self.pollable = _is_pollable(self.fd)
            if self.pollable and os.get_blocking(self.fd):
                os.set_blocking(self.fd, False)
                self._was_blocking = True
        return self.pollable

    def restore(self) -> None:
        if self._was_blocking:
            self._was_blocking = False
            with contextlib.suppress(OSError):  # already closed: nothing to restore
                os.set_blocking(self.fd, True)


class LineReader:
    """Reads `\\n`-terminated lines from an fd in big blocks; `None` means EOF.

    A trailing `\\r` is stripped, and a last line without a newline is still delivered. A line
    longer than `max_line_bytes` is skipped up to its newline and reported by raising
    `LineTooLong` from `read_line`; the next call goes on with the following line.
    """

    def __init__(self, fd: int, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._fd = _Fd(fd)
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._pos = 0  # start of the first unconsumed line
        self._scan = 0  # where the newline search resumes (bytes before it hold none)
        self._skipped: int | None = None  # bytes dropped so far of an over-long line
        self._eof = False

    async def read_line(self) -> bytes | None:
        """The next line without its newline, or None at EOF.

        Raises:
            LineTooLong: the line exceeded the cap and was skipped.
            OSError: the fd failed (for example EIO on a hung-up tty).
        """
        buf = self._buf
        while True:
            if self._skipped is None:
                idx = buf.find(b"\n", self._scan)
                if idx >= 0:
                    start = self._pos
                    self._pos = self._scan = idx + 1
                    if idx - start > self.max_line_bytes:
                        raise LineTooLong(idx - start, self.max_line_bytes)
                    if idx > start and buf[idx - 1] == 0x0D:
                        idx -= 1
                    return bytes(buf[start:idx])
                self._scan = len(buf)
                if len(buf) - self._pos > self.max_line_bytes:
                    self._skipped = len(buf) - self._pos
                    buf.clear()
                    self._pos = self._scan = 0
            else:
                idx = buf.find(b"\n")
                if idx >= 0:
                    size = self._skipped + idx
                    self._skipped = None
                    self._pos = self._scan = idx + 1
                    raise LineTooLong(size, self.max_line_bytes)
                self._skipped += len(buf)
                buf.clear()
            if self._eof:
                return self._take_last()
            chunk = await self._read()
            if self._pos:
                del buf[: self._pos]
                self._scan -= self._pos
                self._pos = 0
            if chunk:
                buf += chunk
            else:
                self._eof = True

    def _take_last(self) -> bytes | None:
        if self._skipped is not None:
            size, self._skipped = self._skipped, None
            raise LineTooLong(size, self.max_line_bytes)
        buf = self._buf
        if self._pos >= len(buf):
            return None
        line = bytes(buf[self._pos :])
        buf.clear()
        self._pos = self._scan = 0
        if len(line) > self.max_line_bytes:
            raise LineTooLong(len(line), self.max_line_bytes)
        return line[:-1] if line.endswith(b"\r") else line

    async def _read(self) -> bytes:
        fd = self._fd.fd
        if not self._fd.prepare():
            await checkpoint()  # plain reads of a file never wait; still let others run
            return os.read(fd, _READ_BLOCK)
        while True:
            try:
                data = os.read(fd, _READ_BLOCK)
            except BlockingIOError:
                await anyio.wait_readable(fd)
                continue
            await checkpoint()  # a client flooding lines must not starve the other tasks
            return data

    async def aclose(self) -> None:
        """Give the fd back its original blocking mode (the fd itself stays open)."""
        self._fd.restore()


class LineWriter:
    """The single owner of an output fd: `send` buffers, one `run` task writes.

    Everything sent before the writer task gets to run goes out in one `write`, and the first
    line is never held back. Above `high_water` buffered bytes `send` waits for room. Once the
    reader of the pipe is gone (EPIPE) the writer stops quietly and later sends are dropped.
    """

    def __init__(self, fd: int, *, high_water: int = WRITE_HIGH_WATER) -> None:
        self._fd = _Fd(fd)
        self._high_water = high_water
        self._buf = bytearray()
        self._wake = anyio.Event()
        self._room: anyio.Event | None = None
        self._drained: anyio.Event | None = None
        self._stopped = False
        self._broken = False
        self._scope: anyio.CancelScope | None = None

    async def send(self, data: bytes) -> None:
        """Queue bytes for writing; waits only while more than `high_water` is buffered."""
        while len(self._buf) > self._high_water and not self._stopped:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()
        if self._stopped:
            return
        self._buf += data
        self._wake.set()

    async def run(self) -> None:
        """The writer task: start it in the app's task group; returns when stopped."""
        with anyio.CancelScope() as scope:
            self._scope = scope
            pollable = self._fd.prepare()
            while not self._stopped:
                if not self._buf:
                    self._signal_drained()
                    await self._wake.wait()
                    self._wake = anyio.Event()
                    continue
                await self._write_some(pollable)

    async def _write_some(self, pollable: bool) -> None:
        # After any await the caller re-checks `_stopped`: aclose() may have restored blocking.
        try:
            written = os.write(self._fd.fd, self._buf)
        except BlockingIOError:
            await anyio.wait_writable(self._fd.fd)
            return
        except (BrokenPipeError, ConnectionResetError):
            log.info("rpc.client_gone", dropped_bytes=len(self._buf))
            self._stop(broken=True)
            return
        except OSError as exc:
            log.warning("rpc.write_failed", error=str(exc), dropped_bytes=len(self._buf))
            self._stop(broken=True)
            return
        del self._buf[:written]
        if self._room is not None and len(self._buf) <= self._high_water:
            self._room.set()
            self._room = None
        if not pollable:
            await checkpoint()

    def _signal_drained(self) -> None:
        if self._drained is not None:
            self._drained.set()
            self._drained = None

    def _stop(self, *, broken: bool) -> None:
        self._stopped = True
        self._broken = self._broken or broken
        self._buf.clear()
        self._wake.set()
        if self._room is not None:
            self._room.set()
            self._room = None
        self._signal_drained()

    async def flush(self, timeout: float | None) -> bool:
        """Wait until everything sent so far is written; True if it was, within `timeout`."""
        with anyio.move_on_after(timeout):
            while self._buf and not self._stopped:
                if self._drained is None:
                    self._drained = anyio.Event()
                await self._drained.wait()
        return not self._buf and not self._broken

    async def aclose(self) -> None:
        """Stop the writer (unwritten bytes are dropped: `flush` first) and restore the fd."""
        self._stop(broken=False)
        if self._scope is not None:
            self._scope.cancel()
        self._fd.restore()
