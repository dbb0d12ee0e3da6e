"""`python bench/background.py [--mib N] [--runs N]`: what a background command's flood of output
costs the agent (issue 34 item 3).

`yes | head -c N MiB` is read to its end three ways, in this process, the ways alternating run by
run, medians of the runs:

- `floor`: anyio reading the pipe and dropping every chunk (what any reader pays);
- `foreground`: run_command's local path (`LocalCommand`: one capped head and tail);
- `background`: a background task (`LocalRun`: the unread head and tail, the editor's tail, and
  the spool in a temporary state dir, capped at 8 MiB).

For each: wall time, this process's CPU, throughput, and the peak resident memory it added (its
high-water mark before and after, VmHWM: a run that held the output would show it); for the
background runs, the bytes left on disk.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent import logs
from acp_agent.tools.base import Progress, ToolContext
from acp_agent.tools.shell.local import LocalCommand, spawn
from acp_agent.tools.shell.spool import SpoolFolder
from acp_agent.tools.shell.task_runs import LocalRun
from acp_agent.tools.shell.tasks import TaskLimits


def peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def _quiet(progress: Progress) -> None:
    return None


def flood(mib: int) -> list[str]:
    return ["bash", "-c", f"yes flood | head -c {mib * 1024 * 1024}"]


async def floor(mib: int, where: Path) -> int:
    proc = await anyio.open_process(flood(mib), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    async for _ in proc.stdout:
        pass
    await proc.wait()
    return 0


async def foreground(mib: int, where: Path) -> int:
    command = LocalCommand(32 * 1024, 2.0, 0.25, 8 * 1024)
    await command.run(flood(mib), where, 600, ToolContext(cwd=where, report=_quiet))
    return 0


async def background(mib: int, where: Path) -> int:
    limits = TaskLimits()
    folder = SpoolFolder(where / "tasks", "sess_bench")
    spool = folder.spool("bg_bench", limits.spool_bytes)
    run = LocalRun(await spawn(flood(mib), where), limits.run_limits(), spool, _quiet, lambda: "bench")
    await run.watch()
    on_disk = sum(p.stat().st_size for p in spool.files()) if spool is not None else 0
    folder.remove()
    return on_disk


WAYS: dict[str, Callable[[int, Path], Awaitable[int]]] = {
    "floor": floor,
    "foreground": foreground,
    "background": background,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="output per run, in MiB (default 1024)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logs.configure("warning")
    figures: dict[str, dict[str, list[float]]] = {
        w: {"wall": [], "cpu": [], "peak": [], "disk": []} for w in WAYS
    }
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        for _ in range(args.runs):
            for name, way in WAYS.items():
                before_peak = peak_kib()
                cpu, wall = time.process_time(), time.perf_counter()
                disk = anyio.run(way, args.mib, where)
                figures[name]["wall"].append(time.perf_counter() - wall)
                figures[name]["cpu"].append(time.process_time() - cpu)
                figures[name]["peak"].append((peak_kib() - before_peak) / 1024)
                figures[name]["disk"].append(disk / (1024 * 1024))
    print(f"{args.mib} MiB of output, medians of {args.runs} runs")
    print(f"{'':12} {'wall':>9} {'CPU':>9} {'MiB/s':>8} {'peak +MiB':>10} {'on disk':>9}")
    for name, got in figures.items():
        wall, cpu = statistics.median(got["wall"]), statistics.median(got["cpu"])
        print(
            f"{name:12} {wall:8.2f}s {cpu:8.2f}s {args.mib / wall:8.0f} "
            f"{max(got['peak']):10.1f} {statistics.median(got['disk']):8.1f}M"
        )


if __name__ == "__main__":
    main()
