"""Project instructions for the system prompt: AGENTS.md (and CLAUDE.md) files the user wrote.

Read once, when a session's runner is built (a new, loaded or resumed session), so they stay the
same for every request of the session and keep the cached prompt prefix valid. Looked for in the
user's config dir, then in every directory from the repository root (the nearest one holding
`.git`; without one, the user's home or the filesystem root) down to the session's cwd. A total
cap keeps a huge file from filling the context: nearer files get the room first.

Each file is read under the rules of the file tools (`tools/files/provided.py`): it must resolve inside
the repository (outside one, inside its own directory; a user-level file, inside the config dir),
be a regular file owned by the user or root, and not sit in a world-writable directory without
the sticky bit. A file that breaks a rule is left out and named with its reason in /status and the
logs. The reading runs in a worker thread, bounded in time: a FIFO or a hung disk never stalls the
agent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import structlog

from acp_agent.tools.files.provided import READ_SECONDS, Refusal, read_provided_file, read_provided_files

__all__ = [
    "NAMES",
    "TOTAL_CAP",
    "Instructions",
    "find_instruction_files",
    "load_instructions",
    "read_instructions",
]

log = structlog.get_logger(__name__)

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
    """The files found, general to specific (user-level first, the cwd's last), and those refused."""

    files: tuple[InstructionFile, ...] = ()
    refused: tuple[Refusal, ...] = ()

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

    @property
    def notes(self) -> tuple[str, ...]:
        """How /status names the files: those in use, then each refused one with its reason."""
        return tuple(f.note for f in self.files) + tuple(
            f"{r.path} (refused: {r.reason})" for r in self.refused
        )


def _directories(cwd: Path, home: Path | None) -> tuple[list[Path], Path | None]:
    """cwd and its parents up to the repository root (or home, or /), nearest first, and the
    repository root when there is one."""
    found = []
    for directory in (cwd, *cwd.parents):
        found.append(directory)
        if (directory / ".git").exists():
            return found, directory
        if directory == home:
            break
    return found, None


def find_instruction_files(
    cwd: Path, *, home: Path | None, config_dir: Path | None
) -> list[tuple[Path, bool, Path]]:
    """(path, user_level, the directory it must resolve inside) of every instruction file that
    may exist, nearest first (the reader skips the missing ones)."""
    directories, repository = _directories(cwd, home)
    candidates = [(d / name, False, repository or d) for d in directories for name in NAMES]
    if config_dir is not None:
        candidates += [(config_dir / name, True, config_dir) for name in NAMES]
    return candidates


def _text(data: bytes, size: int) -> tuple[int, str]:
    """(bytes kept, text) of a file's first bytes, cut at a character boundary when cut."""
    if len(data) >= size:
        return size, data.decode("utf-8", "replace")
    text = data.decode("utf-8", "replace").rstrip("\ufffd")
    return len(text.encode("utf-8")), text


def read_instructions(
    cwd: Path, *, home: Path | None, config_dir: Path | None, cap: int = TOTAL_CAP
) -> Instructions:
    """Read the instruction files for a session rooted at `cwd`, within `cap` bytes in all.

    Blocking: `load_instructions` runs it in a worker thread."""
    room = cap
    read: list[InstructionFile] = []
    refused: list[Refusal] = []
    seen: set[Path] = set()  # a file linked to another (CLAUDE.md -> AGENTS.md) counts once
    for path, user_level, inside in find_instruction_files(cwd, home=home, config_dir=config_dir):
        got = read_provided_file(path, inside=inside, max_bytes=room)
        if isinstance(got, Refusal):
            log.warning("instructions.refused", path=str(path), reason=got.reason)
            refused.append(got)
            continue
        if got is None or (real := Path(os.path.realpath(path))) in seen:
            continue
        seen.add(real)
        kept, text = _text(got.data, got.size)
        room = room - kept if kept == got.size else 0  # once one is cut, the cap is reached
        read.append(InstructionFile(path, got.size, kept, text, user_level, cap))
    user = [f for f in read if f.user_level]
    project = [f for f in read if not f.user_level]
    project.sort(key=lambda f: (len(f.path.parent.parts), NAMES.index(f.path.name)))
    return Instructions(tuple(user + project), tuple(refused))


async def load_instructions(cwd: Path, *, home: Path | None, config_dir: Path | None) -> Instructions:
    """`read_instructions` in a worker thread; past READ_SECONDS, none (and that is logged)."""
    found = await read_provided_files(lambda: [read_instructions(cwd, home=home, config_dir=config_dir)])
    if found is None:
        log.warning("instructions.timed_out", cwd=str(cwd), seconds=READ_SECONDS)
        return Instructions(refused=(Refusal(cwd, f"reading instructions took over {READ_SECONDS:g} s"),))
    return found[0]
