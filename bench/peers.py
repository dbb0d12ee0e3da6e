"""`python bench/peers.py [--rounds N] [--peers-dir DIR] [--json out.json]`: other ACP agents as context.

Each agent it can start is measured the same way, against the same loopback fake (not strict: the
peers send their own betas and fields), in alternating rounds:
- spawn → `session/new` answered (`initialize` sent at spawn, `session/new` once it is answered);
- the RSS of the agent's whole process tree after its first prompt (VmRSS summed; shared pages count
  once per process);
- a prompt sent at once after `session/new` → the first `POST /v1/messages` reaching the fake.

A peer it cannot start is shown with the figures issue 28 reported for it (measured from outside on
the same kind of 2-core box), labelled "reported, not re-measured". The issue's other rows (tokens
of a 20-request loop, CPU per warm request) are always the reported ones.

Peers (installed outside the repository; nothing of theirs is committed):
- claude-agent-acp 0.101 (Claude Code underneath: the npm package brings a ~340 MB `claude` binary,
  which runs offline against the fake): `npm install @agentclientprotocol/claude-agent-acp@0.101.0`
  in a scratch dir, then `--peers-dir` that dir (default /tmp/peers/claude), or
  BENCH_CLAUDE_AGENT_ACP=<its dist/index.js>. Needs `node` on PATH.
- fast-agent 0.10: BENCH_FAST_AGENT_CMD="<a command serving ACP on stdio>". The fast-agent on the
  PyPI reachable here (fast-agent-mcp 0.2.36) has no ACP mode, so by default it is not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.testing import FakeMessagesAPI
from bench.common import AGENT, BenchError, Scratch, median, spawn
from bench.scenario import HELLO, Arrivals, route

MS = 1000.0

REPORTED: dict[str, dict[str, float]] = {
    "acp-agent": {"ready": 202, "rss": 92, "to_request": 936, "sent": 64_780, "billed": 11_077, "cpu": 4.5},
    "claude-agent-acp": {
        "ready": 926,
        "rss": 345,
        "to_request": 172,
        "sent": 263_524,
        "billed": 42_895,
        "cpu": 57.5,
    },
    "fast-agent": {"ready": 2_924, "rss": 199, "to_request": 77, "sent": 29_635, "billed": 9_453, "cpu": 88},
}
"""Issue 28's table: spawn → session/new (ms), process-tree RSS after the first prompt (MB), prompt
sent at once → first model request (ms), 20-request loop input tokens sent and billed, warm CPU
per model request (ms)."""

ROWS = (
    ("spawn → session/new", "ready", "ms"),
    ("RSS of the process tree after the first prompt", "rss", "MB"),
    ("first prompt sent at once: prompt → first model request", "to_request", "ms"),
    ("the same: spawn → first model request", "spawn_to_request", "ms"),
    ("20-request tool loop: input tokens sent", "sent", ""),
    ("same loop, billed input (cache reads and writes priced)", "billed", ""),
    ("warm loop: CPU per model request", "cpu", "ms"),
)
MEASURED = ("ready", "rss", "to_request", "spawn_to_request")

QUIET = {  # Claude Code: no update checks, telemetry or error reports (the box is offline)
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@dataclass(frozen=True)
class Agent:
    name: str
    command: tuple[str, ...] | None
    """None: not available here (the reason says why)."""
    reason: str = ""


def agents(peers_dir: Path) -> list[Agent]:
    found = [Agent("acp-agent", AGENT)]
    script = os.environ.get("BENCH_CLAUDE_AGENT_ACP") or str(
        peers_dir / "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    )
    node = shutil.which("node")
    if node and Path(script).is_file():
        found.append(Agent("claude-agent-acp", (node, script)))
    else:
        why = "no `node` on PATH" if not node else f"not installed ({script} is missing)"
        found.append(Agent("claude-agent-acp", None, why))
    fast = os.environ.get("BENCH_FAST_AGENT_CMD")
    found.append(
        Agent("fast-agent", tuple(shlex.split(fast)))
        if fast
        else Agent("fast-agent", None, "BENCH_FAST_AGENT_CMD is not set")
    )
    return found


def tree_rss_mb(pid: int) -> float:
    """VmRSS of `pid` and all its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        rss = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")]
        total_kb += rss[0] if rss else 0
    return total_kb / 1024


@contextmanager
def loose_fake() -> Iterator[tuple[FakeMessagesAPI, Arrivals]]:
    with FakeMessagesAPI(strict=False) as api:
        api.set_fallback(route)
        yield api, Arrivals(api)


def one_round(agent: Agent, scratch: Scratch, api: FakeMessagesAPI, arrivals: Arrivals) -> dict[str, float]:
    assert agent.command is not None
    env = {**scratch.env(api.base_url), **QUIET}
    arrivals.clear()
    with spawn(agent.command, scratch, env, f"peer-{agent.name}") as peer:
        peer.initialize()
        ready, session = peer.new_session(scratch.workspace)
        rid, sent = peer.start_prompt(session, HELLO)
        peer.wait(rid, 120)
        requested = next((t for t, _, path in arrivals.seen if path == "/v1/messages" and t > sent), None)
        if requested is None:
            raise BenchError(f"{agent.name}: the fake saw no Messages request{peer.stderr_tail()}")
        return {
            "ready": (ready - peer.spawned_at) * MS,
            "rss": tree_rss_mb(peer.proc.pid),
            "to_request": (requested - sent) * MS,
            "spawn_to_request": (requested - peer.spawned_at) * MS,
        }


def measure(found: list[Agent], rounds: int) -> dict[str, dict[str, Any]]:
    runnable = [a for a in found if a.command is not None]
    samples: dict[str, list[dict[str, float]]] = {a.name: [] for a in runnable}
    errors: dict[str, str] = {}
    with Scratch() as scratch, loose_fake() as (api, arrivals):
        for i in range(rounds):
            order = runnable if i % 2 == 0 else runnable[::-1]
            for agent in order:
                if agent.name in errors:
                    continue
                print(f"· round {i + 1}: {agent.name}", file=sys.stderr, flush=True)
                try:
                    samples[agent.name].append(one_round(agent, scratch, api, arrivals))
                except (BenchError, OSError, TimeoutError, KeyError) as exc:
                    errors[agent.name] = f"{type(exc).__name__}: {exc}"[:600]
    out: dict[str, dict[str, Any]] = {}
    for agent in found:
        rows = samples.get(agent.name) or []
        if rows:
            out[agent.name] = {
                "measured": {k: median([r[k] for r in rows]) for k in MEASURED},
                "samples": rows,
            }
        else:
            out[agent.name] = {"measured": None, "why": errors.get(agent.name) or agent.reason}
    return out


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    lines = [f"| figure | {' | '.join(names)} |", "|---|" + "---|" * len(names)]
    for label, key, unit in ROWS:
        cells = []
        for name in names:
            measured = results[name]["measured"]
            if measured is not None and key in measured:
                cells.append(" ".join(filter(None, (f"{measured[key]:,.0f}", unit))))
            elif key in REPORTED[name]:
                cells.append(" ".join(filter(None, (f"{REPORTED[name][key]:,}", unit, "(reported)"))))
            else:
                cells.append("—")
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--peers-dir", type=Path, default=Path("/tmp/peers/claude"))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    started = time.monotonic()
    results = measure(agents(args.peers_dir), args.rounds)
    report = {"rounds": args.rounds, "loadavg": os.getloadavg(), "agents": results}
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print("\n" + table(results))
    for name, result in results.items():
        if result["measured"] is None:
            print(f"{name}: reported, not re-measured ({result['why']})")
    print(f"\n{time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
