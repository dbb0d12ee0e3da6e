"""Waiting for something to happen: on its condition, never for a fixed time.

A fixed sleep guesses how long a thing takes: too short on a loaded box (the test fails), too long
on a quiet one (the suite crawls). Where the thing sends a signal (an event, a message the client
matches with `wait_for`, a line on a pipe), the test waits on that. Where nothing signals it (a
process in /proc, a file, a log line read in the background, a record a fake keeps), `wait_until`
looks at the condition again every few milliseconds and returns as soon as it holds; its timeout
is a hang guard, generous, that fails the test naming what never came.
`tests/unit/test_test_waits.py` keeps the tests from sleeping otherwise.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

import anyio

__all__ = ["HANG_GUARD", "wait_until", "wait_until_sync"]

T = TypeVar("T")

HANG_GUARD = 30.0
"""Seconds before a wait gives up: far past what a loaded box needs, it only stops a hang."""
TICK = 0.01
"""Seconds between two looks at a condition."""


@overload
async def wait_until(
    probe: Callable[[], Awaitable[T]], what: str, *, timeout: float = ..., tick: float = ...
) -> T: ...
@overload
async def wait_until(probe: Callable[[], T], what: str, *, timeout: float = ..., tick: float = ...) -> T: ...
async def wait_until(
    probe: Callable[[], T | Awaitable[T]], what: str, *, timeout: float = HANG_GUARD, tick: float = TICK
) -> T:
    """The first truthy value `probe()` gives (awaited, for an async probe), looked at every `tick`
    seconds; an AssertionError naming `what` if none comes within `timeout` seconds."""
    with anyio.move_on_after(timeout):
        while True:
            value = probe()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value  # type: ignore[return-value]
            await anyio.sleep(tick)  # deliberate: the poll's tick, between two looks
    raise AssertionError(f"waited {timeout} s for {what}")


def wait_until_sync(
    probe: Callable[[], T], what: str, *, timeout: float = HANG_GUARD, tick: float = TICK
) -> T:
    """`wait_until` for a test that runs no event loop (it blocks the thread between looks)."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(tick)  # deliberate: the poll's tick, between two looks
    return value
