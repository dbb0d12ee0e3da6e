"""CPU figures from /proc/<pid>/task/*/schedstat: relay cost per delta and loop cost per request.

Agent and baseline stay up side by side (the idle one costs nothing) and take turns, one
repetition each, so both see the same machine. Each is also compared with the SDK floor: the same
request bodies replayed through the SDK alone (`baselines/sdk_floor.py`), which is the part of the
cost that no relay can avoid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI

from bench.common import AGENT, BASELINE, FLOOR, BenchError, Peer, Scratch, cpu_ns, median, spawn
from bench.report import Figure, Goal
from bench.scenario import HELLO, deltas, fake_api, loop

__all__ = ["capture_extras", "loop_overhead", "relay_throughput", "sdk_floor_ns"]

US = 1e-3  # ns → µs


def sdk_floor_ns(scratch: Scratch, api: FakeMessagesAPI, bodies: list[dict[str, Any]],
                 streaming: bool, timeout: float = 300.0) -> int:
    """CPU ns the SDK alone spends sending `bodies` (one after the other) and reading the replies."""
    path = scratch.root / "floor-bodies.json"
    path.write_text(json.dumps(bodies))
    env = scratch.env(api.base_url, streaming=streaming)
    with open(scratch.stderr_path("floor"), "wb") as err:
        proc = subprocess.Popen([*FLOOR, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, env=env, cwd=scratch.workspace, start_new_session=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":
            raise BenchError("the SDK floor did not start (see its log in the bench temp dir)")
        before = cpu_ns(proc.pid)
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        line = _readline_within(proc, timeout)
        after = cpu_ns(proc.pid)
        if line.strip() != b"done":
            raise BenchError(f"the SDK floor failed: {line!r}")
        return after - before
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


def _readline_within(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    import select

    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else b""


def _prepare(peer: Peer, scratch: Scratch, warmup: str) -> None:
    peer.initialize()
    _, sid = peer.new_session(scratch.workspace)
    peer.prompt(sid, warmup, timeout=120)


def _turn_cpu(peer: Peer, scratch: Scratch, prompt: str, timeout: float) -> tuple[int, float, Any]:
    """(CPU ns, wall s, result) of one prompt in a fresh session."""
    _, sid = peer.new_session(scratch.workspace)
    peer.reset_chunks()
    before = peer.cpu_ns()
    sent, answered, result = peer.prompt(sid, prompt, timeout=timeout)
    return peer.cpu_ns() - before, answered - sent, result


def relay_throughput(scratch: Scratch, n: int, reps: int, streaming: bool,
                     extras: Path) -> list[Figure]:
    """The fake sends n small text deltas (non-streaming: n small text blocks in one message)."""
    mode = "streaming" if streaming else "non-streaming"
    per_delta: dict[str, list[float]] = {"agent": [], "baseline": []}
    rate: dict[str, list[float]] = {"agent": [], "baseline": []}
    fixed: dict[str, list[float]] = {"agent": [], "baseline": []}
    bodies: dict[str, dict[str, Any]] = {}
    floor: dict[str, float] = {}
    with fake_api() as api:
        env = scratch.env(api.base_url, streaming=streaming, BENCH_REQUEST_EXTRAS=str(extras))
        with spawn(AGENT, scratch, env, f"relay-{mode}-agent") as agent, \
                spawn(BASELINE, scratch, env, f"relay-{mode}-baseline") as baseline:
            peers = {"agent": agent, "baseline": baseline}
            for peer in peers.values():
                _prepare(peer, scratch, deltas(200))
            for rep in range(reps):
                for name in (("agent", "baseline") if rep % 2 == 0 else ("baseline", "agent")):
                    peer = peers[name]
                    one, _, _ = _turn_cpu(peer, scratch, deltas(1), 60)
                    many, wall, result = _turn_cpu(peer, scratch, deltas(n), 300)
                    if peer.chunks != n or result.get("stopReason") != "end_turn":
                        raise BenchError(f"{name}: {peer.chunks} of {n} chunks, {result!r:.200}")
                    bodies[name] = api.requests[-1].body
                    per_delta[name].append((many - one) / (n - 1) * US)
                    fixed[name].append(one * US)
                    rate[name].append(n / wall)
        for name, body in bodies.items():
            floor[name] = sdk_floor_ns(scratch, api, [body], streaming) / n * US
    a, b = median(per_delta["agent"]), median(per_delta["baseline"])
    detail = {"n": n, "reps": reps, "cpu_per_delta_us": per_delta,
              "cpu_one_delta_turn_us": fixed, "chunks_per_s": rate, "sdk_floor_per_delta_us": floor,
              "how": "(CPU of an n-delta turn - CPU of a 1-delta turn) / (n - 1), fresh sessions"}
    return [
        Figure(f"relay.{mode}.cpu_per_delta", f"relay ({mode}): CPU per delta", "µs", a, b,
               Goal("ratio", 1.2, "≤ 1.20×"), detail=detail),
        Figure(f"relay.{mode}.sdk_floor", f"relay ({mode}): SDK floor CPU per delta", "µs",
               floor["agent"], floor["baseline"]),
        Figure(f"relay.{mode}.cpu_excl_sdk", f"relay ({mode}): CPU per delta excl. SDK floor", "µs",
               a - floor["agent"], b - floor["baseline"]),
        Figure(f"relay.{mode}.chunks_per_s", f"relay ({mode}): chunks/s reaching the client",
               "chunks/s", median(rate["agent"]), median(rate["baseline"])),
    ]


def loop_overhead(scratch: Scratch, k: int, reps: int, streaming: bool,
                  extras: Path) -> list[Figure]:
    """One turn of k model requests, each answered at once with a trivial list_files tool_use."""
    mode = "streaming" if streaming else "non-streaming"
    per_request: dict[str, list[float]] = {"agent": [], "baseline": []}
    bodies: dict[str, list[dict[str, Any]]] = {}
    floor: dict[str, float] = {}
    limits = {"ACP_AGENT_MAX_TURN_REQUESTS": str(k + 5), "ACP_AGENT_MAX_TOOL_CALLS": str(k + 5),
              "ACP_AGENT_REPEAT_LIMIT": "0", "BENCH_REQUEST_EXTRAS": str(extras)}
    with fake_api() as api:
        env = scratch.env(api.base_url, streaming=streaming, **limits)
        with spawn(AGENT, scratch, env, f"loop-{mode}-agent") as agent, \
                spawn(BASELINE, scratch, env, f"loop-{mode}-baseline") as baseline:
            peers = {"agent": agent, "baseline": baseline}
            for peer in peers.values():
                _prepare(peer, scratch, loop(4))
            for rep in range(reps):
                for name in (("agent", "baseline") if rep % 2 == 0 else ("baseline", "agent")):
                    start = api.attempts
                    cpu, _, result = _turn_cpu(peers[name], scratch, loop(k), 300)
                    sent = api.attempts - start
                    if sent != k or result.get("stopReason") != "end_turn":
                        raise BenchError(f"{name}: {sent} requests for {k}, {result!r:.300}")
                    bodies[name] = [r.body for r in api.requests[start:]]
                    per_request[name].append(cpu / k * US)
        for name, sent_bodies in bodies.items():
            floor[name] = sdk_floor_ns(scratch, api, sent_bodies, streaming) / k * US
    a, b = median(per_request["agent"]), median(per_request["baseline"])
    detail = {"k": k, "reps": reps, "cpu_per_request_us": per_request,
              "sdk_floor_per_request_us": floor,
              "how": "CPU of the whole k-request turn / k; the floor replays the same bodies"}
    return [
        Figure(f"loop.{mode}.cpu_per_request", f"loop ({mode}): CPU per model request", "µs", a, b,
               detail=detail),
        Figure(f"loop.{mode}.sdk_floor", f"loop ({mode}): SDK floor CPU per request", "µs",
               floor["agent"], floor["baseline"]),
        Figure(f"loop.{mode}.cpu_excl_sdk", f"loop ({mode}): CPU per request excl. SDK floor",
               "µs", a - floor["agent"], b - floor["baseline"], Goal("ratio", 1.5, "≤ 1.50×")),
    ]


def capture_extras(scratch: Scratch) -> Path:
    """The agent's own `system`, `tools` and `max_tokens`, for the baseline to send too."""
    with fake_api() as api:
        with spawn(AGENT, scratch, scratch.env(api.base_url), "probe") as peer:
            peer.initialize()
            _, sid = peer.new_session(scratch.workspace)
            peer.prompt(sid, HELLO, timeout=60)
        body = api.requests[-1].body
    extras = {k: body[k] for k in ("system", "tools", "max_tokens") if k in body}
    path = scratch.root / "request-extras.json"
    path.write_text(json.dumps(extras))
    return path
