"""Blocking disk work for the file tools: run in a worker thread that a cancel abandons at once."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

import anyio.to_thread

from acp_agent.errors import ToolError
from acp_agent.tools.files.confined import NOFOLLOW, changed_on_the_way, parent_dir
from acp_agent.tools.paths import display_path

__all__ = [
    "BLOCK",
    "SNIFF_BYTES",
    "in_thread",
    "iter_lines",
    "not_regular",
    "open_regular",
    "os_error",
    "prefix_for",
    "special_kind",
    "time_left",
]

SNIFF_BYTES = 8192  # like git: a NUL in the first 8 KiB means binary
BLOCK = 1 << 20
T = TypeVar("T")


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run `work(stop)` in a thread; on cancel, abandon it and raise its stop flag."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    finally:
        stop.set()


def os_error(exc: OSError, shown: str) -> ToolError:
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"no such file or directory: {shown!r}")
    if isinstance(exc, IsADirectoryError):
        return ToolError(f"{shown!r} is a directory; use list_files to see what it holds")
    if isinstance(exc, PermissionError):
        return ToolError(f"permission denied: {shown!r}")
    return ToolError(f"cannot read {shown!r}: {exc.strerror or exc}")


def special_kind(mode: int) -> str:
    """What a file that is not a regular one is: "a FIFO", "a socket", "a device"..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


def not_regular(mode: int, shown: str) -> ToolError:
    """The refusal for a FIFO, socket or device: opening or reading one can block forever."""
    return ToolError(f"{shown!r} is {special_kind(mode)}; the file tools only read and write regular files")


def open_regular(path: Path, shown: str) -> BinaryIO:
    """Open a regular file (an absolute, resolved path) for reading, refusing a FIFO or device
    before anything can block, and following no symlink planted since the path was checked.

    O_NONBLOCK makes the open itself return at once whatever the file is; the file is then
    checked, and a regular one is read normally. The path is walked with O_NOFOLLOW from `/`
    (`tools/files/confined.py`).

    Raises:
        ToolError: not a regular file, a component turned into a symlink, or the open failed
            (missing, a directory, no permission).
    """
    with parent_dir(path, shown) as parent:
        try:
            fd = os.open(
                path.name or ".", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | NOFOLLOW, dir_fd=parent
            )
        except OSError as exc:
            raise changed_on_the_way(exc, shown) or os_error(exc, shown) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise os_error(IsADirectoryError(errno.EISDIR, "Is a directory"), shown)
        raise not_regular(mode, shown)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "rb")


def iter_lines(f: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Yield (line, full size): lines longer than `cap` are cut to `cap` bytes, never held whole."""
    while part := f.readline(cap + 1):
        if len(part) <= cap or part.endswith(b"\n"):
            yield part, len(part)
            continue
        size = len(part)
        while more := f.readline(BLOCK):
            size += len(more)
            if more.endswith(b"\n"):
                break
        yield part[:cap], size


def prefix_for(cwd: Path, top: Path) -> str:
    """What to put before a path relative to `top` to make it relative to the cwd."""
    shown = display_path(cwd, top)
    return "" if shown == "." else shown + "/"


def time_left(deadline: float) -> float:
    """Seconds left before `deadline`; raises TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left
