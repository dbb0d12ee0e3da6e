"""session/list: the journaled sessions, newest first, one page at a time.

Ordered by the journal's last change (then by id, so the order is total), and paged by key: the
opaque cursor names the last session a page showed, and the next page starts after it. A session
that changes between two pages moves to the front and is not shown twice; no other session is
skipped or repeated. A cursor that is not one of ours is -32602 (`CursorError`).

Only the header of every journal is read to sort and filter (by cwd); what a page shows is read
for that page alone: the entries up to the first prompt (checked: a journal corrupt there is left
out, the rest shows on load), then only the lines that rename the session or change its roots.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import structlog

from acp_agent.errors import AgentError
from acp_agent.journal.store import JournalCorrupt, SessionStore, is_session_id
from acp_agent.journal.titles import session_title
from acp_agent.turn.journal.entries import Entry, MetaEntry, PromptEntry, RootsEntry, TitleEntry
from acp_agent.turn.journal.lines import EntryProblem, read_entry

__all__ = ["PAGE_SIZE", "CursorError", "SessionInfo", "list_sessions", "session_roots"]

log = structlog.get_logger(__name__)

PAGE_SIZE = 50
"""Sessions per `session/list` page."""
_LATER = (b'{"type":"title"', b'{"type":"roots"')
"""How the lines that rename a session or change its roots begin (`type` is always first)."""


class CursorError(AgentError, ValueError):
    """A `session/list` cursor this agent did not make."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What session/list shows of a journaled session."""

    session_id: str
    cwd: str
    title: str | None
    updated_at: str
    additional_directories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, order=True)
class _Key:
    """A journal's place in the list: the newest first, then by id."""

    newest: int
    """Minus its modification time in nanoseconds."""
    session_id: str


@dataclass(frozen=True, slots=True)
class _Head:
    key: _Key
    path: Path
    meta: MetaEntry


def list_sessions(
    store: SessionStore, cwd: str | None = None, cursor: str | None = None, size: int = PAGE_SIZE
) -> tuple[list[SessionInfo], str | None]:
    """One page of sessions (of `cwd` only, if given) after `cursor`, and the next page's cursor
    (None: this is the last page).

    Raises:
        CursorError: `cursor` is not one this agent made.
    """
    after = _read_cursor(cursor) if cursor is not None else None
    heads = sorted((h for h in _heads(store) if cwd is None or h.meta.cwd == cwd), key=lambda h: h.key)
    if after is not None:
        heads = [h for h in heads if h.key > after]
    page: list[SessionInfo] = []
    for index, head in enumerate(heads):
        if len(page) == size:
            return page, _cursor(heads[index - 1].key)
        info = _describe(store, head)
        if info is not None:
            page.append(info)
    return page, None


def session_roots(entries: list[Entry]) -> tuple[str, ...]:
    """The additional roots the entries leave in force (the header's, or the latest change)."""
    roots: tuple[str, ...] = ()
    for entry in entries:
        if isinstance(entry, MetaEntry):
            roots = entry.additional_directories
        elif isinstance(entry, RootsEntry):
            roots = entry.directories
    return roots


def _cursor(key: _Key) -> str:
    raw = json.dumps({"v": 1, "t": key.newest, "id": key.session_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _read_cursor(cursor: str) -> _Key:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise CursorError("not a cursor this agent gave (pass the nextCursor of the page before)") from None
    if (
        not isinstance(value, dict)
        or value.get("v") != 1
        or type(value.get("t")) is not int
        or not isinstance(value.get("id"), str)
        or not is_session_id(value["id"])
    ):
        raise CursorError("not a cursor this agent gave (pass the nextCursor of the page before)")
    return _Key(value["t"], value["id"])


def _heads(store: SessionStore) -> Iterator[_Head]:
    """Every journal whose header reads, with its place in the list."""
    for path in store.directory.glob("sess_*.jsonl"):
        session_id = path.name.removesuffix(".jsonl")
        if not is_session_id(session_id):
            continue
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue
            meta = _header(path)
        except (OSError, EntryProblem) as exc:
            log.warning("journal.unlisted", path=str(path), problem=str(exc))
            continue
        if isinstance(meta, MetaEntry):
            yield _Head(_Key(-info.st_mtime_ns, session_id), path, meta)


def _header(path: Path) -> Entry | None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        line = f.readline(1 << 20)
    return read_entry(line) if line.endswith(b"\n") else None


def _describe(store: SessionStore, head: _Head) -> SessionInfo | None:
    """The session as the list shows it; None when its journal is corrupt before its first prompt."""
    found: list[Entry] = []
    try:
        for entry in store.entries_at(head.path):
            found.append(entry)
            if isinstance(entry, PromptEntry):
                break
        found.extend(_later(head.path))
    except (OSError, JournalCorrupt) as exc:
        log.warning("journal.unlisted", path=str(head.path), problem=str(exc))
        return None
    updated = datetime.fromtimestamp(-head.key.newest / 1e9, UTC).isoformat(timespec="seconds")
    return SessionInfo(
        head.meta.session_id,
        head.meta.cwd,
        session_title(found),
        updated.replace("+00:00", "Z"),
        session_roots(found),
    )


def _later(path: Path) -> Iterator[TitleEntry | RootsEntry]:
    """The renames and root changes anywhere in the journal (other lines are not parsed); one that
    does not read is skipped: session/load reports it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        for line in f:
            if line.startswith(_LATER) and line.endswith(b"\n"):
                try:
                    entry = read_entry(line)
                except EntryProblem:
                    continue
                if isinstance(entry, TitleEntry | RootsEntry):
                    yield entry
