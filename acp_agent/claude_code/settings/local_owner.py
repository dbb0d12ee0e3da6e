"""Whose hand made a `.claude/settings.local.json`: the user's, or not.

Claude Code counts a local settings file as the user's when git does not track it. That is not
enough (issue 41): a folder without `.git` (an archive) ships one, a command the user approved
writes one, and with `core.splitIndex` a tracked file looks untracked. Here a local file's
content is the user's only where the user's own hand made it:

- what the agent itself wrote there: its "Always allow" / "Always reject" rules (`saved_rules.py`
  records each one it adds), and
- what was in the file before the agent first ran in that folder, in a git repository whose index
  does not hold the file (not in the project's history).

Everything else in it (a file that came with a folder without git, a file or a key that appeared
later, however written) is read as the project's: it restricts at once, and what it widens waits
for the trust question like `.claude/settings.json` (`setup.py`, `trust.py`).

The record is kept in the state dir (`local-settings.json`, a file the tools never show and the
sandbox covers), per folder: since when the agent knows the folder, and, per local file, the part
of its content that is the user's (`LocalOwners.split` divides a file's data by it, key by key and
rule by rule). A folder is known from the first session opened there. Deleting the record makes
every folder new again: its untracked local files are then taken as they are.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

__all__ = ["LocalOwners", "split_owned"]

log = structlog.get_logger(__name__)

MAX_RECORD_BYTES = 8 << 20
_MISSING = object()


def split_owned(data: dict[str, Any], owned: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`data` divided into the part `owned` holds (the user's) and the rest: objects key by key
    (`permissions`, `env`, `hooks` events), lists item by item (each rule), other values whole."""
    mine: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in data.items():
        have = owned.get(key, _MISSING)
        if isinstance(value, dict) and isinstance(have, dict):
            inner_mine, inner_rest = split_owned(value, have)
            if inner_mine:
                mine[key] = inner_mine
            if inner_rest:
                rest[key] = inner_rest
        elif isinstance(value, list) and isinstance(have, list):
            kept = [item for item in value if item in have]
            other = [item for item in value if item not in have]
            if kept:
                mine[key] = kept
            if other:
                rest[key] = other
        elif have is not _MISSING and value == have:
            mine[key] = value
        else:
            rest[key] = value
    return mine, rest


class LocalOwners:
    """The record of whose hand made the local settings files, per folder (see the module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def owned(
        self, folder: Path, files: Sequence[tuple[Path, dict[str, Any] | None]], *, adoptable: bool
    ) -> dict[Path, dict[str, Any]]:
        """The user's part of each of `folder`'s local `files` (path, data as read or None): the
        record's, or, the first time the agent runs in `folder`, the files as they are when
        `adoptable` (git's index does not hold them), which the record then keeps."""
        folders = self._read()
        entry = folders.get(str(folder))
        if isinstance(entry, dict):
            recorded = entry.get("files")
            recorded = recorded if isinstance(recorded, dict) else {}
            return {p: o for p, _ in files if isinstance(o := recorded.get(str(p)), dict)}
        adopted = {path: data for path, data in files if adoptable and data is not None}
        folders[str(folder)] = {
            "since": _now(),
            "files": {str(p): d for p, d in adopted.items()},
        }
        self._write(folders)
        return adopted

    def add_rules(self, folder: Path, path: Path, behavior: str, texts: Sequence[str]) -> None:
        """The agent wrote `texts` into `permissions.<behavior>` of `path`: they are the user's."""
        folders = self._read()
        entry = _object(folders, str(folder))
        entry.setdefault("since", _now())
        permissions = _object(_object(_object(entry, "files"), str(path)), "permissions")
        rules = permissions.get(behavior)
        if not isinstance(rules, list):
            rules = permissions[behavior] = []
        rules.extend(t for t in dict.fromkeys(texts) if t not in rules)
        self._write(folders)

    def _read(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as f:
                raw = f.read(MAX_RECORD_BYTES + 1)
            data = json.loads(raw) if len(raw) <= MAX_RECORD_BYTES else None
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("claude.local_owners_unreadable", path=str(self.path), error=str(exc)[:200])
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        return dict(folders) if isinstance(folders, dict) else {}

    def _write(self, folders: dict[str, Any]) -> None:
        """The record, replaced whole by a rename (0600 in a 0700 dir); a failure is logged: the
        answers then hold as read this session."""
        text = json.dumps({"version": 1, "folders": folders}, indent=1, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(prefix=".local-settings.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as exc:
            log.warning("claude.local_owners_not_saved", path=str(self.path), error=str(exc)[:200])


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]`, made an object if it is none (a record edited by hand is mended, not trusted)."""
    child = parent.get(key)
    if not isinstance(child, dict):
        child = parent[key] = {}
    return child


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
