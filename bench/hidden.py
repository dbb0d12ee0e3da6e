"""`python bench/hidden.py [--files N] [--reps N]`: what keeping the agent's hidden paths out of
sight costs each file-tool call and each listing or search (issue 35 item 5).

Three lists, run alternately on the same tree: none (the tools as they were), the agent's own (a
session's: its state dir, config dir, key and the SDK's profiles, all outside the workspace), and
the agent's with its state and config dirs inside the workspace (an editor opened on `$HOME`:
every listed or searched entry is then compared, and a file with two names is looked up). The
figures are medians: `resolve_inside` and `read_file` of a small file per call, `list_files` and
`search_text` per call on the ripgrep and the pure-Python paths (the agent process's CPU time;
`--wall` for the wall clock); `read_file` of a file with two names
(a hard link: looked up among the hidden files, whose identities are kept until a directory there
changes).
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths, agent_hidden_paths
from acp_agent.tools.paths import resolve_inside
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText

CALLS = (
    ("list everything", ListFiles, {"include_ignored": True, "pattern": "**/*"}),
    ("search 'def url_for'", SearchText, {"pattern": "def url_for", "include_ignored": True}),
    ("search, no match", SearchText, {"pattern": "no such text", "include_ignored": True}),
)


def _lists(root: Path) -> dict[str, HiddenPaths]:
    """The three lists; the third with a state dir of 200 journals and a key inside the tree."""
    state, config = root / ".local" / "share" / "acp-agent", root / ".config" / "acp-agent"
    (state / "sessions").mkdir(parents=True)
    for n in range(200):
        (state / "sessions" / f"sess_{n:04}.jsonl").write_text('{"prompt": "def url_for"}\n' * 20)
    config.mkdir(parents=True)
    (config / "credentials.json").write_text('{"anthropicApiKey": "def url_for"}')
    os.link(root / "keep.log", root / "keep-twin.log")  # a file with two names: looked up
    agent = agent_hidden_paths(None)
    inside = HiddenPaths.of([*agent.paths, state, config, config / "credentials.json"])
    return {"none": NOTHING_HIDDEN, "agent's": agent, "inside the tree": inside}


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


CPU = time.process_time
"""The agent process's own CPU time (threads included, rg excluded): what the check adds, and
steadier than the wall clock on a box shared with other work. `--wall` measures the wall clock."""


async def _alternate(calls: dict[str, Callable[[], Awaitable[object]]], reps: int) -> dict[str, float]:
    """Median µs of each call, the calls alternating run by run (run 0 warms up)."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for r in range(reps + 1):
        for name, call in list(calls.items())[:: 1 if r % 2 else -1]:
            started = CPU()
            await call()
            if r:
                times[name].append(CPU() - started)
    return {name: _median_us(samples) for name, samples in times.items()}


def _row(label: str, figures: dict[str, float], unit: str = "µs") -> str:
    scale = 1.0 if unit == "µs" else 1e-3
    cells = " | ".join(f"{figures[k] * scale:>10.1f} {unit}" for k in figures)
    return f"| {label:<36} | {cells} |"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5_000, help="tracked and ignored files, each")
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--wall", action="store_true", help="the wall clock instead of the CPU time")
    opts = parser.parse_args()
    global CPU
    CPU = time.perf_counter if opts.wall else time.process_time
    with tempfile.TemporaryDirectory() as scratch:
        root = make_repo(Path(scratch) / "repo", RepoShape(opts.files, opts.files, 1 << 20)).resolve()
        lists = _lists(root)
        contexts = {name: ToolContext(cwd=root, hidden=hidden) for name, hidden in lists.items()}
        what = "wall time" if opts.wall else "the agent process's CPU time"
        files = f"{opts.files:,} tracked + {opts.files:,} ignored files"
        print(f"fixture: {files}; {what}, medians of {opts.reps} runs")
        print(f"| {'figure':<36} | " + " | ".join(f"{k:>13}" for k in lists) + " |")
        print(f"|{'-' * 38}|" + "|".join("-" * 15 for _ in lists) + "|")

        async def resolve_many(hidden: HiddenPaths) -> None:
            for _ in range(1000):
                resolve_inside(root, "README.md", hidden=hidden)

        per_thousand = await _alternate(
            {k: (lambda h=h: resolve_many(h)) for k, h in lists.items()}, opts.reps
        )
        print(_row("resolve_inside, one call", {k: v / 1000 for k, v in per_thousand.items()}))
        reader = ReadFile()
        read = await _alternate(
            {k: (lambda c=c: reader.run({"path": "README.md"}, c)) for k, c in contexts.items()},
            opts.reps * 5,
        )
        print(_row("read_file README.md", read))
        twin = await _alternate(
            {k: (lambda c=c: reader.run({"path": "keep.log"}, c)) for k, c in contexts.items()}, opts.reps * 5
        )
        print(_row("read_file of a file with two names", twin))
        for engine, label in ((None, "rg"), (False, "Python")):
            for name, tool_type, args in CALLS:
                tool = tool_type(ripgrep=engine)
                reps = opts.reps if engine is None else max(opts.reps // 3, 3)
                figures = await _alternate(
                    {k: (lambda c=c, t=tool, a=args: t.run(a, c)) for k, c in contexts.items()}, reps
                )
                print(_row(f"{name} ({label})", figures, "ms"))


if __name__ == "__main__":
    anyio.run(main)
