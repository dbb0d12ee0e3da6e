"""No test waits for something to happen by sleeping a fixed time (issue 36 item 5).

A fixed sleep that stands for "by now it has happened" fails on a loaded box (too short) and slows a
quiet one (too long): such a test waits on a signal, or polls the condition with
`tests.support.waits.wait_until`. A sleep that is part of the scenario itself (a stall a fake must
hold, a tick of a clock the test runs, the time a cancelled command ran) stays, marked on its line
(or the line above) with `# deliberate: <why it is not a wait>`. This scan finds every call to a
`sleep` or `sleep_until` (time, anyio, asyncio or trio, imported however) in the tests' Python and
fails on each unmarked one. Commands and child scripts held in strings are not Python here: the
sleeps they run are the scenario's (a process that must still be running).
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import anyio
import pytest

from tests.support.waits import wait_until, wait_until_sync

TESTS = Path(__file__).resolve().parents[1]
MARKER = "# deliberate:"
SLEEPS = {"sleep", "sleep_until"}


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def unmarked_sleeps(source: str) -> list[int]:
    """The lines of `source` holding a sleep call with no `# deliberate:` on it or above it."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and _callee(node) in SLEEPS):
            continue
        end = node.end_lineno or node.lineno
        near = lines[max(node.lineno - 2, 0) : end]  # the line above, and every line of the call
        if not any(MARKER in line for line in near):
            found.append(node.lineno)
    return sorted(found)


def test_the_scan_sees_every_way_of_calling_a_sleep_and_honours_the_marker() -> None:
    source = (
        "import time, anyio, asyncio\n"
        "from anyio import sleep\n"
        "async def f():\n"
        "    time.sleep(0.1)\n"
        "    await anyio.sleep(0.1)\n"
        "    await asyncio.sleep(0)\n"
        "    await sleep(1)\n"
        "    await anyio.sleep_until(5)\n"
        "    await anyio.sleep(0.1)  # deliberate: the fake's stall\n"
        "    # deliberate: the tick of the test's own clock\n"
        "    await anyio.sleep(0.01)\n"
        "    await anyio.sleep_forever()\n"
        "    code = 'import time; time.sleep(60)'\n"
    )
    assert unmarked_sleeps(source) == [4, 5, 6, 7, 8]


def test_no_test_sleeps_a_fixed_time_to_wait_for_something_to_happen() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in unmarked_sleeps(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        "a fixed sleep that waits for something to happen: wait on its signal, or poll the condition "
        "with tests.support.waits.wait_until; a sleep that is part of the scenario says so with "
        f"`{MARKER} <why>` on its line:\n" + "\n".join(offenders)
    )


def test_a_wait_returns_the_first_truthy_look_and_fails_naming_what_never_came() -> None:
    looks = itertools.count()
    assert wait_until_sync(lambda: max(next(looks) - 2, 0), "a third look") == 1
    with pytest.raises(AssertionError, match=r"waited 0.05 s for the impossible"):
        wait_until_sync(lambda: None, "the impossible", timeout=0.05)

    async def waits() -> None:
        tries = itertools.count()

        async def probe() -> str | None:
            await anyio.lowlevel.checkpoint()
            return "found" if next(tries) == 3 else None

        assert await wait_until(probe, "an async probe") == "found"
        with pytest.raises(AssertionError, match=r"waited 0.05 s for the impossible"):
            await wait_until(lambda: False, "the impossible", timeout=0.05)

    anyio.run(waits)
