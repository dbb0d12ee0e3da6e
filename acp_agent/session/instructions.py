"""Project instructions for the system prompt: AGENTS.md (and CLAUDE.md) files the user wrote.

Read once, when a session's runner is built (a new, loaded or resumed session), so they stay the
same for every request of the session and keep the cached prompt prefix valid. Looked for in the
user's config dir, then in every directory from the repository root (the nearest one holding
`.git`; without one, the user's home or the filesystem root) down to the session's cwd. A total
cap keeps a huge file from filling the context: nearer files get the room first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["NAMES", "TOTAL_CAP", "Instructions", "find_instruction_files", "read_instructions"]

NAMES = ("AGENTS.md", "CLAUDE.md")
TOTAL_CAP = 32 * 1024
"""Bytes of instructions, all files together, that reach the system prompt."""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One file in use: `kept` of its `size` bytes reached the prompt."""

    path: Path
    size: int
    kept: int
    text: str
    user_level: bool = False
    cap: int = TOTAL_CAP

    @property
    def note(self) -> str:
        """How the file is named in the prompt and in /status."""
        where = " (user-level)" if self.user_level else ""
        if self.kept >= self.size:
            return f"{self.path}{where}"
        cap = f"the {self.cap:,}-byte cap on instructions"
        if not self.kept:
            return f"{self.path}{where} (left out: {cap} was reached)"
        return f"{self.path}{where} (cut at {cap}: the first {self.kept:,} of {self.size:,} bytes)"


@dataclass(frozen=True, slots=True)
class Instructions:
    """The files found, general to specific (user-level first, the cwd's last)."""

    files: tuple[InstructionFile, ...] = ()

    def prompt_section(self) -> str:
        """The system prompt's part: a line naming each file, then each file's text."""
        if not self.files:
            return ""
        parts = [
            "Project instructions, from the files below (later, more specific files win "
            "where they disagree). Follow them unless the user says otherwise."
        ]
        parts.extend(f"\n--- {item.note} ---\n{item.text}".rstrip() for item in self.files)
        return "\n".join(parts)


def _directories(cwd: Path, home: Path | None) -> list[Path]:
    """cwd and its parents up to the repository root (or home, or /), nearest first."""
    found = []
    for directory in (cwd, *cwd.parents):
        found.append(directory)
        if (directory / ".git").exists() or directory == home:
            break
    return found


def find_instruction_files(
    cwd: Path, *, home: Path | None, config_dir: Path | None
) -> list[tuple[Path, bool]]:
    """(path, user_level) of every instruction file, nearest first; a file seen twice (a symlink)
    counts once."""
    candidates = [(directory / name, False) for directory in _directories(cwd, home) for name in NAMES]
    if config_dir is not None:
        candidates += [(config_dir / name, True) for name in NAMES]
    seen: set[Path] = set()
    out = []
    for path, user_level in candidates:
        try:
            if not path.is_file():  # a regular file (a FIFO would block the read)
                continue
            real = path.resolve()
        except OSError:
            continue
        if real not in seen:
            seen.add(real)
            out.append((path, user_level))
    return out


def _read(path: Path, room: int) -> tuple[int, int, str] | None:
    """(size, kept, text) with at most `room` bytes read, cut at a character boundary."""
    try:
        with path.open("rb") as f:
            size = path.stat().st_size
            data = f.read(room + 1)
    except OSError:
        return None
    size = max(size, len(data))
    if len(data) <= room:
        return size, size, data.decode("utf-8", "replace")
    text = data[:room].decode("utf-8", "replace").rstrip("\ufffd")
    return size, len(text.encode("utf-8")), text


def read_instructions(
    cwd: Path, *, home: Path | None, config_dir: Path | None, cap: int = TOTAL_CAP
) -> Instructions:
    """Read the instruction files for a session rooted at `cwd`, within `cap` bytes in all."""
    room = cap
    read: list[InstructionFile] = []
    for path, user_level in find_instruction_files(cwd, home=home, config_dir=config_dir):
        got = _read(path, room)
        if got is None:
            continue
        size, kept, text = got
        room = room - kept if kept == size else 0  # once one is cut, the cap is reached
        read.append(InstructionFile(path, size, kept, text, user_level, cap))
    user = [f for f in read if f.user_level]
    project = [f for f in read if not f.user_level]
    project.sort(key=lambda f: (len(f.path.parent.parts), NAMES.index(f.path.name)))
    return Instructions(tuple(user + project))
