"""The methods `dataclasses` writes for each class, compiled once and kept beside the bytecode.

For every dataclass, `dataclasses` writes the source of `__init__`, `__repr__`, `__eq__`,
`__hash__` (and a frozen class's `__setattr__` and `__delattr__`) and compiles it with `exec`,
at every start: on Python 3.11 ~0.4 ms a class, ~120 ms of CPU for the ~300 classes a first
prompt loads (the agent's own, pydantic's, anyio's), about a third of the agent's start-up. A
`.pyc` keeps a module's compiled code; nothing keeps these. `install` gives the `dataclasses`
module an `exec` that looks the source up in a table of compiled code first (`CodeCache`): the
same text, compiled the same way (`"<string>"`, no inherited `__future__` flags: what `exec` of a
string does in `dataclasses`, which has none), gives the same function, so a class is what it
was, only made sooner. What is missing is compiled as before and added.

The table lives in the package's `__pycache__`, one file per interpreter version (like a `.pyc`;
not written under `PYTHONDONTWRITEBYTECODE` or where the folder is read-only). It is written
after the first prompt's request has been answered (a warm-up step, `keep`, which then lets the
process forget the table) and when the agent leaves, if anything was added; it is keyed by the
whole source text, so a changed class simply misses, and a file that cannot be read as this
interpreter's is ignored. Whoever can write that folder can already replace the package's
`.pyc` files: the table is trusted as they are.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
import threading
from types import CodeType
from typing import Any

from acp_agent.startup.atomic_file import replace_file

__all__ = ["CodeCache", "install", "installed", "keep", "save"]

VERSION = 1
"""Bumped when the file's layout changes."""

MAX_ENTRIES = 5000
"""Past this many entries the file keeps only what this process used (a run needs ~2,000)."""

_HEADER = b"acp-dataclass-code\x00" + VERSION.to_bytes(2, "little") + sys.hexversion.to_bytes(4, "little")
"""What a file must start with to be read: this layout and this exact interpreter version."""

_exec = builtins.exec


class CodeCache:
    """Source text → marshalled code, read from and written to one file."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.writable = path is not None and not sys.dont_write_bytecode
        """Whether what is compiled is recorded to be written (not under `PYTHONDONTWRITEBYTECODE`,
        nor after a write failed: the next start compiles again)."""
        self.known: dict[str, bytes] = _read(path) if path else {}
        self.added: dict[str, bytes] = {}
        self.used: set[str] = set()
        self.released = False
        """Set by `release`: `known` and `used` are dropped, and a save merges with the file."""
        self._on_file: set[int] = set()
        """Once released, the hashes of what the file held: compiled again, never written again."""
        self._lock = threading.Lock()

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """`exec`, with the code of a source text taken from the table when it is there."""
        if type(source) is not str:
            return _exec(source, globals, locals)
        if not self.released:
            self.used.add(source)
        blob = self.known.get(source) or self.added.get(source)
        code = _code(blob) if blob is not None else None
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if self.writable and hash(source) not in self._on_file:
                with self._lock:
                    self.added[source] = marshal.dumps(code)
        return _exec(code, globals, locals)

    def save(self) -> bool:
        """Write the table if anything was added since it was read (atomically; a failure to write
        is no error: the next start compiles again, and nothing more is recorded). True if it
        wrote."""
        with self._lock:
            added, self.added = self.added, {}
            if not added or not self.writable or self.path is None:
                return False
            if self.released:  # what is on disk now (this process's first save, or another's)
                table = {**_read(self.path), **added}
                if len(table) > MAX_ENTRIES:  # the next start, which knows what it uses, prunes
                    return False
            else:
                table = {**self.known, **added}
                if len(table) > MAX_ENTRIES:
                    table = {source: blob for source, blob in table.items() if source in self.used}
            if not replace_file(self.path, _HEADER + marshal.dumps(table), prefix=".dataclass-code-"):
                self.writable = False
                return False
            if self.released:
                self._on_file.update(map(hash, added))
            else:
                self.known = table
            return True

    def release(self) -> None:
        """Drop the table read at start (~1.7 MB for a first prompt's classes): start-up is over,
        and few classes are made later. They are compiled as before, and a later `save` adds those
        the file does not hold to what it holds then."""
        with self._lock:
            self.released = True
            self._on_file = set(map(hash, self.known))
            self.known, self.used = {}, set()
            if not self.writable:
                self.added = {}


_installed: CodeCache | None = None


def install(path: str | None = None) -> CodeCache:
    """Give `dataclasses` the cached `exec` (once; the first call's table stays). `path`: the
    table's file, by default this package's `__pycache__/dataclass_code.<tag>.marshal`."""
    global _installed
    if _installed is None:
        import dataclasses

        _installed = CodeCache(path if path is not None else default_path())
        dataclasses.exec = _installed.exec  # type: ignore[attr-defined]  # shadows the builtin there
    return _installed


def installed() -> CodeCache | None:
    return _installed


def save() -> bool:
    """Write the installed table if it grew (on leaving)."""
    return _installed.save() if _installed is not None else False


def keep() -> None:
    """Start-up is over (a warm-up step, after the first answer): write the table if it grew, and
    release it."""
    if _installed is not None:
        _installed.save()
        _installed.release()


def default_path() -> str | None:
    """Beside this package's bytecode (`sys.pycache_prefix` honoured); None without a cache tag."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    package = os.path.dirname(os.path.abspath(__file__))
    if sys.pycache_prefix:
        folder = os.path.join(sys.pycache_prefix, package.lstrip(os.sep))
    else:
        folder = os.path.join(package, "__pycache__")
    return os.path.join(folder, f"dataclass_code.{tag}.marshal")


def _read(path: str) -> dict[str, bytes]:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return {}
    if not data.startswith(_HEADER):
        return {}
    try:
        table = marshal.loads(data[len(_HEADER) :])
    except (EOFError, ValueError, TypeError):
        return {}
    # an entry of another type is never used: a key that is not a string is never looked up, and a
    # value that is not marshalled code is compiled anew (`_code`), so the table is taken as it is
    return table if isinstance(table, dict) else {}


def _code(blob: object) -> CodeType | None:
    try:
        code = marshal.loads(blob)  # type: ignore[arg-type]  # a damaged table's entry is rejected here
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None
