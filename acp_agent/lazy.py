"""Deferred imports: what the handshake does not need is imported after it (docs/decisions.md D4).

An editor waits for `session/new` before it can do anything, so the turn machinery (the loop, the
tools, the model client) and the `anthropic` SDK are imported afterwards: in a background thread
started once `initialize` is answered (`warm_up`), or on first use (`load` / `aload`). One lock
serialises every deferred import: two threads importing the same package tree at once can trip
Python's import-lock deadlock detection (`_DeadlockError`).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

import anyio.to_thread
import structlog

__all__ = ["aload", "load", "warm_up"]

log = structlog.get_logger(__name__)

IMPORT_LOCK = threading.Lock()

WARM_UP_SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits for it, during the warm-up (Python's
default is 5 ms). Importing is pure CPU: at the default, every time the event loop waits on a
syscall (a write to stdout, a journal fsync) it got the GIL back up to 5 ms late, which cost
`session/new` about 30 ms."""


def _imported(name: str) -> ModuleType | None:
    """The module when its import has finished (`sys.modules` also holds modules still being
    imported: CPython marks those with `__spec__._initializing`, the flag its own import uses)."""
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def load(name: str) -> ModuleType:
    """Import `name` under the deferred-import lock (blocks while another deferred import runs)."""
    module = _imported(name)
    if module is None:
        with IMPORT_LOCK:
            module = importlib.import_module(name)
    return module


async def aload(name: str) -> ModuleType:
    """`load` off the event loop: the first prompt waits here, the loop goes on serving."""
    module = _imported(name)
    if module is None:
        module = await anyio.to_thread.run_sync(load, name)
    return module


def warm_up(names: Sequence[str]) -> threading.Thread:
    """Import `names` in order in a daemon thread (it never holds up exit); returns the thread."""

    def run() -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, WARM_UP_SWITCH_INTERVAL))
        try:
            for name in names:
                try:
                    load(name)
                except Exception as exc:  # surfaces again, with its traceback, on first use
                    log.warning("lazy.warm_up_failed", module=name, error=repr(exc))
        finally:
            sys.setswitchinterval(interval)

    thread = threading.Thread(target=run, name="warm-up", daemon=True)
    thread.start()
    return thread
