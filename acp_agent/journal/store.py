"""The session journal: one append-only JSON-lines file per session, so nothing is lost.

Each complete entry (a prompt, a finished assistant message, a tool result, a turn record, a notice,
a plan, a mode change) is written and fsynced before the agent reports it as done (docs/decisions.md D7).
The directory is 0700 and the files 0600: they hold file contents and command output.

What can go wrong is contained (issue 19):
- a torn last line (a kill mid-write) is skipped on read and cut off before the next append, so it
  never runs into a later entry; a write that fails (a full disk) is cut off the same way and
  raised as `JournalWriteFailed`, naming the file;
- a journal that is not one (random bytes, an empty file, a bad line, an entry of the wrong shape
  (`turn/journal/entries.py` defines them), a journal copied into itself) raises `JournalCorrupt` naming
  the file and the line, and never breaks another session;
- a write to the journal of a closed session is an error, never silently dropped;
- only ids of the agent's own format (`sess_` + 32 hex digits) name a file, and journals are
  opened without following symlinks.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import structlog

from acp_agent.errors import AgentError, RpcError
from acp_agent.journal.state_dir import StateDirError, prepare_state_dir
from acp_agent.turn.journal.entries import (
    JOURNAL_VERSION,
    AssistantEntry,
    Entry,
    MetaEntry,
    PromptEntry,
    ToolResultEntry,
    UserEntry,
)
from acp_agent.turn.journal.lines import EntryProblem, entry_json, read_entry

__all__ = [
    "Journal",
    "JournalCorrupt",
    "JournalWriteFailed",
    "SessionStore",
    "StateDirError",
    "creation_error",
    "is_session_id",
]

log = structlog.get_logger(__name__)

SESSION_ID = re.compile(r"sess_[0-9a-f]{32}")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_session_id(session_id: str) -> bool:
    """Whether `session_id` has the agent's own format (only those ever name a journal)."""
    return SESSION_ID.fullmatch(session_id) is not None


class JournalCorrupt(AgentError, ValueError):
    """A journal that cannot be read as this agent's journal: which file, which line, what."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        where = "" if line is None else f" at line {line}"
        super().__init__(f"the session journal {path} is corrupt{where}: {problem}")
        self.path, self.line, self.problem = path, line, problem


class JournalWriteFailed(AgentError, OSError):
    """An entry could not be written (or synced) to the journal; nothing of it was kept."""

    def __init__(self, path: Path, exc: OSError) -> None:
        reason = exc.strerror or str(exc)
        disk = " (the disk is full)" if exc.errno in {errno.ENOSPC, errno.EDQUOT} else ""
        super().__init__(exc.errno, f"cannot write the session journal {path}: {reason}{disk}")
        self.path = path


def _open(path: Path, flags: int, mode: int = 0o600) -> int:
    """Open a journal without following a symlink, and only if it is a regular file."""
    fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC, mode)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"{path} is not a regular file")
    return fd


class Journal:
    """Appends entries to one session's file; an entry is fsynced before it is reported as kept.

    The file is opened per append, so a thousand idle sessions hold no file descriptors.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            _cut_torn_tail(fd, path)
        finally:
            os.close(fd)
        self.closed = False
        self.fresh = False
        """Made by `SessionStore.create` in this process: what it holds was written here, so
        nothing needs reading back (the first prompt's checkpoints start from none)."""

    def append(self, entry: Entry, *, sync: bool = True) -> None:
        """Write one entry; with `sync`, fsync the file (this entry and all before it).

        Raises:
            JournalWriteFailed: the entry is not kept (what was written of it is cut off again),
                or the journal was closed (its session was closed or deleted).
        """
        if self.closed:  # a turn that outlived its session: what it writes must not vanish
            raise JournalWriteFailed(self.path, OSError(errno.EBADF, "the session was closed"))
        data = _line(entry)
        try:
            fd = _open(self.path, os.O_RDWR | os.O_APPEND)
        except OSError as exc:
            raise JournalWriteFailed(self.path, exc) from exc
        try:
            size = os.fstat(fd).st_size
            try:
                while data:
                    data = data[os.write(fd, data) :]
                if sync:
                    os.fsync(fd)
            except OSError as exc:
                _cut_back(fd, size, self.path)
                raise JournalWriteFailed(self.path, exc) from exc
        finally:
            os.close(fd)

    def close(self) -> None:
        self.closed = True


def _line(entry: Entry) -> bytes:
    """An entry's line in the file."""
    line = json.dumps(entry_json(entry), ensure_ascii=False, separators=(",", ":")) + "\n"
    return line.encode("utf-8", "replace")


def _cut_back(fd: int, size: int, path: Path) -> None:
    """Remove a partly written entry; if even that fails, the next append cuts the torn tail."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        log.warning("journal.cut_back_failed", path=str(path), size=size)


def _cut_torn_tail(fd: int, path: Path) -> None:
    """Truncate a last line with no newline (a kill or a full disk mid-write) before appending."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    keep = size
    while keep > 0:
        chunk = os.pread(fd, min(keep, 65536), max(0, keep - 65536))
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = keep - len(chunk) + newline + 1
            break
        keep -= len(chunk)
    os.ftruncate(fd, keep)
    log.warning("journal.torn_tail_cut", path=str(path), bytes=size - keep)


class SessionStore:
    """The journal directory: create, read, list, delete and expire session journals."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def open(cls, directory: Path, *, keep_days: float | None = 30) -> SessionStore:
        """Create or check the directory; raises StateDirError saying what is wrong with it."""
        prepare_state_dir(directory)
        return cls.checked(directory, keep_days=keep_days)

    @classmethod
    def checked(cls, directory: Path, *, keep_days: float | None = 30) -> SessionStore:
        """The store of a directory `prepare_state_dir` accepted (at start, before `initialize`),
        with the journals untouched for `keep_days` removed."""
        store = cls(directory)
        if keep_days:
            store.expire(keep_days)
        return store

    def _path(self, session_id: str) -> Path:
        if not is_session_id(session_id):
            raise ValueError(f"not a session id of this agent: {session_id[:80]!r}")
        return self.directory / f"{session_id}.jsonl"

    def create(self, session_id: str, cwd: str, roots: tuple[str, ...] = ()) -> Journal:
        """A new journal, its header naming the session's cwd and additional roots.

        The header is written, not fsynced: it holds nothing the user was told is kept (D7), and
        the session's first synced entry (its first prompt) makes it durable too. A killed process
        loses nothing written; a crash of the machine could leave a journal without its header,
        which session/list skips and session/load refuses. An fsync here was session/new's one wait
        on the disk (1-25 ms on the 2-core box, D4)."""
        journal = Journal(self._path(session_id))
        journal.append(MetaEntry(JOURNAL_VERSION, session_id, cwd, now_iso(), roots), sync=False)
        journal.fresh = True
        return journal

    def create_whole(
        self, session_id: str, cwd: str, roots: tuple[str, ...], entries: Iterable[Entry]
    ) -> None:
        """A new journal that holds `entries` after its header from the start (a fork): written
        to a hidden temporary file, fsynced, then renamed into place, so a crash leaves either no
        journal or the whole one, never a session with part of a history.

        Raises:
            JournalWriteFailed: it could not be written (nothing is left behind).
        """
        path = self._path(session_id)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        header = MetaEntry(JOURNAL_VERSION, session_id, cwd, now_iso(), roots)
        try:
            fd = _open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            data = b"".join(_line(entry) for entry in (header, *entries))
            try:
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(temporary, path)  # never over another journal (a fresh id has none)
        except OSError as exc:
            raise JournalWriteFailed(path, exc) from exc
        finally:
            temporary.unlink(missing_ok=True)

    def reopen(self, session_id: str) -> Journal:
        return Journal(self._path(session_id))

    def exists(self, session_id: str) -> bool:
        """A journal of that id: a regular file, never a symlink (whatever it points to)."""
        if not is_session_id(session_id):
            return False
        try:
            return stat.S_ISREG(os.lstat(self._path(session_id)).st_mode)
        except OSError:
            return False

    def path(self, session_id: str) -> Path:
        return self._path(session_id)

    def checkpoints(self, session_id: str) -> Path:
        """Where the session's checkpoints live (`checkpoints.py`): removed with its journal."""
        self._path(session_id)  # only the agent's own ids name a folder
        return self.directory / "checkpoints" / session_id

    def read(self, session_id: str) -> list[Entry]:
        """Every complete entry; a torn last line is skipped with a log line, and so is an entry
        of a kind this agent does not know.

        Raises:
            JournalCorrupt: the file is not this agent's journal (which line, and why).
            OSError: it cannot be opened (a symlink, gone, unreadable).
        """
        return list(self.entries_at(self._path(session_id)))

    def entries_at(self, path: Path) -> Iterator[Entry]:
        """The entries of the journal at `path`, checked as `read` checks them, as they are read."""
        fd = _open(path, os.O_RDONLY)
        ids = _ToolIds(path)
        with os.fdopen(fd, "rb") as f:
            number = 0
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    log.warning("journal.torn_line", path=str(path), line=number)
                    number -= 1
                    break
                entry = _parse(path, number, raw)
                if number == 1 and not isinstance(entry, MetaEntry):
                    raise JournalCorrupt(path, 1, "it does not start with a session header")
                if entry is None:
                    log.info("journal.unknown_entry_skipped", path=str(path), line=number)
                    continue
                ids.check(entry, number)
                yield entry
            if number == 0:
                raise JournalCorrupt(path, 1, "it holds no complete entry")

    def delete(self, session_id: str) -> None:
        """Remove a journal (a symlink in its place is removed, never what it points to)."""
        if is_session_id(session_id):
            self._path(session_id).unlink(missing_ok=True)
            _remove_tree(self.checkpoints(session_id))

    def expire(self, keep_days: float) -> int:
        """Remove journals untouched for `keep_days`; returns how many."""
        cutoff = time.time() - keep_days * 86400
        removed = 0
        for path in self.directory.glob("*.jsonl"):
            try:
                if path.lstat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        if removed:
            log.info("journal.expired", removed=removed, keep_days=keep_days)
        for folder in _listed(self.directory / "checkpoints"):  # with their journal, or orphaned
            if not self.exists(folder.name):
                _remove_tree(folder)
        return removed


def _listed(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []


def _remove_tree(path: Path) -> None:
    """Remove a session's checkpoint folder (a symlink in its place is removed, never followed)."""
    if path.is_symlink():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _parse(path: Path, number: int, raw: bytes) -> Entry | None:
    """One line as an entry (None: a newer agent's kind), or JournalCorrupt saying what is wrong."""
    try:
        return read_entry(raw)
    except EntryProblem as exc:
        raise JournalCorrupt(path, number, str(exc)) from None


def creation_error(store: SessionStore, session_id: str, exc: OSError) -> RpcError:
    """-32010 for a session whose journal cannot be created, naming the state dir and the way out."""
    failed = exc if isinstance(exc, JournalWriteFailed) else JournalWriteFailed(store.path(session_id), exc)
    state = str(store.directory)
    return RpcError.journal_error(
        f"Cannot create the session: {failed} (state dir {state}: free space there, "
        "point --state-dir elsewhere, or run with --no-journal)",
        {"stateDir": state, "journal": str(failed.path)},
    )


class _ToolIds:
    """Where each tool call's id was first seen: a journal holds each tool_use and each result once
    (a journal copied into itself would send the API duplicate ids, a 400 on every request)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: dict[tuple[str, str], int] = {}

    def check(self, entry: Entry, number: int) -> None:
        """Raises JournalCorrupt at the second sight of an id, or of a header."""
        if isinstance(entry, MetaEntry) and number > 1:
            raise JournalCorrupt(self.path, number, "a second session header (is the journal duplicated?)")
        if isinstance(entry, AssistantEntry):
            found = [("tool_use", b["id"]) for b in entry.blocks if b["type"] == "tool_use"]
        elif isinstance(entry, ToolResultEntry):
            found = [("tool_result", entry.block["tool_use_id"])]
        elif isinstance(entry, PromptEntry | UserEntry):
            found = [("tool_result", b["tool_use_id"]) for b in entry.blocks if b["type"] == "tool_result"]
        else:
            return
        for key in found:
            first = self.seen.setdefault(key, number)
            if first != number:
                raise JournalCorrupt(
                    self.path,
                    number,
                    f"the {key[0]} {key[1]!r} appears again (first at line {first}): "
                    "is the journal duplicated?",
                )
