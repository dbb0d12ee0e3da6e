"""`python bench/sandbox.py [--runs N]`: what the sandbox adds to one command.

Three figures, each the median wall time of N runs, the ways alternating run by run:
- `spawn`: starting `bash -c true` directly and under bwrap (the argv `CommandSandbox.wrap` builds
  for a workspace inside a git repository, so the git dirs are found and bound too);
- `wrap`: building that argv (finding the git dirs, a few stats), without starting anything;
- `run_command`: the whole local tool call, `RunCommand.run` with and without a session sandbox
  (process-group bookkeeping and the leftover scan included).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import structlog

from acp_agent.tools.base import ToolContext
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
from acp_agent.tools.shell.run_command import RunCommand


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _repository(tmp: str) -> Path:
    """A workspace that is a (minimal) git repository, so the git dirs are found and bound."""
    root = Path(tmp).resolve()
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


async def bench(runs: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = _repository(tmp)
        sandbox = CommandSandbox(SandboxPolicy())
        state = await sandbox.state()
        if state.program is None:
            raise SystemExit(f"no sandbox here: {state.why}")
        bash = shutil.which("bash") or "/bin/sh"
        plain_argv = [bash, "-c", "true"]
        wrapped = (await sandbox.wrap(plain_argv, cwd=root, roots=[root])).argv
        figures: dict[str, tuple[float, float]] = {}

        def spawn(argv: list[str]) -> Callable[[], None]:
            return lambda: subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)

        def timed(call: Callable[[], None]) -> float:
            started = time.perf_counter()
            call()
            return time.perf_counter() - started

        times: dict[str, list[float]] = {"plain": [], "sandboxed": []}
        for r in range(runs + 1):  # run 0 warms up and is not counted
            for way, argv in (("plain", plain_argv), ("sandboxed", wrapped))[:: 1 if r % 2 else -1]:
                took = timed(spawn(argv))
                if r:
                    times[way].append(took)
        figures["spawn bash -c true"] = (_median_ms(times["plain"]), _median_ms(times["sandboxed"]))

        wrap_times = []
        for _ in range(runs):
            started = time.perf_counter()
            await sandbox.wrap(plain_argv, cwd=root, roots=[root])
            wrap_times.append(time.perf_counter() - started)
        figures["build the bwrap argv"] = (0.0, _median_ms(wrap_times))

        tool = RunCommand()
        contexts = {"plain": ToolContext(cwd=root), "sandboxed": ToolContext(cwd=root, sandbox=sandbox)}
        times = {"plain": [], "sandboxed": []}
        for r in range(runs + 1):
            for way in ("plain", "sandboxed")[:: 1 if r % 2 else -1]:
                started = time.perf_counter()
                result = await tool.run({"command": "true"}, contexts[way])
                if result.is_error:
                    raise SystemExit(result.text)
                if r:
                    times[way].append(time.perf_counter() - started)
        figures["run_command `true`"] = (_median_ms(times["plain"]), _median_ms(times["sandboxed"]))
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    figures = anyio.run(bench, args.runs)
    print(f"{'median wall time':<24} {'plain':>10} {'sandboxed':>10} {'added':>10}")
    for name, (plain, boxed) in figures.items():
        added = boxed - plain
        print(f"{name:<24} {plain:>8.2f}ms {boxed:>8.2f}ms {added:>+8.2f}ms")


if __name__ == "__main__":
    main()
