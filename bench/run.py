"""`python bench/run.py [--quick] [--json out.json] [--only NAME ...]`: run the benches, print the table.

Every figure is measured on the agent and, in the same run, on the baseline relay
(`bench/baselines/relay.py`), so goals are ratios to the floor on this machine. Everything talks
to a loopback fake of the Messages API on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import cpu, latency, scenario
from bench.common import PYTHON, REPO, BenchError, Scratch
from bench.report import Figure, render_table

__all__ = ["PARAMS", "main"]


@dataclass(frozen=True, slots=True)
class Params:
    starts: int  # fresh processes per start-up figure (each of agent and baseline)
    first_prompts: int  # fresh processes per first-prompt variant (each)
    first_prompt_now: bool  # also the variant with the prompt sent at once
    deltas: int  # N of the relay bench
    relay_reps: int
    loop_k: int  # K of the loop bench
    loop_reps: int
    sessions: int  # sessions after the first prompt, memory bench
    cancels: int
    shutdowns: int  # fresh processes per shutdown variant (each of agent and baseline)
    modes: tuple[bool, ...]  # streaming and/or non-streaming for relay, loop and cancel
    shutdown_baseline: bool  # also time the baseline's exit (context: the SDK's own teardown)


PARAMS = {
    "full": Params(
        starts=12,
        first_prompts=10,
        first_prompt_now=True,
        deltas=20_000,
        relay_reps=5,
        loop_k=200,
        loop_reps=3,
        sessions=1000,
        cancels=10,
        shutdowns=5,
        modes=(True, False),
        shutdown_baseline=True,
    ),
    "quick": Params(
        starts=3,
        first_prompts=1,
        first_prompt_now=False,
        deltas=2_000,
        relay_reps=1,
        loop_k=30,
        loop_reps=1,
        sessions=20,
        cancels=3,
        shutdowns=1,
        modes=(True,),
        shutdown_baseline=False,
    ),
}
BENCHES = ("cold_start", "first_prompt", "relay", "loop", "memory", "cancel", "shutdown")


def _benches(p: Params, scratch: Scratch) -> dict[str, Callable[[], list[Figure]]]:
    return {
        "cold_start": lambda: latency.cold_start(scratch, p.starts),
        "first_prompt": lambda: [
            *(latency.first_prompt(scratch, p.first_prompts, None) if p.first_prompt_now else []),
            *latency.first_prompt(scratch, p.first_prompts, 2.0),
        ],
        "relay": lambda: cpu.relay_throughput(scratch, p.deltas, p.relay_reps, p.modes),
        "loop": lambda: cpu.loop_overhead(scratch, p.loop_k, p.loop_reps, p.modes),
        "memory": lambda: latency.memory(scratch, p.sessions, budget_s=240),
        "cancel": lambda: [latency.cancel_latency(scratch, p.cancels, m) for m in p.modes],
        "shutdown": lambda: latency.shutdown(scratch, p.shutdowns, p.shutdown_baseline),
    }


def _revision() -> str:
    """The commit under test, and how many files of acp_agent/ differ from it (read-only git)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "acp_agent"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return f"{head or '?'}" + (f" + {len(dirty)} changed file(s) in acp_agent/" if dirty else "")


def machine() -> dict[str, Any]:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    versions = subprocess.run(
        [
            PYTHON,
            "-c",
            "import importlib.metadata as m, platform;"
            "print(platform.python_version(), *(m.version(p) for p in "
            "('anthropic', 'anyio', 'pydantic')))",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.split()
    names = ("python", "anthropic", "anyio", "pydantic")
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "kernel": platform.release(),
        "agent_revision": _revision(),
        **dict(zip(names, versions, strict=False)),
        "loadavg_before": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run (< 60 s)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--only", action="append", default=[], help="run only this bench (repeatable): " + ", ".join(BENCHES)
    )
    args = parser.parse_args(argv)
    unknown = set(args.only) - set(BENCHES)
    if unknown:
        parser.error(f"unknown bench {', '.join(sorted(unknown))}; known: {', '.join(BENCHES)}")
    size = "quick" if args.quick else "full"
    params = PARAMS[size]
    started = time.monotonic()
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    info = machine()
    with Scratch() as scratch:
        benches = _benches(params, scratch)
        for name, bench in benches.items():
            if args.only and name not in args.only:
                continue
            t0 = time.monotonic()
            print(f"· {name} …", file=sys.stderr, flush=True)
            try:
                figures.extend(bench())
            except (BenchError, OSError, TimeoutError, KeyError, ValueError) as exc:
                errors[name] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc(file=sys.stderr)
            print(f"  {name} took {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    info["loadavg_after"] = os.getloadavg()
    result = {
        "command": "python bench/run.py"
        + (" --quick" if args.quick else "")
        + "".join(f" --only {o}" for o in args.only),
        "size": size,
        "params": asdict(params),
        "machine": info,
        "seconds": round(time.monotonic() - started, 1),
        "cpu_cross_check_stat_over_schedstat": cpu.CROSS_CHECK,
        "fake_tcp_nodelay": all(scenario.NODELAY) if scenario.NODELAY else None,
        "figures": [f.to_json() for f in figures],
        "errors": errors,
        "goals_met": sum(f.met is True for f in figures),
        "goals_missed": [f.key for f in figures if f.met is False],
    }
    print(json.dumps(result, indent=2, default=str, ensure_ascii=False))
    print()
    print(render_table(figures))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str, ensure_ascii=False) + "\n")
    print(
        f"\n{len(figures)} figures in {result['seconds']} s; goals met "
        f"{result['goals_met']}/{result['goals_met'] + len(result['goals_missed'])}"
        + (f"; errors in {', '.join(errors)}" if errors else ""),
        file=sys.stderr,
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
