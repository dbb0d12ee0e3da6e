"""Opening a checked path without following a symlink planted after the check (openat-style).

`resolve_inside` checks a path and returns it resolved: every component a real directory, no
symlink left. Between that check and the open, someone with write access to the working directory
could swap a directory on the path for a symlink to the outside. So the path is walked again one
component at a time, each opened relative to the directory before it with O_NOFOLLOW
(`os.open(..., dir_fd=…)`): a component that has become a symlink fails the walk instead of being
followed. Files are then opened, created, and replaced (temp file and rename) relative to the
directory fd at the end of the walk, so no byte is read or written anywhere else.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acp_agent.errors import ToolError

__all__ = ["DIR_FLAGS", "NOFOLLOW", "changed_on_the_way", "parent_dir"]

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
def parent_dir(path: Path, shown: str, *, create: bool = False) -> Iterator[int]:
    """A directory fd on `path.parent` (absolute, resolved), reached from `/` without following
    any symlink; with `create`, missing directories are made on the way (like mkdir -p).

    Raises:
        ToolError: a component is now a symlink or not a directory, or is missing (not `create`).
    """
    if not path.is_absolute():
        raise ValueError(f"not an absolute path: {path}")
    fd = os.open(path.anchor, DIR_FLAGS)
    try:
        for part in path.parent.parts[1:]:
            try:
                next_fd = _enter(fd, part, create)
            except OSError as exc:
                raise changed_on_the_way(exc, shown) or _missing(exc, shown) from exc
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


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
