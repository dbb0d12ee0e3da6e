"""A background command's output on disk, capped, in a folder that goes with its session.

A dev server may print for hours and a runaway loop a gigabyte a minute, so a spool keeps at most
`cap` bytes: two files of at most half of it each, `<task>.log` (the newer output) and
`<task>.log.1` (the half before), so the latest output is always on disk, whole. Only the agent
writes there (the state dir is hidden from the tools and the sandbox, `tools/hidden.py`): what the
model reads comes from memory (`tasks.py`), and the files are for the user, named by `/tasks`.

Each session's spools live in a folder of their own, locked (`flock`) for as long as the session
holds it, and removed with the session (close, delete, the agent's exit). A killed agent leaves
its folders behind unlocked (the kernel drops a dead process's locks): the next folder made under
the same parent removes them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import time
from pathlib import Path

import structlog

__all__ = ["Spool", "SpoolFolder"]

log = structlog.get_logger(__name__)

_LOCK = ".lock"
_YOUNG_SECONDS = 60.0
"""A folder this new may be one another agent is still setting up: the sweep leaves it alone."""


class Spool:
    """One task's output on disk, at most `cap` bytes in two files; a write that fails turns it off."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self._half = max(cap // 2, 1)
        self._fd: int | None = _create(path)
        self._size = 0

    def write(self, data: bytes) -> None:
        if self._fd is None:
            return
        try:
            if self._size and self._size + len(data) > self._half:
                self._rotate()
            data = data[-self._half :]  # one chunk longer than half the cap keeps its end
            os.write(self._fd, data)
            self._size += len(data)
        except OSError as exc:  # a full disk: the output is still read from memory
            log.warning("shell.spool_failed", path=str(self.path), error=str(exc))
            self.close()

    def _rotate(self) -> None:
        assert self._fd is not None
        os.close(self._fd)
        self._fd = None
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        self._fd = _create(self.path)
        self._size = 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def files(self) -> list[Path]:
        """Its files on disk, the older first."""
        older = self.path.with_name(self.path.name + ".1")
        return [p for p in (older, self.path) if p.exists()]

    def delete(self) -> None:
        self.close()
        for path in self.files():
            with contextlib.suppress(OSError):
                path.unlink()


def _create(path: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags, 0o600)


class SpoolFolder:
    """The folder of one session's spools under `parent` (`<state dir>/tasks`), made on first use."""

    def __init__(self, parent: Path, session_id: str) -> None:
        self.parent = parent
        self.name = f"{session_id}.{secrets.token_hex(4)}"
        self._lock: int | None = None

    @property
    def path(self) -> Path:
        return self.parent / self.name

    def spool(self, task_id: str, cap: int) -> Spool | None:
        """A new spool for a task, or None when the folder cannot be made (the output is then
        kept in memory only, as with `--no-journal`)."""
        try:
            if self._lock is None:
                self._make()
            return Spool(self.path / f"{task_id}.log", cap)
        except OSError as exc:
            log.warning("shell.no_spool", folder=str(self.path), error=str(exc))
            return None

    def _make(self) -> None:
        self.parent.mkdir(mode=0o700, exist_ok=True)
        _sweep(self.parent)
        self.path.mkdir(mode=0o700)
        fd = os.open(self.path / _LOCK, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock = fd

    def remove(self) -> None:
        """Delete the folder and every spool in it."""
        if self._lock is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._lock)
        self._lock = None


def _sweep(parent: Path) -> None:
    """Remove the folders a killed agent left: unlocked, and not made a moment ago."""
    for folder in parent.iterdir():
        try:
            if folder.is_symlink() or not folder.is_dir():
                continue
            if time.time() - folder.stat().st_mtime < _YOUNG_SECONDS:
                continue
            fd = os.open(folder / _LOCK, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its agent holds it
            os.close(fd)
            continue
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)
        log.info("shell.stale_spools_removed", folder=str(folder))
