"""Where git keeps what it runs for a file's repository, found the way git finds it, not by name.

A `.git` may be a file (`gitdir: ../elsewhere`, as in worktrees and submodules) naming the real
git dir, whose `commondir` may name another; `core.hooksPath` (in the repository's config or the
user's) moves the hooks anywhere, often into the tree (`.githooks/`). `tools/files/sensitive.py` treats
all of these as places whose contents make git run code.

Reads are small and safe on a hostile tree: O_NONBLOCK (a FIFO is never waited on), regular files
only, at most `MAX_CONFIG_BYTES`; what cannot be read is simply not known.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_CONFIG_BYTES", "Repository", "find_repository", "hooks_path_values", "looks_like_git_dir"]

MAX_CONFIG_BYTES = 1 << 20
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class Repository:
    """A working tree's top, its git dir and common dir (the same outside worktrees), and the
    directories `core.hooksPath` names (resolved; there may be none)."""

    top: Path
    git_dir: Path
    common_dir: Path
    hooks_paths: tuple[Path, ...]

    @property
    def hook_dirs(self) -> tuple[Path, ...]:
        return (self.common_dir / "hooks", *self.hooks_paths)


def _read_small(path: Path) -> str | None:
    """A small regular file's text, or None (missing, special, too big, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return None
        return f.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")


def hooks_path_values(config_text: str) -> list[str]:
    """Every `core.hooksPath` value in a git config file (git uses the last one; all are kept)."""
    values, section = [], ""
    for line in config_text.splitlines():
        if match := _SECTION.match(line):
            section, line = match.group(1).casefold(), match.group(2)
        entry = _ENTRY.match(line)
        if section == "core" and entry and entry.group(1).casefold() == "hookspath":
            value = re.split(r"\s[#;]", entry.group(2), maxsplit=1)[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            if value:
                values.append(value.replace("\\\\", "\\"))
    return values


def _git_dir(dot_git: Path) -> Path | None:
    """The git dir a `.git` names: itself when a directory, else its `gitdir:` line."""
    try:
        mode = os.stat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return dot_git
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    lines = text[len("gitdir:") :].strip().splitlines()
    return Path(os.path.realpath(dot_git.parent / lines[0].strip())) if lines else None


def _common_dir(git_dir: Path) -> Path:
    named = _read_small(git_dir / "commondir")
    if named and named.strip():
        return Path(os.path.realpath(git_dir / named.strip().splitlines()[0]))
    return git_dir


def _user_configs() -> list[Path]:
    home = Path(os.path.expanduser("~"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [Path("/etc/gitconfig"), home / ".gitconfig", Path(xdg) / "git" / "config"]


def looks_like_git_dir(directory: Path) -> bool:
    """Whether git would take `directory` for a git dir (its own test: HEAD, refs/, and objects/
    or a commondir), whoever points at it: a bare repository, or a submodule's or worktree's
    git dir that some `.git` file names."""
    try:
        if not os.path.lexists(directory / "HEAD") or not os.path.isdir(directory / "refs"):
            return False
        return os.path.isdir(directory / "objects") or os.path.isfile(directory / "commondir")
    except OSError:
        return False


def find_repository(directory: Path) -> Repository | None:
    """The repository whose working tree holds `directory` (absolute, resolved), or None."""
    for top in (directory, *directory.parents):
        git_dir = _git_dir(top / ".git")
        if git_dir is not None:
            break
    else:
        return None
    common = _common_dir(git_dir)
    values = []
    for config in (*_user_configs(), common / "config", git_dir / "config.worktree"):
        values += hooks_path_values(_read_small(config) or "")
    hooks = tuple(Path(os.path.realpath(top / os.path.expanduser(value))) for value in values)
    return Repository(top, git_dir, common, hooks)
