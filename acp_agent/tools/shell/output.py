"""What a command printed and how it ended, as the model and the editor are shown them.

Output is kept as a capped head and a rolling tail, never whole, cut only between UTF-8
characters; the editor gets tail-only progress from it (docs/decisions.md D6).
"""

from __future__ import annotations

import time

import anyio

from acp_agent.tools.base import Progress, ToolContext

__all__ = ["CommandOutput", "bwrap_error", "exit_status", "tell_cancelled"]

_NOTE_RESERVE = 64  # bytes kept free for a "[… N bytes cut …]" note


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


class CommandOutput:
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


def exit_status(exit_code: int | None, sig: str | None) -> str:
    """The first line of a finished command's result."""
    if sig:
        return f"terminated by signal {sig}"
    return f"exit code {exit_code}" if exit_code is not None else "exit code unknown"


def bwrap_error(exit_code: int | None, output: str) -> str | None:
    """bwrap's own error when it could not set the sandbox up (exit 1, its one line), else None.

    Then the command never started: bwrap fails before it runs anything.
    """
    lines = output.splitlines()
    if exit_code != 1 or len(lines) != 1:
        return None
    return lines[0] if lines[0].startswith("bwrap: ") else None


async def tell_cancelled(ctx: ToolContext, started: float, what: str, output: str) -> None:
    """Say how long the command ran before the cancel and what it printed (not "not executed")."""
    text = f"cancelled after {time.monotonic() - started:.1f} s; {what}\n{output or '(no output)'}"
    await ctx.report(Progress(text=text, cancelled=True))
