"""The journal's entries of a session's workspace history: what each turn changed on disk, and the
rewinds that put it back.

A turn journals a `CheckpointEntry` before it first changes anything (the roots' snapshots, the
files' before-images) and a `ChangesEntry` when it ends; a rewind journals a `RewindEntry` before it
touches a file and a `RewoundEntry` once its files are back. `journal/checkpoints.py` and
`rewind.py` write and read them.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import NonNegativeInt

from acp_agent.turn.journal.journaled import journaled

__all__ = [
    "ChangesEntry",
    "CheckpointEntry",
    "FileChange",
    "FileImage",
    "FileState",
    "RewindEntry",
    "RewoundEntry",
    "RootTree",
]


class FileState(NamedTuple):
    """A file's content as a checkpoint keeps it: its git blob id (the SHA-1 of `blob <size>\\0`
    and the bytes, whether git stored it or the agent's own store did) and its git mode
    (`100644`, `100755`, or `120000` for a symlink, whose content is its target)."""

    blob: str
    mode: str


class FileChange(NamedTuple):
    """One file changed: its absolute path, what it held before and after (None: it did not exist)."""

    path: str
    before: FileState | None
    after: FileState | None


class FileImage(NamedTuple):
    """A file as it was before an edit tool wrote it (`state` None: it did not exist)."""

    path: str
    state: FileState | None


class RootTree(NamedTuple):
    """A session root's snapshot: its tree in the session's shadow git store."""

    root: str
    tree: str


@journaled
class CheckpointEntry:
    """What a turn's changes are measured from, journaled before the turn first changes anything:
    the snapshot of each root (`trees`, `journal/shadow_git.py`) before its first change,
    and the before-image of each file an edit tool is about to write (`images`), kept in the
    session's checkpoint store. A turn may journal several: the trees once, an image per file."""

    trees: tuple[RootTree, ...] = ()
    images: tuple[FileImage, ...] = ()
    type: Literal["checkpoint"] = "checkpoint"


@journaled
class ChangesEntry:
    """What a turn changed in the workspace, journaled when it ends: each file with what it held
    before the turn and after it, and the roots' snapshots after it. `prompt` names the turn's
    prompt as a `RewindEntry` does (a turn a crash ended is closed later, by the next turn or
    rewind)."""

    prompt: NonNegativeInt
    changes: tuple[FileChange, ...] = ()
    trees: tuple[RootTree, ...] = ()
    """The roots' snapshots after the turn (what a later rewind may find the turn left)."""
    type: Literal["changes"] = "changes"


@journaled
class RewindEntry:
    """The session went back to before a prompt (`/rewind`, `_session/rewind`).

    `prompt` names the prompt by its place among every `prompt` entry of the journal (0 for the
    first one ever written, rewound or not), so it still names the same one after earlier rewinds.
    With `scope` "all" or "chat", every entry from that prompt on is left out of the conversation
    (`journal/timeline.py`); with "all" or "files", `restore` lists the files put back,
    each `before` what the turns left there and `after` what it held before the prompt. The entry is
    written before any file is touched: a crash mid-restore is finished by the next load.
    `conflicts` are files someone else changed since, left as they are.
    """

    prompt: NonNegativeInt
    scope: Literal["all", "chat", "files"] = "all"
    restore: tuple[FileChange, ...] = ()
    conflicts: tuple[str, ...] = ()
    type: Literal["rewind"] = "rewind"


@journaled
class RewoundEntry:
    """A rewind's files are back; `conflicts` are those found changed by someone else while it ran
    (or before a crash's rewind was finished), left as they were."""

    conflicts: tuple[str, ...] = ()
    type: Literal["rewound"] = "rewound"
