"""Reading a text file a repository provides to the agent (AGENTS.md, and later commands and skills)
under the rules of the file tools, so that a hostile checkout cannot feed it anything else.

A file found by name in a directory the agent walks is read only when:

- it resolves inside `inside` (the directory walked: a link to `~/.ssh/id_rsa`, `/etc/passwd` or
  `/proc/self/environ` is refused), and it is opened through directory fds without following any
  symlink planted after that check (`tools/files/confined.py`), as `read_file` opens a file;
- it is a regular file (a FIFO, socket or device is refused: opened with O_NONBLOCK, so nothing
  waits on it);
- it and the link that names it are owned by the agent's user or by root (a file another user
  planted, say in `/tmp`, is refused; an agent running as root reads only root's files);
- neither the directory holding it nor the one holding the link is world-writable without the
  sticky bit (anyone could swap the file there; in a sticky directory such as `/tmp`, only the
  owner can, and the owner rule above applies);
- at most `max_bytes` of it are read.

A skill's bundled file (`read_pinned_file`) is read under the same rules, beneath the skill's
directory as it was when the skill was found (`confined.DirPin`): reached from that directory's fd,
refused once the directory was replaced, and never one of the agent's hidden paths (`hidden.py`).

`read_provided_file` is blocking: run it in a worker thread (`read_provided_files` does, bounded in
time), never on the event loop.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from acp_agent.errors import ToolError
from acp_agent.tools.files.confined import NOFOLLOW, DirPin, parent_dir, pinned_dir
from acp_agent.tools.files.disk import special_kind
from acp_agent.tools.hidden import HiddenPaths

__all__ = [
    "READ_SECONDS",
    "ProvidedText",
    "Refusal",
    "read_pinned_file",
    "read_provided_file",
    "read_provided_files",
]

READ_SECONDS = 5.0
"""How long reading the provided files may take, all together, before they count as refused."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ProvidedText:
    """A file that was read: `data`, its first bytes (at most `max_bytes`), of `size` bytes."""

    path: Path
    size: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Refusal:
    """A file that exists but was not read, and why (for /status and the logs)."""

    path: Path
    reason: str


def read_provided_file(
    path: Path, *, inside: Path, max_bytes: int, hidden: HiddenPaths | None = None
) -> ProvidedText | Refusal | None:
    """Read the file at `path` (absolute) under the rules above; None when there is no such file.
    With `hidden`, a file that is (or leads to) one of those paths is refused too.

    Blocking (a few syscalls and one bounded read): call it from a worker thread.
    """
    checked = _checked(path, Path(os.path.realpath(inside)), hidden)
    if not isinstance(checked, Path):
        return checked
    try:
        return _read(path, checked, max_bytes, hidden=hidden)
    except (ToolError, OSError) as exc:
        return _failed(path, exc)


def read_pinned_file(
    pin: DirPin, file: str, *, max_bytes: int, hidden: HiddenPaths
) -> ProvidedText | Refusal | None:
    """`file` (relative) beneath the pinned directory, under the rules above; None when there is no
    such file. A link inside it may point to another of its files; nothing is read from outside it,
    from one of the `hidden` paths (but those that hold the directory itself), or once the
    directory has been replaced. Blocking: call it from a worker thread."""
    path = Path(os.path.normpath(pin.path / file))  # `..` taken by name: the check below refuses it
    hidden = hidden.around(pin.path)
    try:
        with pinned_dir(pin, str(pin.path)) as base:  # first: a replaced directory says nothing more
            checked = _checked(path, pin.path, hidden)
            if not isinstance(checked, Path):
                return checked
            return _read(path, checked.relative_to(pin.path), max_bytes, base, hidden)
    except (ToolError, OSError) as exc:
        return _failed(path, exc)


def _failed(path: Path, exc: ToolError | OSError) -> Refusal:
    return Refusal(path, str(exc) if isinstance(exc, ToolError) else exc.strerror or str(exc))


def _checked(path: Path, boundary: Path, hidden: HiddenPaths | None) -> Path | Refusal | None:
    """Where `path` resolves, if it may be read from `boundary` (resolved); else why not, or None
    when there is no such file."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Refusal(path, f"cannot be examined: {exc.strerror or exc}")
    real = Path(os.path.realpath(path))
    if hidden is not None and hidden.hides(real):
        return Refusal(path, _PRIVATE)
    if hidden is not None and (denied := hidden.refusal(path, real)) is not None:
        return Refusal(path, denied)
    if real != boundary and not real.is_relative_to(boundary):
        return Refusal(path, f"it resolves to {real}, outside {boundary}")
    linked = stat.S_ISLNK(link.st_mode)
    if (why := _untrusted(link, "the link" if linked else "it")) or (
        why := _swappable(path.parent, "the link's directory" if linked else "its directory")
    ):
        return Refusal(path, why)
    return real


_PRIVATE = "it leads to the agent's own private files (journals, stored key, profiles)"


def _read(
    path: Path, real: Path, max_bytes: int, base: int | None = None, hidden: HiddenPaths | None = None
) -> ProvidedText | Refusal | None:
    """Open `real` (absolute; or relative to the directory fd `base`) and read it."""
    with parent_dir(real, str(path), base=base) as parent:
        if why := _swappable_mode(os.fstat(parent).st_mode, "its directory"):
            return Refusal(path, why)
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | NOFOLLOW
        try:
            if not stat.S_ISREG(mode := os.stat(real.name, dir_fd=parent, follow_symlinks=False).st_mode):
                return Refusal(path, f"it is {special_kind(mode)}, not a regular file")  # a socket: ENXIO
            fd = os.open(real.name, flags, dir_fd=parent)
        except FileNotFoundError:
            return None  # gone since it was found
        except OSError as exc:
            return Refusal(path, f"cannot be opened: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Refusal(path, f"it is {special_kind(info.st_mode)}, not a regular file")
        if why := _untrusted(info, "it"):
            return Refusal(path, why)
        if hidden is not None and hidden.linked(info):
            return Refusal(path, _PRIVATE)
        data = f.read(max_bytes)
    return ProvidedText(path, max(info.st_size, len(data)), data)


def _untrusted(info: os.stat_result, what: str) -> str:
    """Why a file (or link) with this owner is not read, or "" when its owner is trusted."""
    if info.st_uid in (os.geteuid(), 0):
        return ""
    return f"{what} is owned by uid {info.st_uid}, neither this user (uid {os.geteuid()}) nor root"


def _swappable(directory: Path, what: str) -> str:
    try:
        return _swappable_mode(os.stat(directory).st_mode, what)
    except OSError:
        return ""  # it was just listed; the open below reports what is wrong


def _swappable_mode(mode: int, what: str) -> str:
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        return f"{what} is world-writable (without the sticky bit): anyone could have put it there"
    return ""


async def read_provided_files(
    read: Callable[[], Sequence[T]], *, seconds: float = READ_SECONDS
) -> Sequence[T] | None:
    """Run `read` (which calls `read_provided_file`) in a worker thread, abandoned after `seconds`
    (a file on a hung network disk); None then. The event loop never waits on the disk."""
    with anyio.move_on_after(seconds):
        return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)
    return None
