"""The cwd-escape race of issue 19: a directory inside cwd swapped, again and again, with a symlink
to the outside, while the file tools read and write through it.

A thread exchanges `cwd/inner` (a real directory) and `cwd/swap` (a symlink to `outside`) with
`renameat2(RENAME_EXCHANGE)`, atomic, so at every instant one of the two names is the symlink;
without renameat2 it falls back to three `os.rename`s. Meanwhile `read_file inner/secret.txt`
and `write_file inner/…` run through the real tools on the local disk. An escape is a read that
returned the outside file's content, or any file created, changed or left (`.tmp`) outside.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import anyio

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext
from acp_agent.tools.edit import WriteFile
from acp_agent.tools.files import ReadFile

__all__ = ["RaceCounts", "Swapper", "renameat2_available", "run_race"]

AT_FDCWD = -100
RENAME_EXCHANGE = 2
INSIDE, OUTSIDE = "inside\n", "OUTSIDE SECRET\n"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def renameat2_available() -> bool:
    return hasattr(_libc(), "renameat2")


@dataclass
class RaceCounts:
    reads: int = 0
    writes: int = 0
    refused: int = 0
    outside_reads: int = 0
    outside_created: int = 0
    outside_overwritten: int = 0
    outside_tmp: int = 0
    swaps: int = 0
    exchange: bool = False

    @property
    def escapes(self) -> int:
        return self.outside_reads + self.outside_created + self.outside_overwritten + self.outside_tmp


class Swapper(threading.Thread):
    """Exchanges two names again and again (atomically, with renameat2) until `stop` is set."""

    def __init__(self, a: Path, b: Path) -> None:
        super().__init__(daemon=True, name="swapper")
        self.a, self.b = os.fsencode(a), os.fsencode(b)
        self.stop = threading.Event()
        self.swaps = 0
        self.exchange = renameat2_available()

    def run(self) -> None:
        libc = _libc()
        spare = self.a + b".spare"
        while not self.stop.is_set():
            if self.exchange:
                if libc.renameat2(AT_FDCWD, self.a, AT_FDCWD, self.b, RENAME_EXCHANGE) != 0:
                    raise OSError(ctypes.get_errno(), "renameat2 failed")
            else:
                os.rename(self.a, spare)
                os.rename(self.b, self.a)
                os.rename(spare, self.b)
            self.swaps += 1


def run_race(tmp: Path, operations: int) -> RaceCounts:
    """`operations` tool calls (reads and writes alternating) under the swapping thread."""
    cwd, outside = tmp / "cwd", tmp / "outside"
    (cwd / "inner").mkdir(parents=True)
    outside.mkdir()
    (cwd / "inner" / "secret.txt").write_text(INSIDE)
    (outside / "secret.txt").write_text(OUTSIDE)
    (cwd / "swap").symlink_to(outside)
    counts = RaceCounts()
    swapper = Swapper(cwd / "inner", cwd / "swap")
    swapper.start()
    try:
        anyio.run(_operations, ToolContext(cwd=cwd.resolve()), operations, counts)
    finally:
        swapper.stop.set()
        swapper.join(5)
    counts.swaps, counts.exchange = swapper.swaps, swapper.exchange
    names = {p.name for p in outside.iterdir()}
    counts.outside_created = len({n for n in names if n.startswith("new-")})
    counts.outside_tmp = len({n for n in names if n.endswith(".tmp")})
    counts.outside_overwritten = int((outside / "secret.txt").read_text() != OUTSIDE)
    return counts


async def _operations(ctx: ToolContext, operations: int, counts: RaceCounts) -> None:
    read, write = ReadFile(), WriteFile()
    for number in range(operations):
        try:
            if number % 2 == 0:
                counts.reads += 1
                result = await read.run({"path": "inner/secret.txt"}, ctx)
                counts.outside_reads += "OUTSIDE" in result.text
            else:
                counts.writes += 1
                path = "inner/secret.txt" if number % 4 == 1 else f"inner/new-{number}.txt"
                await write.run({"path": path, "content": f"written {number}\n"}, ctx)
        except ToolError:
            counts.refused += 1  # refused (outside, or changed on the way): never an escape
