"""The cwd-escape race of issue 19: a directory inside cwd swapped, again and again, with a symlink
to the outside, while the file tools read and write through it.

A thread exchanges `cwd/inner` (a real directory) and `cwd/swap` (a symlink to `outside`) with
`renameat2(RENAME_EXCHANGE)`, atomic, so at every instant one of the two names is the symlink;
without renameat2 it falls back to three `os.rename`s. Meanwhile `read_file inner/secret.txt`
and `write_file inner/…` run through the real tools on the local disk, and `read_file
inner/secret.png` on an image (issue 29 item 4). An escape is a read that returned the outside
file's content (text or image), or any file created, changed or left (`.tmp`) outside.
"""

from __future__ import annotations

import base64
import ctypes
import ctypes.util
import os
import signal
import struct
import subprocess
import sys
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import anyio

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile

__all__ = ["RaceCounts", "Swapper", "png", "renameat2_available", "run_race"]

AT_FDCWD = -100
RENAME_EXCHANGE = 2
INSIDE, OUTSIDE = "inside\n", "OUTSIDE SECRET\n"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def renameat2_available() -> bool:
    return hasattr(_libc(), "renameat2")


def png(width: int, height: int, pixel: bytes = b"\xff\x00\x00") -> bytes:
    """A valid RGB PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = (b"\x00" + pixel * width) * height
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


INSIDE_PNG, OUTSIDE_PNG = png(1, 1), png(2, 2, b"\x00\x00\xff")


@dataclass
class RaceCounts:
    reads: int = 0
    writes: int = 0
    image_reads: int = 0
    refused: int = 0
    outside_reads: int = 0
    outside_image_reads: int = 0
    outside_created: int = 0
    outside_overwritten: int = 0
    outside_tmp: int = 0
    swaps: int = 0
    exchange: bool = False

    @property
    def escapes(self) -> int:
        return (
            self.outside_reads
            + self.outside_image_reads
            + self.outside_created
            + self.outside_overwritten
            + self.outside_tmp
        )


class Swapper(threading.Thread):
    """Exchanges two names again and again until `stop` is set, in a child process of its own.

    A thread of this process would share the GIL with the code under test and could swap only
    while that code sits in a system call; a process swaps at any instant, as an attacker does.
    The thread only starts the process, waits for `stop`, then collects its count of swaps.
    """

    def __init__(self, a: Path, b: Path) -> None:
        super().__init__(daemon=True, name="swapper")
        self.a, self.b = a, b
        self.stop = threading.Event()
        self.swaps = 0
        self.exchange = renameat2_available()
        self._ready = threading.Event()

    def start(self) -> None:
        """Start, and return once the child is swapping."""
        super().start()
        if not self._ready.wait(30):
            raise RuntimeError("the swapper process did not start")

    def run(self) -> None:
        child = subprocess.Popen(
            [sys.executable, "-c", _SWAP_LOOP, os.fspath(self.a), os.fspath(self.b)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        try:
            assert child.stdout is not None
            child.stdout.readline()  # "swapping"
            self._ready.set()
            self.stop.wait()
        finally:
            child.send_signal(signal.SIGTERM)
            out, _ = child.communicate(timeout=5)
        self.swaps = int(out.split()[-1]) if out.split() else 0


_SWAP_LOOP = """
import ctypes, ctypes.util, os, signal, sys
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
spare = a + b".spare"
done = []
signal.signal(signal.SIGTERM, lambda *_: done.append(1))
libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
exchange = hasattr(libc, "renameat2")
swaps = 0
print("swapping", flush=True)
while not done:
    if exchange:
        if libc.renameat2(-100, a, -100, b, 2) != 0:
            raise OSError(ctypes.get_errno(), "renameat2 failed")
    else:
        os.rename(a, spare)
        os.rename(b, a)
        os.rename(spare, b)
    swaps += 1
print(swaps)
"""


def run_race(tmp: Path, operations: int) -> RaceCounts:
    """`operations` tool calls under the swapping thread: text reads, writes and image reads in turn."""
    cwd, outside = tmp / "cwd", tmp / "outside"
    (cwd / "inner").mkdir(parents=True)
    outside.mkdir()
    (cwd / "inner" / "secret.txt").write_text(INSIDE)
    (outside / "secret.txt").write_text(OUTSIDE)
    (cwd / "inner" / "secret.png").write_bytes(INSIDE_PNG)
    (outside / "secret.png").write_bytes(OUTSIDE_PNG)
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
    outside_image = base64.b64encode(OUTSIDE_PNG).decode()
    for number in range(operations):
        try:
            if number % 3 == 0:
                counts.reads += 1
                result = await read.run({"path": "inner/secret.txt"}, ctx)
                counts.outside_reads += "OUTSIDE" in result.text
            elif number % 3 == 1:
                counts.writes += 1
                path = "inner/secret.txt" if number % 6 == 1 else f"inner/new-{number}.txt"
                await write.run({"path": path, "content": f"written {number}\n"}, ctx)
            else:
                counts.image_reads += 1
                result = await read.run({"path": "inner/secret.png"}, ctx)
                counts.outside_image_reads += any(m["source"]["data"] == outside_image for m in result.media)
        except ToolError:
            counts.refused += 1  # refused (outside, or changed on the way): never an escape
