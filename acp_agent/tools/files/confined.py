"""Opening a checked path without following a symlink planted after the check (openat-style).

`resolve_inside` checks a path and returns it resolved: every component a real directory, no
symlink left. Between that check and the open, someone with write access to the working directory
could swap a directory on the path for a symlink to the outside. So the path is walked again one
component at a time, each opened relative to the directory before it with O_NOFOLLOW
(`os.open(..., dir_fd=…)`): a component that has become a symlink fails the walk instead of being
followed. Files are then opened, created, and replaced (temp file and rename) relative to the
directory fd at the end of the walk, so no byte is read or written anywhere else.

A directory found once and read from later (a skill's) is pinned when it is found (`DirPin`: its
resolved path, device and inode); `pinned_dir` walks to it the same way and refuses it unless it
is still that directory, and files beneath it are reached from its fd (`parent_dir(base=…)`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from acp_agent.errors import ToolError

__all__ = ["DIR_FLAGS", "NOFOLLOW", "DirPin", "changed_on_the_way", "parent_dir", "pin_dir", "pinned_dir"]

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
"""A directory to walk through: O_PATH (Linux) needs no read permission, only search."""
_SWAPPED = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}  # what a symlink met with O_NOFOLLOW gives


def changed_on_the_way(exc: OSError, shown: str) -> ToolError | None:
    """The refusal when an open failed because a component turned into a symlink, else None."""
    if exc.errno in _SWAPPED:
        return ToolError(
            f"{shown!r} changed while it was being opened (a directory or the file on "
            f"its path is now a symlink); refused: paths stay inside the working "
            f"directory"
        )
    return None


@contextmanager
def parent_dir(path: Path, shown: str, *, create: bool = False, base: int | None = None) -> Iterator[int]:
    """A directory fd on `path.parent` (absolute, resolved), reached from `/` without following
    any symlink; with `base` (a directory fd), `path` is relative and reached from there instead,
    never above it. With `create`, missing directories are made on the way (like mkdir -p).

    Raises:
        ToolError: a component is now a symlink or not a directory, or is missing (not `create`).
    """
    if path.is_absolute() == (base is not None):
        raise ValueError(f"{'a relative' if base is not None else 'an absolute'} path is needed: {path}")
    if base is not None and ".." in path.parts:
        raise ValueError(f"a path beneath a directory has no '..': {path}")
    with _walked(path.parent, shown, create, base) as fd:
        yield fd


@contextmanager
def _walked(directory: Path, shown: str, create: bool, base: int | None) -> Iterator[int]:
    """A directory fd on `directory` itself, walked one component at a time (see `parent_dir`)."""
    fd = os.open(directory.anchor, DIR_FLAGS) if base is None else os.open(".", DIR_FLAGS, dir_fd=base)
    try:
        for part in directory.parts[1:] if base is None else directory.parts:
            try:
                next_fd = _enter(fd, part, create)
            except OSError as exc:
                raise changed_on_the_way(exc, shown) or _missing(exc, shown) from exc
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class DirPin:
    """A directory as it was found: its resolved path, device and inode."""

    path: Path
    device: int
    inode: int


def pin_dir(directory: Path) -> DirPin | None:
    """`directory`'s identity now (None when it is not a directory). Blocking: a few stats."""
    path = Path(os.path.realpath(directory))
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return DirPin(path, info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


@contextmanager
def pinned_dir(pin: DirPin, shown: str) -> Iterator[int]:
    """A directory fd on the pinned directory, reached from `/` without following any symlink.

    Raises:
        ToolError: a component is now a symlink, or it is no longer the same directory.
    """
    with _walked(pin.path, shown, False, None) as fd:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (pin.device, pin.inode):
            raise ToolError(
                f"{shown!r} is no longer the directory it was when it was found (it was replaced); refused"
            )
        yield fd


def _enter(fd: int, part: str, create: bool) -> int:
    try:
        return os.open(part, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):  # made meanwhile: the open still refuses a symlink
        os.mkdir(part, 0o777, dir_fd=fd)
    return os.open(part, DIR_FLAGS, dir_fd=fd)


def _missing(exc: OSError, shown: str) -> ToolError:
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"no such file or directory: {shown!r}")
    if isinstance(exc, PermissionError):
        return ToolError(f"permission denied: {shown!r}")
    return ToolError(f"cannot open {shown!r}: {exc.strerror or exc}")
