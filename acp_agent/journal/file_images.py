"""A file's content as a checkpoint keeps it, read from disk, stored and put back.

The edit tools' before-images go to the session's own store (`images/`, one zlib file per blob,
named by git's blob id so the journal names a file's content one way whatever kept it), written
before the edit touches the file. Files are read and written without following a
symlink: a symlink is kept and restored as a link (its target is its content, as git keeps it).

What a rewind reads and writes is reached from its root one directory at a time (`reached`), each
opened relative to the one before it without following a link, as the file tools open theirs
(`tools/files/confined.py`): a directory a command swapped for a link between two turns is
refused (`OffRoot`), never written through, and the temporary file of a put-back is made in the
directory reached, so no byte lands outside the roots.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acp_agent.errors import AgentError
from acp_agent.journal.shadow_git import blob_id
from acp_agent.tools.files.confined import DIR_FLAGS, NOFOLLOW
from acp_agent.turn.journal.entries import FileState

__all__ = ["MAX_IMAGE_BYTES", "ImageStore", "OffRoot", "Reached", "current_state", "reached", "read_state"]

MAX_IMAGE_BYTES = 64 * 1024 * 1024
"""A file larger than this gets no before-image (the edit tools never write one that large)."""

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


def read_state(path: Path) -> tuple[FileState, bytes] | None:
    """The file at `path` (not followed if a symlink) and its content; None when there is none
    (or it is a directory, a device, too large to keep)."""
    return _state_at(None, path)


def current_state(path: Path) -> FileState | None:
    """What `path` holds now, as a checkpoint names it (None: nothing there)."""
    found = read_state(path)
    return found[0] if found else None


def _state_at(directory: int | None, name: str | Path) -> tuple[FileState, bytes] | None:
    """`name` (in the directory fd `directory`, else a path) read without following it."""
    try:
        info = os.lstat(name, dir_fd=directory)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(name, dir_fd=directory))
        return FileState(blob_id(data), SYMLINK), data
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IMAGE_BYTES:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=directory)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    mode = EXECUTABLE if info.st_mode & 0o100 else REGULAR
    return FileState(blob_id(data), mode), data


class OffRoot(AgentError):
    """A path a rewind would touch is not reached inside its root: it lies outside the root, or a
    directory on its way (the root's own included) is now a link or not a directory."""


_SWAPPED = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}  # what a link met with O_NOFOLLOW gives


@contextmanager
def reached(path: Path, root: Path) -> Iterator[Reached]:
    """`path` reached from `root` (absolute, resolved) one directory at a time, never through a
    link; a directory still missing is left for `Reached.put` to make. Blocking.

    Raises:
        OffRoot: `path` is not below `root`, or a directory on the way is a link or not one.
    """
    try:
        relative = path.relative_to(root)
    except ValueError:
        raise OffRoot(f"{path} is outside {root}") from None
    if not relative.parts or ".." in relative.parts:
        raise OffRoot(f"{path} is not a file below {root}")
    fds: list[int] = []
    try:
        fds.append(_enter(os.open(root.anchor, DIR_FLAGS), root.parts[1:], path, close=True))
        for part in relative.parts[:-1]:
            try:
                fds.append(_enter(fds[-1], (part,), path))
            except OffRoot as exc:
                if not isinstance(exc.__cause__, FileNotFoundError):
                    raise
                break
        yield Reached(relative, fds)
    finally:
        for fd in fds:
            os.close(fd)


def _enter(fd: int, parts: tuple[str, ...], path: Path, *, close: bool = False) -> int:
    """The directory fd at the end of `parts` below `fd`, entered without following a link (`fd`
    closed when `close`)."""
    for part in parts:
        try:
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if close:
                os.close(fd)
            shown = "is missing" if isinstance(exc, FileNotFoundError) else "is a link or not a directory"
            if isinstance(exc, FileNotFoundError) or exc.errno in _SWAPPED:
                raise OffRoot(f"{part!r} on the way to {path} {shown}") from exc
            raise
        if close:
            os.close(fd)
        fd, close = next_fd, True
    return fd


class Reached:
    """A rewind's file reached inside its root (`reached`): read and written only through the
    directory fds of its way, so a link planted on it since is never followed."""

    def __init__(self, relative: Path, fds: list[int]) -> None:
        self.relative = relative
        self.fds = fds  # the root's, then each directory on the way that exists (closed by `reached`)
        self.name = relative.name

    @property
    def complete(self) -> bool:
        """Every directory on the way exists."""
        return len(self.fds) == len(self.relative.parts)

    def state(self) -> tuple[FileState, bytes] | None:
        """What the file holds now and its content (None: nothing there)."""
        return _state_at(self.fds[-1], self.name) if self.complete else None

    def put(self, state: FileState | None, data: bytes | None) -> None:
        """Put the file back to `state` (`data` its content), or remove it (None); a file is
        replaced whole (a temporary file beside it, in the directory reached, renamed over it), so
        a kill leaves the old or the new content (not synced: the rewind's journal entry is, and
        the next load finishes what a crash left). Directories it needs are made; those its
        removal leaves empty are removed, up to the root.

        Raises:
            OffRoot: a directory made on the way turned into a link meanwhile.
            OSError: the file cannot be written (a conflict for the rewind).
        """
        if state is None:
            if self.complete:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.name, dir_fd=self.fds[-1])
                self._remove_empty_parents()
            return
        assert data is not None
        while not self.complete:
            part = self.relative.parts[len(self.fds) - 1]
            with contextlib.suppress(FileExistsError):  # made meanwhile: the open still refuses a link
                os.mkdir(part, 0o777, dir_fd=self.fds[-1])
            self.fds.append(_enter(self.fds[-1], (part,), self.relative))
        directory, name = self.fds[-1], self.name
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(name, dir_fd=directory).st_mode):
                os.rmdir(name, dir_fd=directory)  # an empty one (a command made it there); else a conflict
        temp = f".{name}.{secrets.token_hex(6)}.acp-rewind"
        if state.mode == SYMLINK:
            os.symlink(os.fsdecode(data), temp, dir_fd=directory)
        else:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600, dir_fd=directory)
        try:
            if state.mode != SYMLINK:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    os.fchmod(f.fileno(), self._mode(executable=state.mode == EXECUTABLE))
            os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=directory)
            raise

    def _mode(self, *, executable: bool) -> int:
        """The permission bits of the file being replaced (0o644 for a new one or a link), x as
        `executable`."""
        try:
            info = os.lstat(self.name, dir_fd=self.fds[-1])
            bits = info.st_mode & 0o666 if stat.S_ISREG(info.st_mode) else 0o644
        except OSError:
            bits = 0o644
        return bits | ((bits & 0o444) >> 2 if executable else 0)

    def _remove_empty_parents(self) -> None:
        """Remove the directories on the way, deepest first, while they are empty (a command's new
        folders), never the root."""
        for depth in range(len(self.fds) - 1, 0, -1):
            try:
                os.rmdir(self.relative.parts[depth - 1], dir_fd=self.fds[depth - 1])
            except OSError:
                return


class ImageStore:
    """Blobs by git blob id in `directory`, zlib-compressed, each whole once written (renamed
    into place: a kill never leaves half of one; like the journal's entries between two syncs, a
    power cut may lose the last ones)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, blob: str) -> Path:
        return self.directory / blob[:2] / blob[2:]

    def keep(self, blob: str, data: bytes) -> None:
        """Store `data` under `blob` (already there: nothing to do)."""
        target = self._path(blob)
        if target.exists():
            return
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(zlib.compress(data, 1))
            os.replace(name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise

    def get(self, blob: str) -> bytes | None:
        try:
            return zlib.decompress(self._path(blob).read_bytes())
        except (OSError, zlib.error):
            return None

    def held(self) -> set[str]:
        """Every blob id the store holds."""
        if not self.directory.is_dir():
            return set()
        return {f"{d.name}{f.name}" for d in self.directory.iterdir() if d.is_dir() for f in d.iterdir()}

    def drop(self, blob: str) -> None:
        with contextlib.suppress(OSError):
            self._path(blob).unlink()
