"""The session journal: one append-only JSON-lines file per session, so nothing is lost.

Each complete entry (a prompt, a finished assistant message, a tool result, a turn record, a notice,
a plan, a mode change) is written and fsynced before the agent reports it as done (decisions D7).
A torn last line (the process was killed mid-write) is skipped on read, never fatal. The directory
is 0700 and the files 0600: they hold file contents and command output.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

__all__ = ["Journal", "SessionInfo", "SessionStore"]

log = structlog.get_logger(__name__)

VERSION = 1
TITLE_CHARS = 80


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What session/list shows of a journaled session."""

    session_id: str
    cwd: str
    title: str | None
    updated_at: str
    mtime: float


class Journal:
    """Appends entries to one session's file; an entry is fsynced before it is reported as kept.

    The file is opened per append, so a thousand idle sessions hold no file descriptors.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
        self.closed = False

    def append(self, entry: dict[str, Any], *, sync: bool = True) -> None:
        """Write one entry; with `sync`, fsync the file (this entry and all before it)."""
        if self.closed:
            return
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            data = line.encode("utf-8", "surrogatepass")
            while data:
                data = data[os.write(fd, data):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        self.closed = True


class SessionStore:
    """The journal directory: create, read, list, delete and expire session journals."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def open(cls, directory: Path, *, keep_days: float | None = 30) -> SessionStore:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        store = cls(directory)
        if keep_days:
            store.expire(keep_days)
        return store

    def _path(self, session_id: str) -> Path:
        safe = "".join(c for c in session_id if c.isalnum() or c in "-_")
        return self.directory / f"{safe}.jsonl"

    def create(self, session_id: str, cwd: str) -> Journal:
        journal = Journal(self._path(session_id))
        journal.append({"type": "meta", "version": VERSION, "sessionId": session_id, "cwd": cwd,
                        "createdAt": now_iso()})
        return journal

    def reopen(self, session_id: str) -> Journal:
        return Journal(self._path(session_id))

    def exists(self, session_id: str) -> bool:
        return self._path(session_id).is_file()

    def read(self, session_id: str) -> list[dict[str, Any]]:
        """Every complete entry; a torn or garbled line is skipped with a log line."""
        return list(self._entries(self._path(session_id)))

    def _entries(self, path: Path) -> Iterator[dict[str, Any]]:
        with path.open(encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if not line.endswith("\n"):
                    log.warning("journal.torn_line", path=str(path), line=number)
                    return
                try:
                    entry = json.loads(line)
                except ValueError:
                    log.warning("journal.bad_line", path=str(path), line=number)
                    continue
                if isinstance(entry, dict):
                    yield entry

    def delete(self, session_id: str) -> None:
        self._path(session_id).unlink(missing_ok=True)

    def list(self, cwd: str | None = None) -> list[SessionInfo]:
        """Sessions newest first, optionally only those of `cwd`."""
        found = []
        for path in self.directory.glob("*.jsonl"):
            info = self._info(path)
            if info is not None and (cwd is None or info.cwd == cwd):
                found.append(info)
        return sorted(found, key=lambda i: i.mtime, reverse=True)

    def _info(self, path: Path) -> SessionInfo | None:
        meta: dict[str, Any] | None = None
        title = None
        try:
            mtime = path.stat().st_mtime
            for entry in self._entries(path):
                if entry.get("type") == "meta":
                    meta = entry
                elif entry.get("type") == "prompt":
                    title = _title(entry.get("prompt") or [])
                    break
        except OSError:
            return None
        if meta is None:
            return None
        updated = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")
        return SessionInfo(str(meta.get("sessionId")), str(meta.get("cwd")), title,
                           updated.replace("+00:00", "Z"), mtime)

    def expire(self, keep_days: float) -> int:
        """Remove journals untouched for `keep_days`; returns how many."""
        cutoff = time.time() - keep_days * 86400
        removed = 0
        for path in self.directory.glob("*.jsonl"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        if removed:
            log.info("journal.expired", removed=removed, keep_days=keep_days)
        return removed


def _title(prompt: list[dict[str, Any]]) -> str | None:
    for block in prompt:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and text.strip():
            return text.strip().splitlines()[0][:TITLE_CHARS]
    return None
