"""A file replaced whole or not at all: the caches kept beside the bytecode are written this way.

A fresh temporary beside the file (`tempfile.mkstemp`: a name no other process could have prepared,
opened without following a link), then `os.replace`: a reader sees the old file or the new one,
never a part, and two processes writing at once leave one whole file.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["replace_file"]


def replace_file(path: str, data: bytes, *, prefix: str = ".acp-") -> bool:
    """Replace the file at `path` with `data`; False if it could not be written (nothing is left
    behind then)."""
    import tempfile  # a write is rare: a cache that grew

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=prefix)
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True
