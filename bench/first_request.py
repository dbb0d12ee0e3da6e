"""`python bench/first_request.py`: how soon a first prompt's request reaches the API, and what it waits for.

    python bench/first_request.py [--rounds 7] [--other DIR] [--peers-dir DIR] [--repo FILES]
                                  [--json out.json]

Each round spawns every contestant once, in an order rotated round by round (so load drifts hit
all alike), against one loopback fake (`acp_agent.testing`, not strict: a peer sends its own
fields), and times on the bench's clock:
- an ACP agent (this tree; `--other`, an export of another commit run with this venv, e.g.
  `git archive a578c8c | tar -x -C /tmp/a578c8c`; claude-agent-acp when installed, see
  `bench/peers.py`): `initialize` and `session/new` written at spawn, the prompt written the moment
  `session/new` is answered; spawn → `session/new` answered, prompt → the first `POST
  /v1/messages` reaching the fake, spawn → that request, prompt → the first `agent_message_chunk`,
  the process tree's CPU (user + sys, ended threads included) at spawn → request and prompt →
  request, and its RSS after the prompt;
- the raw-SDK floor (`baselines/sdk_request.py`): a fresh process that imports the SDK and sends
  the agent's own first request body; spawn → request. And the same with the agent's lean SDK
  import (`--lean`), the floor of the way the agent imports it;
- the stack floor (`baselines/stack_floor.py`): spawn → `session/new`, readiness's reference.

This tree runs with `ACP_AGENT_PROFILE_PHASES=1`: the agent logs each phase of start-up and of the
first prompt (`acp_agent/phases.py`) on the same clock, and the bench prints their medians,
placed from the prompt's sending: what the next regression of prompt → request is made of.
Medians of `--rounds` (default 7).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.testing import FakeMessagesAPI
from acp_agent.testing.recorded import RecordedRequest
from acp_agent.testing.repo import RepoShape, make_repo
from bench.common import AGENT, PYTHON, REPO, STACK_FLOOR, BenchError, Peer, Scratch, median, p90, stat_cpu_ns
from bench.peers import QUIET, tree_rss_mb
from bench.scenario import HELLO, _no_delay, route

MS = 1000.0
SDK_REQUEST = (PYTHON, str(REPO / "bench" / "baselines" / "sdk_request.py"))
PHASES_ENV = {"ACP_AGENT_PROFILE_PHASES": "1", "ACP_AGENT_LOG_LEVEL": "info"}


@dataclass(frozen=True)
class Contestant:
    name: str
    command: tuple[str, ...]
    kind: str
    """"acp" (an agent), "sdk" (the floor script), "stack" (readiness only)."""
    env: dict[str, str] = field(default_factory=dict)


# ── the fake, with the time (and the asking process tree's CPU) of each request ────────────────
class Arrivals:
    """Each request's arrival on the bench's clock, and the watched process tree's CPU then."""

    def __init__(self, api: FakeMessagesAPI) -> None:
        self.seen: list[tuple[float, str, int | None]] = []
        self.watch: int | None = None
        receive = api.receive

        def stamped(request: RecordedRequest) -> Any:
            now = time.perf_counter()
            cpu = tree_cpu_ns(self.watch) if self.watch is not None else None
            self.seen.append((now, request.path.split("?", 1)[0], cpu))
            return receive(request)

        api.receive = stamped  # type: ignore[method-assign]

    def first_request(self, after: float) -> tuple[float, int | None] | None:
        """The first `POST /v1/messages` that arrived after `after`: its time and the tree's CPU."""
        return next(((t, cpu) for t, path, cpu in self.seen if path == "/v1/messages" and t > after), None)


@contextmanager
def loopback() -> Iterator[tuple[FakeMessagesAPI, Arrivals]]:
    with FakeMessagesAPI(strict=False) as api:
        api.set_fallback(route)
        _no_delay(api)
        yield api, Arrivals(api)


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children[int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])].append(
                    int(entry.name)
                )
            except (OSError, IndexError, ValueError):
                continue
    return children


def tree_cpu_ns(pid: int) -> int:
    """User + sys CPU of `pid` and its live descendants (ended threads included, ended children not)."""
    children, total, todo = _children(), 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            total += stat_cpu_ns(current)
        except OSError:
            continue
    return total


# ── one round of each kind ──────────────────────────────────────────────────────────────────
def acp_round(who: Contestant, scratch: Scratch, api: FakeMessagesAPI, arrivals: Arrivals) -> dict[str, Any]:
    stderr = scratch.stderr_path(who.name.replace(" ", "-"))
    peer = Peer(who.command, {**scratch.env(api.base_url), **QUIET, **who.env}, scratch.workspace, stderr)
    try:
        arrivals.watch = peer.pid
        r_init, _ = peer.start("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        r_new, _ = peer.start("session/new", {"cwd": str(scratch.workspace), "mcpServers": []})
        initialized, _ = peer.wait(r_init, 120)
        ready, answer = peer.wait(r_new, 120)
        if "error" in answer:
            raise BenchError(f"{who.name}: session/new failed: {answer['error']}{peer.stderr_tail()}")
        r_prompt, sent = peer.start_prompt(answer["result"]["sessionId"], HELLO)
        cpu_at_prompt = tree_cpu_ns(peer.pid)
        if not peer.first_chunk.wait(120):
            raise BenchError(f"{who.name}: no agent_message_chunk in 120 s{peer.stderr_tail()}")
        peer.wait(r_prompt, 60)
        found = arrivals.first_request(sent)
        if found is None:
            raise BenchError(f"{who.name}: the fake saw no Messages request{peer.stderr_tail()}")
        requested, cpu_at_request = found
        assert peer.first_chunk_at is not None
        row: dict[str, Any] = {
            "initialize": (initialized - peer.spawned_at) * MS,
            "ready": (ready - peer.spawned_at) * MS,
            "to_request": (requested - sent) * MS,
            "spawn_to_request": (requested - peer.spawned_at) * MS,
            "to_chunk": (peer.first_chunk_at - sent) * MS,
            "rss": tree_rss_mb(peer.pid),
            "cpu_ready": cpu_at_prompt / 1e6,  # read just after the prompt was sent: nothing waits for it
        }
        if cpu_at_request is not None:
            row["cpu_to_request"] = cpu_at_request / 1e6
            row["cpu_prompt_to_request"] = (cpu_at_request - cpu_at_prompt) / 1e6
        if who.env.get("ACP_AGENT_PROFILE_PHASES") == "1":
            row["phases"] = read_phases(stderr, sent)
        return row
    finally:
        arrivals.watch = None
        peer.close()


def sdk_round(who: Contestant, scratch: Scratch, api: FakeMessagesAPI, arrivals: Arrivals) -> dict[str, Any]:
    peer = Peer(who.command, scratch.env(api.base_url), scratch.workspace, scratch.stderr_path("sdk-floor"))
    try:
        arrivals.watch = peer.pid
        if peer.wait_exit(120) is None or peer.proc.returncode != 0:
            raise BenchError(f"{who.name}: exit code {peer.proc.returncode}{peer.stderr_tail()}")
        found = arrivals.first_request(peer.spawned_at)
        if found is None:
            raise BenchError(f"{who.name}: the fake saw no request{peer.stderr_tail()}")
        row: dict[str, Any] = {"spawn_to_request": (found[0] - peer.spawned_at) * MS}
        if found[1] is not None:
            row["cpu_to_request"] = found[1] / 1e6
        return row
    finally:
        arrivals.watch = None
        peer.close()


def stack_round(
    who: Contestant, scratch: Scratch, api: FakeMessagesAPI, arrivals: Arrivals
) -> dict[str, Any]:
    peer = Peer(who.command, scratch.env(api.base_url), scratch.workspace, scratch.stderr_path("stack"))
    try:
        r_init, _ = peer.start("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        r_new, _ = peer.start("session/new", {"cwd": str(scratch.workspace), "mcpServers": []})
        initialized, _ = peer.wait(r_init, 60)
        ready, _ = peer.wait(r_new, 60)
        return {"initialize": (initialized - peer.spawned_at) * MS, "ready": (ready - peer.spawned_at) * MS}
    finally:
        peer.close()


ROUNDS: dict[str, Callable[[Contestant, Scratch, FakeMessagesAPI, Arrivals], dict[str, Any]]] = {
    "acp": acp_round,
    "sdk": sdk_round,
    "stack": stack_round,
}


def read_phases(stderr: Path, sent: float) -> list[dict[str, Any]]:
    """The agent's `phase` events, placed from the prompt's sending (ms)."""
    phases = []
    for raw in stderr.read_bytes().splitlines():
        if b'"phase"' not in raw:
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if event.get("event") == "phase":
            phases.append(
                {
                    "name": event["name"],
                    "start": (event["start"] - sent) * MS,
                    "ms": (event["end"] - event["start"]) * MS,
                    "cpu": event["cpu_ms"],
                    "modules": event["modules"],
                }
            )
    return phases


# ── the run ─────────────────────────────────────────────────────────────────────────────────
THIS = "this tree"
OTHER = "--other"
CLAUDE = "claude-agent-acp"
FLOOR = "raw-SDK floor"
LEAN_FLOOR = "raw-SDK floor, lean import"
STACK = "stack floor"


def contestants(other: Path | None, peers_dir: Path, body: Path) -> tuple[list[Contestant], dict[str, str]]:
    """Who runs, and why a missing one does not."""
    found = [Contestant(THIS, AGENT, "acp", PHASES_ENV)]
    missing: dict[str, str] = {}
    if other is not None:
        found.append(Contestant(OTHER, AGENT, "acp", {"PYTHONPATH": str(other.resolve())}))
    script = os.environ.get("BENCH_CLAUDE_AGENT_ACP") or str(
        peers_dir / "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    )
    node = shutil.which("node")
    if node and Path(script).is_file():
        found.append(Contestant(CLAUDE, (node, script), "acp"))
    else:
        missing[CLAUDE] = "no `node` on PATH" if not node else f"not installed ({script} is missing)"
    found += [
        Contestant(FLOOR, (*SDK_REQUEST, str(body)), "sdk"),
        Contestant(LEAN_FLOOR, (*SDK_REQUEST, str(body), "--lean"), "sdk"),
        Contestant(STACK, STACK_FLOOR, "stack"),
    ]
    return found, missing


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with Scratch() as scratch, loopback() as (api, arrivals):
        if args.repo:
            make_repo(scratch.workspace, RepoShape(tracked=args.repo, ignored=args.repo // 10))
        body = scratch.root / "first-request.json"
        found, missing = contestants(args.other, args.peers_dir, body)
        acp_round(found[0], scratch, api, arrivals)  # a warm disk cache, and the body for the floors
        body.write_text(json.dumps(next(r.body for r in api.requests if r.path.startswith("/v1/messages"))))
        samples: dict[str, list[dict[str, Any]]] = {c.name: [] for c in found}
        for i in range(args.rounds):
            k = i % len(found)
            for who in found[k:] + found[:k]:
                if who.name in missing:
                    continue
                print(f"· round {i + 1}/{args.rounds}: {who.name}", file=sys.stderr, flush=True)
                try:
                    samples[who.name].append(ROUNDS[who.kind](who, scratch, api, arrivals))
                except (BenchError, OSError, TimeoutError, KeyError) as exc:
                    missing[who.name] = f"{type(exc).__name__}: {exc}"[:800]
    return {"samples": samples, "missing": missing}


# ── the report ──────────────────────────────────────────────────────────────────────────────
FIGURES = (
    ("spawn → initialize answered", "initialize", "ms"),
    ("spawn → session/new answered (readiness)", "ready", "ms"),
    ("prompt (sent at session/new) → first request", "to_request", "ms"),
    ("spawn → first request", "spawn_to_request", "ms"),
    ("prompt → first chunk", "to_chunk", "ms"),
    ("CPU, spawn → session/new answered (process tree)", "cpu_ready", "ms"),
    ("CPU, spawn → first request (process tree)", "cpu_to_request", "ms"),
    ("CPU, prompt → first request (process tree)", "cpu_prompt_to_request", "ms"),
    ("RSS of the process tree after the prompt", "rss", "MB"),
)


def medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = {k for row in rows for k, v in row.items() if isinstance(v, int | float)}
    return {k: median([row[k] for row in rows if k in row]) for k in sorted(keys)}


def table(results: dict[str, dict[str, float]]) -> str:
    names = [name for name, figures in results.items() if figures]
    lines = [f"| figure (median) | {' | '.join(names)} |", "|---|" + "---:|" * len(names)]
    for label, key, unit in FIGURES:
        cells = [f"{results[n][key]:,.0f} {unit}" if key in results[n] else "—" for n in names]
        if any(cell != "—" for cell in cells):
            lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def goals(results: dict[str, dict[str, float]]) -> list[str]:
    """The issue's goals, each with its figures (only those whose references ran)."""
    this, out = results.get(THIS) or {}, []
    claude, floor, stack = results.get(CLAUDE), results.get(FLOOR), results.get(STACK)

    def line(text: str, value: float, bound: float) -> None:
        out.append(
            f"- {text}: {value:,.0f} ms against ≤ {bound:,.0f} ms: {'met' if value <= bound else 'NOT met'}"
        )

    if claude and "to_request" in this:
        line("prompt → first request ≤ 1.0× claude-agent-acp's", this["to_request"], claude["to_request"])
        line(
            "spawn → first request ≤ 0.6× claude-agent-acp's",
            this["spawn_to_request"],
            0.6 * claude["spawn_to_request"],
        )
    if floor and "to_request" in this:
        line(
            "prompt → first request ≤ the raw-SDK floor + 150 ms",
            this["to_request"],
            floor["spawn_to_request"] + 150,
        )
    if stack and "ready" in this:
        line("spawn → session/new ≤ 1.5× the stack floor's", this["ready"], 1.5 * stack["ready"])
    return out


def phase_table(rows: list[dict[str, Any]]) -> str:
    """Each phase's median start (from the prompt's sending), length and CPU, in time order."""
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for item in row.get("phases", ()):
            by_name[item["name"]].append(item)
    lines = [
        "| phase | starts (ms from the prompt) | lasts (ms) | CPU of its thread (ms) | modules at its end |",
        "|---|---:|---:|---:|---:|",
    ]
    order = sorted(by_name, key=lambda name: median([p["start"] for p in by_name[name]]))
    for name in order:
        items = by_name[name]
        start, length = median([p["start"] for p in items]), median([p["ms"] for p in items])
        cpu, modules = median([p["cpu"] for p in items]), median([p["modules"] for p in items])
        lines.append(f"| {name} | {start:,.0f} | {length:,.0f} | {cpu:,.1f} | {modules:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds, each contestant once (default 7)")
    parser.add_argument("--other", type=Path, help="an export of another commit, run with this venv")
    parser.add_argument(
        "--peers-dir",
        type=Path,
        default=Path("/tmp/peers/claude"),
        help="where claude-agent-acp is installed",
    )
    parser.add_argument(
        "--repo", type=int, metavar="FILES", help="the workspace: a repository of FILES files"
    )
    parser.add_argument("--json", type=Path, help="also write every sample to this file")
    args = parser.parse_args(argv)
    started, load = time.monotonic(), os.getloadavg()[0]
    run = measure(args)
    results = {name: medians(rows) for name, rows in run["samples"].items()}
    report = {"rounds": args.rounds, "repo": args.repo, "loadavg": [load, os.getloadavg()[0]], **run}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(table(results))
    print()
    print("\n".join(goals(results)) or "(no goal could be checked: its reference did not run)")
    for name, why in run["missing"].items():
        print(f"{name}: not measured ({why})")
    print(f"\nphases of this tree's first prompt (medians of {args.rounds}):\n")
    print(phase_table(run["samples"][THIS]))
    print(
        f"\n{time.monotonic() - started:.0f} s; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; p90 of prompt → first request, this tree: "
        f"{p90([r['to_request'] for r in run['samples'][THIS]] or [float('nan')]):,.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
