"""LocalFileSystem: the `FileSystem` seam on the local disk, for a client without `fs/*`.

Reads refuse binary and non-UTF-8 files (an edit would corrupt them); writes are atomic (a
temporary file in the same directory, then `os.replace`), so a cancel or a crash never leaves a
half-written file, and they keep the mode of the file they replace. Both go through directory fds
reached without following symlinks (`tools/files/confined.py`): a directory swapped for a symlink after
the path was checked makes the call fail, and the temporary file is made in the checked directory.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from acp_agent.errors import ToolError
from acp_agent.tools.files.confined import NOFOLLOW, changed_on_the_way, parent_dir
from acp_agent.tools.files.disk import SNIFF_BYTES, not_regular, open_regular, os_error

__all__ = ["LocalFileSystem"]


@dataclass(frozen=True, slots=True)
class LocalFileSystem:
    """UTF-8 text files on disk, by absolute path (callers have already confined the path)."""

    max_bytes: int = 32 * 1024 * 1024

    async def read_text(self, path: Path) -> str:
        """The whole file as text, line endings untouched.

        Raises:
            ToolError: missing, a directory, unreadable, binary, not UTF-8, or over `max_bytes`.
        """
        return await anyio.to_thread.run_sync(self._read, path, abandon_on_cancel=True)

    async def write_text(self, path: Path, text: str) -> None:
        """Create or replace the file with `text` (UTF-8), creating parent directories.

        Not abandoned on cancel: the write either lands before the call returns or not at all.

        Raises:
            ToolError: the directory cannot be created or the file cannot be written.
        """
        await anyio.to_thread.run_sync(self._write, path, text)

    def _read(self, path: Path) -> str:
        try:
            with open_regular(path, str(path)) as f:
                size = os.fstat(f.fileno()).st_size
                if size > self.max_bytes:
                    raise ToolError(
                        f"{str(path)!r} is {size:,} bytes, more than the "
                        f"{self.max_bytes:,} bytes the file tools load whole"
                    )
                data = f.read(self.max_bytes + 1)
        except OSError as exc:
            raise os_error(exc, str(path)) from exc
        if b"\0" in data[:SNIFF_BYTES]:
            raise ToolError(f"{str(path)!r} is a binary file; only text files can be edited")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"{str(path)!r} is not valid UTF-8 (byte {exc.start:,}); only UTF-8 text files can be edited"
            ) from exc

    def _write(self, path: Path, text: str) -> None:
        shown = str(path)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError(
                f"the text for {shown!r} cannot be encoded as UTF-8 (character {exc.start:,})"
            ) from exc
        with parent_dir(path, shown, create=True) as parent:
            try:
                self._replace(parent, path.name, data, shown)
            except OSError as exc:
                if refusal := changed_on_the_way(exc, shown):
                    raise refusal from exc
                if isinstance(exc, IsADirectoryError | PermissionError):
                    raise os_error(exc, shown) from exc
                raise ToolError(f"cannot write {shown!r}: {exc.strerror or exc}") from exc

    @staticmethod
    def _replace(parent: int, name: str, data: bytes, shown: str) -> None:
        """Write `data` to a temp file in the `parent` directory fd, then rename it over `name`."""
        try:
            st_mode: int | None = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
            st_mode = None  # a new file: 0o666 less the umask, as any editor would create it
        if st_mode is not None and stat.S_ISDIR(st_mode):
            raise IsADirectoryError(21, "Is a directory", shown)
        if st_mode is not None and not stat.S_ISREG(st_mode) and not stat.S_ISLNK(st_mode):
            raise not_regular(st_mode, shown)
        # A symlink here was planted after the check (the checked path had none): the rename
        # replaces the link itself, never what it points to.
        mode = st_mode & 0o7777 if st_mode is not None and stat.S_ISREG(st_mode) else None
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | NOFOLLOW, 0o666, dir_fd=parent
        )
        try:
            with os.fdopen(fd, "wb") as f:
                if mode is not None:
                    os.fchmod(f.fileno(), mode)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
