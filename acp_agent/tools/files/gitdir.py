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
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_INDEX_BYTES",
    "Repository",
    "find_repository",
    "hooks_path_values",
    "index_tracks",
    "looks_like_git_dir",
]

MAX_CONFIG_BYTES = 1 << 20
MAX_INDEX_BYTES = 64 << 20
"""A larger index is not read: every file counts as tracked (the careful answer)."""
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


def index_tracks(repository: Repository, relative: str) -> bool:
    """Whether the repository's index holds `relative` ('/'-separated, from the top): read from
    the index file itself (versions 2 to 4), without running git, which would read the
    repository's config and could run what it names. A split index (`core.splitIndex`) is read
    with its shared index, and a sparse index's directory entries hold what is below them. An
    index this cannot read counts as holding the file (the careful answer); no index, as holding
    nothing."""
    target = relative.encode("utf-8", "surrogateescape")
    hash_size = _hash_size(repository)
    index = repository.git_dir / "index"
    for _ in range(2):  # the index, then the shared index its `link` names
        try:
            with open(index, "rb") as f:
                data = f.read(MAX_INDEX_BYTES + 1)
        except FileNotFoundError:
            return index.name != "index"  # a split index's missing half: careful
        except OSError:
            return True
        if len(data) > MAX_INDEX_BYTES:
            return True
        try:
            found, shared = _index_has(data, target, hash_size)
        except (IndexError, ValueError, struct.error):
            return True
        if found or shared is None:
            return found
        index = repository.git_dir / f"sharedindex.{shared.hex()}"
    return True


def _hash_size(repository: Repository) -> int:
    config = (_read_small(repository.common_dir / "config") or "").casefold()
    return 32 if re.search(r"objectformat\s*=\s*sha256", config) else 20


def _index_has(data: bytes, target: bytes, hash_size: int) -> tuple[bool, bytes | None]:
    """Walk the index entries (git's `Documentation/gitformat-index.txt`) for `target` (or a
    sparse directory entry above it); when absent, the name of the shared index that its `link`
    extension names (a split index keeps most entries there), or None."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    position, previous = 12, b""
    for _ in range(count):
        start = position
        position += 40 + hash_size  # ten 32-bit stat fields, then the object name
        (flags,) = struct.unpack(">H", data[position : position + 2])
        position += 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:  # the name is the previous one, cut by N bytes, then this suffix
            cut, position = _varint(data, position)
            end = data.index(b"\0", position)
            name = previous[: len(previous) - cut] + data[position:end]
            position = end + 1
        else:  # NUL-padded to a multiple of 8 bytes
            end = data.index(b"\0", position)
            name = data[position:end]
            position = start + ((end - start) // 8 + 1) * 8
        if name == target or (name.endswith(b"/") and target.startswith(name)):
            return True, None
        previous = name
    while position + 8 <= len(data) - hash_size:  # the extensions, then the checksum
        signature = data[position : position + 4]
        (size,) = struct.unpack(">I", data[position + 4 : position + 8])
        if signature == b"link":
            return False, data[position + 8 : position + 8 + hash_size]
        position += 8 + size
    return False, None


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """git's offset varint (`varint.c`): the value, and where the bytes after it start."""
    byte = data[position]
    position += 1
    value = byte & 127
    while byte & 128:
        byte = data[position]
        position += 1
        value = ((value + 1) << 7) + (byte & 127)
    return value, position
