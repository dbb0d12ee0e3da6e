"""`python bench/lifetime.py [--runs N]`: what tying every child to the agent costs (issue 35).

- `first child`: the call that starts the warden (a fork and exec, not waited for), in a fresh
  process;
- `the warden's CPU`: a warden's whole life: start-up, the `/proc` sweep that finds nothing, exit
  (its own CPU, from wait4);
- per spawn of `true`, the ways alternating run by run, medians of N, building the environment
  included: as rg is started (`env=None` before; `inherited_env()` now, in a process marked as the
  agent is, and in one that is not, as under `run_turn`), and as a command is (its scrubbed
  environment before, that and the mark now).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.process import warden

FIRST_CALL = (
    "import time; from acp_agent.process.lifetime import inherited_env; t = time.perf_counter(); "
    "inherited_env(); print((time.perf_counter() - t) * 1000)"
)


def first_call_ms() -> float:
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout)


def warden_cpu_ms() -> float:
    reading, writing = os.pipe()
    os.close(writing)  # EOF at once: start, sweep, exit
    child = subprocess.Popen([sys.executable, "-I", "-S", warden.__file__, "BENCH=1"], stdin=reading)
    os.close(reading)
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    return (usage.ru_utime + usage.ru_stime) * 1000


Env = Callable[[], Mapping[str, str] | None]


def spawn_ms(runs: int, before: Env, after: Env) -> tuple[float, float]:
    """Median wall and CPU (this process's) ms of building the environment and running `true`."""
    true = ["/bin/true"]
    wall: dict[str, list[float]] = {"before": [], "after": []}
    for r in range(runs + 1):  # run 0 warms up and is not counted
        for way, env in (("before", before), ("after", after))[:: 1 if r % 2 else -1]:
            started = time.perf_counter()
            subprocess.run(true, env=env(), stdin=subprocess.DEVNULL, check=True)
            if r:
                wall[way].append(time.perf_counter() - started)
    return statistics.median(wall["before"]) * 1000, statistics.median(wall["after"]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    first = statistics.median(first_call_ms() for _ in range(5))
    cpu = statistics.median(warden_cpu_ms() for _ in range(5))
    from acp_agent.process import lifetime

    def scrubbed() -> dict[str, str]:  # as `LocalCommand.run` builds it
        return {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | {"ACP_AGENT_COMMAND": "x"}

    figures = {"as rg is, unmarked process": spawn_ms(args.runs, lambda: None, lifetime.inherited_env)}
    lifetime.mark_process()  # as the agent does at start-up
    figures["as rg is, in the agent"] = spawn_ms(args.runs, lambda: None, lifetime.inherited_env)
    figures["as a command is"] = spawn_ms(args.runs, scrubbed, lambda: lifetime.owned_env(scrubbed()))
    print(f"first child (starts the warden), median of 5: {first:.2f} ms")
    print(f"the warden's CPU, start to exit, median of 5: {cpu:.1f} ms")
    print(f"{'per spawn of true, median of ' + str(args.runs):<34} {'before':>9} {'after':>9} {'added':>9}")
    for name, (before, after) in figures.items():
        print(f"{name:<34} {before:>7.3f}ms {after:>7.3f}ms {after - before:>+7.3f}ms")


if __name__ == "__main__":
    main()
