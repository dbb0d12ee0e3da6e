"""Processes as /proc shows them: the checks the tests make of processes they started.

A sandboxed command runs in a PID namespace of its own, so the pid it prints (`$!`, `$$`) is not
the pid the test sees. Such tests start their processes with a command line of their own
(`marked_sleep`) and look for it (`running`).
"""

from __future__ import annotations

import os
import secrets
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from tests.support.waits import HANG_GUARD, wait_until

__all__ = ["alive", "children", "gone", "marked_sleep", "running", "running_with", "started", "strays"]


def alive(pid: int) -> bool:
    """Whether `pid` still runs: gone, a zombie (Z) or dead (X) all count as not running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for name in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{name}/stat").read_text() if name.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat[stat.rfind(")") + 2 :].split()[1]) == pid and alive(int(name)):
            found.append(int(name))
    return found


def marked_sleep(seconds: int = 300) -> str:
    """`sleep N.<random digits>`: a command line no other process on the machine has."""
    return f"sleep {seconds}.{secrets.randbelow(10**9):09d}"


def _argvs() -> list[tuple[int, list[str]]]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        found.append((int(name), [a.decode("utf-8", "replace") for a in argv]))
    return found


def running(command_line: str) -> list[int]:
    """The pids of live processes whose argv, joined by spaces, is `command_line`."""
    wanted = command_line.split()
    return [pid for pid, argv in _argvs() if argv == wanted and alive(pid)]


def running_with(text: str) -> list[int]:
    """The pids of live processes with `text` in one of their arguments (a token in a `bash -c`
    script finds that shell, and the bwrap that started it)."""
    return [pid for pid, argv in _argvs() if any(text in a for a in argv) and alive(pid)]


async def started(command_line: str, timeout: float = 30) -> list[int]:
    """The pids of `command_line` once it runs: a shell may print a child's pid (`$!`) before
    the child has exec'd its program, so a check made on that signal alone races the exec."""
    return await wait_until(lambda: running(command_line), f"`{command_line}` to run", timeout=timeout)


async def gone(pids: list[int], timeout: float = HANG_GUARD) -> None:
    """Return once none of `pids` runs; an AssertionError after `timeout` s (polled: nothing
    signals the end of a process that is not our child)."""
    await wait_until(lambda: not any(alive(pid) for pid in pids), f"processes {pids} to end", timeout=timeout)


@asynccontextmanager
async def strays(find: Callable[[], list[int]]) -> AsyncIterator[None]:
    """SIGKILL on the way out whatever `find` still sees: a failing test leaves nothing running."""
    try:
        yield
    finally:
        for pid in find():
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
