"""Named phases of start-up and of a first prompt, timed for `bench/first_request.py`; off by default.

The bench sets `ACP_AGENT_PROFILE_PHASES=1`; then each `phase` block logs one `phase` event with
its start and end on `time.perf_counter()` (CLOCK_MONOTONIC on Linux, the clock the bench reads
too, so both time lines are one), the CPU its thread spent in it, and how many modules the process
had loaded by its end (`sdk_modules`: of the `anthropic` SDK). So when prompt → first request
grows, the bench names the phase that grew, and a test can hold the first request's imports to a
ceiling (`tests/wire/test_first_request_imports.py`). Without the variable a block costs one test.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

__all__ = ["ENV", "REQUEST_PHASE", "enabled", "mark", "phase"]

ENV = "ACP_AGENT_PROFILE_PHASES"

REQUEST_PHASE = "request: the SDK call until the reply begins"
"""The model client's phase around `messages.create`: the modules loaded at its end are what a
first request needed (with what the start-up loaded meanwhile)."""

log = structlog.get_logger(__name__)


class _Switch:
    on = os.environ.get(ENV) == "1"


def enabled() -> bool:
    """Whether phases are being timed (read once, at import)."""
    return _Switch.on


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as phase `name` (wall, this thread's CPU, modules loaded) when enabled.

    In async code the CPU is the event loop thread's over the block, other tasks' included."""
    if not _Switch.on:
        yield
        return
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        log.info(
            "phase",
            name=name,
            start=start,
            end=time.perf_counter(),
            cpu_ms=round((time.thread_time() - cpu) * 1000, 2),
            **_modules(),
        )


def mark(name: str) -> None:
    """Note the instant `name` (a phase of no length), when enabled."""
    if _Switch.on:
        now = time.perf_counter()
        log.info("phase", name=name, start=now, end=now, cpu_ms=0.0, **_modules())


def _modules() -> dict[str, int]:
    loaded = list(sys.modules)
    return {
        "modules": len(loaded),
        "sdk_modules": sum(1 for m in loaded if m.partition(".")[0] == "anthropic"),
    }
