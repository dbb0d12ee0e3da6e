"""What the lean SDK import works out from the SDK's sources, kept beside the SDK's own bytecode.

The lean import (`import_hook.py`, `late_names.py`) reads SDK source files with `ast`: a
package `__init__`'s re-exports, a module rewritten with its late names. Parsing is the expensive
part (the `anthropic.types` `__init__` alone is ~18 ms of CPU), and its result changes only with
the sources, so it is kept as a `.pyc` is: in the source's `__pycache__`, under an optimization
tag of its own (`<name>.cpython-311.opt-<tag>.pyc`), stamped with the interpreter's magic number,
the tag's layout version and the mtime and size of every source file it was worked out from.
Where the cache cannot be written (a read-only install, `PYTHONDONTWRITEBYTECODE`) the work is
redone at each start.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import struct
import sys
from collections.abc import Sequence

from acp_agent.startup.atomic_file import replace_file

__all__ = ["SideFile", "stamp"]

_STAMP = struct.Struct("<4sI")
"""A side file's header: the interpreter's magic number and the tag's layout version."""

_SOURCE = struct.Struct("<QQ")
"""Then, for each source the value was worked out from: its mtime (ns) and size."""


def stamp(version: int, sources: Sequence[str]) -> bytes | None:
    """The header a side file worked out from `sources` must carry now; None if one is unreadable."""
    parts = [_STAMP.pack(importlib.util.MAGIC_NUMBER, version)]
    for source in sources:
        try:
            stat = os.stat(source)
        except OSError:
            return None
        parts.append(_SOURCE.pack(stat.st_mtime_ns, stat.st_size))
    return b"".join(parts)


class SideFile:
    """The side file of one source, for one tag: `read` what is fresh, `write` a new value."""

    def __init__(self, source: str, tag: str) -> None:
        try:
            self.path: str | None = importlib.util.cache_from_source(source, optimization=tag)
        except NotImplementedError:  # no cache tag: nowhere to keep it
            self.path = None

    def read(self, header: bytes) -> bytes | None:
        """The bytes kept after `header`, if the file starts with it (else None)."""
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        return data[len(header) :] if data.startswith(header) else None

    def write(self, header: bytes, payload: bytes) -> bool:
        """Keep `payload` under `header`, atomically; False where it cannot be kept."""
        if self.path is None or sys.dont_write_bytecode:
            return False
        return replace_file(self.path, header + payload, prefix=".acp-side-")


def loads(payload: bytes) -> object:
    """`marshal.loads`, with a damaged file's errors as one: ValueError."""
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError) as exc:
        raise ValueError(f"unreadable side file: {exc}") from None
