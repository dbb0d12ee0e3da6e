"""A file's content as a checkpoint keeps it, read from disk, stored and put back.

The edit tools' before-images go to the session's own store (`images/`, one zlib file per blob,
named by git's blob id so the journal names a file's content one way whatever kept it), written
before the edit touches the file. Files are read and written without following a
symlink: a symlink is kept and restored as a link (its target is its content, as git keeps it).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import zlib
from pathlib import Path

from acp_agent.session.journal.shadow_git import blob_id
from acp_agent.turn.journal.entries import FileState

__all__ = ["MAX_IMAGE_BYTES", "ImageStore", "current_state", "read_state", "restore_file"]

MAX_IMAGE_BYTES = 64 * 1024 * 1024
"""A file larger than this gets no before-image (the edit tools never write one that large)."""

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


def read_state(path: Path) -> tuple[FileState, bytes] | None:
    """The file at `path` (not followed if a symlink) and its content; None when there is none
    (or it is a directory, a device, too large to keep)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(path))
        return FileState(blob_id(data), SYMLINK), data
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IMAGE_BYTES:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    mode = EXECUTABLE if info.st_mode & 0o100 else REGULAR
    return FileState(blob_id(data), mode), data


def current_state(path: Path) -> FileState | None:
    """What `path` holds now, as a checkpoint names it (None: nothing there)."""
    found = read_state(path)
    return found[0] if found else None


def restore_file(path: Path, state: FileState | None, data: bytes | None, root: Path) -> None:
    """Put `path` back to `state` (`data` its content), or remove it (None); a file is replaced
    whole (a temporary file renamed over it), so a kill leaves the old or the new content (not
    synced: the rewind's journal entry is, and the next load finishes what a crash left).
    Directories it needs are made; ones its removal leaves empty are removed, up to `root`."""
    if state is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        _remove_empty_parents(path.parent, root)
        return
    assert data is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.isdir(path) and not os.path.islink(path):
        os.rmdir(path)  # an empty one (a command made it where the file was); else OSError: a conflict
    if state.mode == SYMLINK:
        temp = path.parent / f".{path.name}.acp-rewind-{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        os.symlink(os.fsdecode(data), temp)
        os.replace(temp, path)
        return
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".acp-rewind", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(name, _mode(path, executable=state.mode == EXECUTABLE))
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def _mode(path: Path, *, executable: bool) -> int:
    """The permission bits of the file being replaced (0o644 for a new one), x as `executable`."""
    try:
        bits = os.lstat(path).st_mode & 0o666 if not os.path.islink(path) else 0o644
    except OSError:
        bits = 0o644
    return bits | ((bits & 0o444) >> 2 if executable else 0)


def _remove_empty_parents(directory: Path, root: Path) -> None:
    """Remove `directory` and its parents below `root` while they are empty (a command's new
    folders)."""
    while directory != root and directory.is_relative_to(root):
        try:
            os.rmdir(directory)
        except OSError:
            return
        directory = directory.parent


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
