"""Deferred imports: what the handshake does not need is imported after it (docs/decisions.md D4).

An editor waits for `session/new` before it can do anything, so the turn machinery (the loop, the
tools, the model client) and the `anthropic` SDK are imported afterwards: in a background thread
started once `initialize` is answered (`warm_up`), or on first use. Each late import is a plain
`import` inside a small function marked `@deferred`, which gives what the import gives, typed:

    @deferred
    def engine_class() -> type[Engine]:
        from acp_agent.session.machinery.engine import Engine
        return Engine

    Engine = await engine_class()       # on the event loop: the import runs in a thread
    Engine = engine_class.now()         # anywhere else: blocks

One lock serialises every deferred import: two threads importing the same package tree at once can
trip Python's import-lock deadlock detection (`_DeadlockError`).
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import anyio.to_thread
import structlog

from acp_agent.phases import phase

__all__ = ["Deferred", "deferred", "warm_up"]

log = structlog.get_logger(__name__)

T = TypeVar("T")

IMPORT_LOCK = threading.RLock()
"""Re-entrant: a deferred import may use another one while it runs."""

WARM_UP_SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits for it, during the warm-up (Python's
default is 5 ms). Importing is pure CPU: at the default, every time the event loop waits on a
syscall (a write to stdout, a journal fsync) it got the GIL back up to 5 ms late, which cost
`session/new` about 30 ms."""


class Deferred(Generic[T]):
    """What a function whose body imports returns, computed once under the deferred-import lock.

    Until it has returned once, every call runs it (a failed import raises again, with its
    traceback, on the next use); afterwards both `now()` and `await` answer at once.
    """

    _value: T
    """Set, with `_loaded`, once the loader has returned."""

    def __init__(self, loader: Callable[[], T]) -> None:
        self._loader = loader
        self._loaded = False
        self.name = f"{loader.__module__}.{loader.__qualname__}"
        functools.update_wrapper(self, loader)

    def now(self) -> T:
        """The value, importing under the lock if needed (blocks while another deferred import runs)."""
        if not self._loaded:
            with IMPORT_LOCK:
                if not self._loaded:
                    self._value = self._loader()
                    self._loaded = True
        return self._value

    async def __call__(self) -> T:
        """`now()` off the event loop: the first prompt waits here, the loop goes on serving."""
        if self._loaded:
            return self._value
        return await anyio.to_thread.run_sync(self.now)

    def __repr__(self) -> str:
        return f"<deferred {self.name}{' (loaded)' if self._loaded else ''}>"


def deferred(loader: Callable[[], T]) -> Deferred[T]:
    """Mark `loader`, a function whose body imports, as a deferred import (see the module doc)."""
    return Deferred(loader)


def warm_up(steps: Sequence[Deferred[Any] | Callable[[], object]]) -> threading.Thread:
    """Run `steps` in order in a daemon thread (it never holds up exit); returns the thread.

    A step is a deferred import (its `now()` runs) or a plain callable (building a client)."""

    def run() -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, WARM_UP_SWITCH_INTERVAL))
        try:
            for step in steps:
                name = step.name if isinstance(step, Deferred) else getattr(step, "__qualname__", "?")
                try:
                    with phase(f"warm-up {name}"):
                        step.now() if isinstance(step, Deferred) else step()
                except Exception as exc:  # surfaces again, with its traceback, on first use
                    log.warning("lazy.warm_up_failed", step=name, error=repr(exc))
        finally:
            sys.setswitchinterval(interval)

    thread = threading.Thread(target=run, name="warm-up", daemon=True)
    thread.start()
    return thread
