"""CPU figures from /proc/<pid>/task/*/schedstat: relay cost per delta and loop cost per request.

All processes of a bench are started together (their ~3 s SDK imports overlap, which no figure
here times) and warmed up; then agent and baseline take turns, one repetition each, and after each
repetition the SDK floor (`baselines/sdk_floor.py`) replays the very bodies each of them just sent.
The floor is the part of the cost no relay can avoid; subtracting it shows what each one adds.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

from acp_agent.testing import FakeMessagesAPI
from bench.common import AGENT, BASELINE, FLOOR, BenchError, Peer, Scratch, cpu_ns, median, spawn
from bench.report import Figure, Goal, pair_ratios
from bench.scenario import deltas, ensure_extras, fake_api, loop

__all__ = ["CROSS_CHECK", "Floor", "loop_overhead", "relay_throughput"]

US = 1e-3  # ns → µs
IMPLS = (("agent", AGENT), ("baseline", BASELINE))


class Floor:
    """One SDK-floor process, reused for every replay of a bench."""

    def __init__(self, scratch: Scratch, api: FakeMessagesAPI, label: str) -> None:
        self._scratch = scratch
        self._label = label
        self._runs = 0
        with open(scratch.stderr_path(f"floor-{label}"), "wb") as err:
            self.proc = subprocess.Popen(
                [*FLOOR],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=scratch.env(api.base_url),
                cwd=scratch.workspace,
                start_new_session=True,
            )

    def _expect(self, word: bytes, timeout: float) -> None:
        out = self.proc.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        line = out.readline() if ready else b""
        if line.strip() != word:
            raise BenchError(f"SDK floor {self._label}: wanted {word!r}, got {line!r}")

    def _say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def wait_ready(self, timeout: float = 120) -> None:
        self._expect(b"ready", timeout)

    def replay_ns(self, bodies: list[dict[str, Any]], timeout: float = 300) -> int:
        """CPU ns the SDK alone spends sending `bodies` one after the other and reading replies."""
        self._runs += 1
        path = self._scratch.root / f"floor-{self._label}-{self._runs}.json"
        path.write_text(json.dumps(bodies))
        self._say(str(path))
        self._expect(b"warm", timeout)
        before = cpu_ns(self.proc.pid)
        self._say("go")
        self._expect(b"done", timeout)
        spent = cpu_ns(self.proc.pid) - before
        path.unlink()
        return spent

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            self.proc.stdout.close()


@contextlib.contextmanager
def _processes(
    scratch: Scratch, api: FakeMessagesAPI, modes: tuple[bool, ...], label: str, warmup: str, **env: str
) -> Iterator[tuple[dict[tuple[bool, str], Peer], Floor]]:
    """Agent and baseline for each mode, and one SDK floor (a body says whether it streams):
    started together, warmed up, then yielded."""
    with ExitStack() as stack:
        peers: dict[tuple[bool, str], Peer] = {}
        for streaming in modes:
            for name, command in IMPLS:
                peers[streaming, name] = stack.enter_context(
                    spawn(
                        command,
                        scratch,
                        scratch.env(api.base_url, streaming=streaming, **env),
                        f"{label}-{_mode(streaming)}-{name}",
                    )
                )
        floor = Floor(scratch, api, label)
        stack.callback(floor.close)
        for peer in peers.values():
            peer.initialize()  # every SDK import starts now
        for (_, name), peer in sorted(peers.items(), key=lambda kv: kv[0][1]):  # agents first
            if name == "baseline":
                ensure_extras(scratch)
            _, sid = peer.new_session(scratch.workspace)
            peer.prompt(sid, warmup, timeout=120)
            if name == "agent":
                scratch.note_agent_request(api.requests[-1].body)
        floor.wait_ready()
        yield peers, floor


CROSS_CHECK: dict[str, list[float]] = {"agent": [], "baseline": []}
"""Per measured turn: CPU by /proc/<pid>/stat (ended threads included) ÷ CPU by schedstat."""


def _turn_cpu(
    peer: Peer, scratch: Scratch, prompt: str, timeout: float, name: str | None = None
) -> tuple[int, float, Any]:
    """(CPU ns, wall s, result) of one prompt in a fresh session."""
    _, sid = peer.new_session(scratch.workspace)
    peer.reset_chunks()
    before, stat_before = peer.cpu_ns(), peer.stat_cpu_ns()
    sent, answered, result = peer.prompt(sid, prompt, timeout=timeout)
    spent = peer.cpu_ns() - before
    if name is not None and spent > 0:
        CROSS_CHECK[name].append(round((peer.stat_cpu_ns() - stat_before) / spent, 3))
    return spent, answered - sent, result


def _order(rep: int) -> tuple[str, str]:
    return ("agent", "baseline") if rep % 2 == 0 else ("baseline", "agent")


def _mode(streaming: bool) -> str:
    return "streaming" if streaming else "non-streaming"


def relay_throughput(scratch: Scratch, n: int, reps: int, modes: tuple[bool, ...]) -> list[Figure]:
    """The fake sends n small text deltas (non-streaming: n small text blocks in one message)."""
    figures: list[Figure] = []
    with fake_api() as api, _processes(scratch, api, modes, "relay", deltas(100)) as (peers, floor_proc):
        for streaming in modes:
            per_delta: dict[str, list[float]] = {"agent": [], "baseline": []}
            excl: dict[str, list[float]] = {"agent": [], "baseline": []}
            floor: dict[str, list[float]] = {"agent": [], "baseline": []}
            rate: dict[str, list[float]] = {"agent": [], "baseline": []}
            fixed: dict[str, list[float]] = {"agent": [], "baseline": []}
            for rep in range(reps):
                for name in _order(rep):
                    peer = peers[streaming, name]
                    one, _, _ = _turn_cpu(peer, scratch, deltas(1), 60)
                    many, wall, result = _turn_cpu(peer, scratch, deltas(n), 300, name)
                    if peer.chunks != n or result.get("stopReason") != "end_turn":
                        raise BenchError(f"{name}: {peer.chunks} of {n} chunks, {result!r:.200}")
                    body = api.requests[-1].body
                    sdk = floor_proc.replay_ns([body]) / n * US
                    cost = (many - one) / (n - 1) * US
                    per_delta[name].append(cost)
                    floor[name].append(sdk)
                    excl[name].append(cost - sdk)
                    fixed[name].append(one * US)
                    rate[name].append(n / wall)
            mode = _mode(streaming)
            detail = {
                "n": n,
                "reps": reps,
                "cpu_per_delta_us": per_delta,
                "sdk_floor_per_delta_us": floor,
                "excl_sdk_us": excl,
                "cpu_one_delta_turn_us": fixed,
                "chunks_per_s": rate,
                "how": "(CPU of an n-delta turn - CPU of a 1-delta turn) / (n - 1), fresh "
                "sessions; the floor replays the n-delta request through the SDK alone",
            }
            figures += [
                Figure(
                    f"relay.{mode}.cpu_per_delta",
                    f"relay ({mode}): CPU per delta",
                    "µs",
                    median(per_delta["agent"]),
                    median(per_delta["baseline"]),
                    Goal("ratio", 1.2, "≤ 1.20×"),
                    detail=detail,
                    pairs=pair_ratios(per_delta["agent"], per_delta["baseline"]),
                ),
                Figure(
                    f"relay.{mode}.sdk_floor",
                    f"relay ({mode}): SDK floor CPU per delta",
                    "µs",
                    median(floor["agent"]),
                    median(floor["baseline"]),
                    pairs=pair_ratios(floor["agent"], floor["baseline"]),
                ),
                Figure(
                    f"relay.{mode}.cpu_excl_sdk",
                    f"relay ({mode}): CPU per delta excl. SDK floor",
                    "µs",
                    median(excl["agent"]),
                    median(excl["baseline"]),
                    pairs=pair_ratios(excl["agent"], excl["baseline"]),
                ),
                Figure(
                    f"relay.{mode}.chunks_per_s",
                    f"relay ({mode}): chunks/s reaching the client",
                    "chunks/s",
                    median(rate["agent"]),
                    median(rate["baseline"]),
                    pairs=pair_ratios(rate["agent"], rate["baseline"]),
                ),
            ]
    return figures


def loop_overhead(scratch: Scratch, k: int, reps: int, modes: tuple[bool, ...]) -> list[Figure]:
    """One turn of k model requests, each answered at once with a trivial list_files tool_use."""
    figures: list[Figure] = []
    limits = {
        "ACP_AGENT_MAX_TURN_REQUESTS": str(k + 5),
        "ACP_AGENT_MAX_TOOL_CALLS": str(k + 5),
        "ACP_AGENT_REPEAT_LIMIT": "0",
    }
    with fake_api() as api, _processes(scratch, api, modes, "loop", loop(4), **limits) as (peers, floor_proc):
        for streaming in modes:
            total: dict[str, list[float]] = {"agent": [], "baseline": []}
            floor: dict[str, list[float]] = {"agent": [], "baseline": []}
            excl: dict[str, list[float]] = {"agent": [], "baseline": []}
            for rep in range(reps):
                for name in _order(rep):
                    start = api.attempts
                    cpu, _, result = _turn_cpu(peers[streaming, name], scratch, loop(k), 300, name)
                    sent = api.attempts - start
                    if sent != k or result.get("stopReason") != "end_turn":
                        raise BenchError(f"{name}: {sent} requests for {k}, {result!r:.300}")
                    bodies = [r.body for r in api.requests[start : start + k]]
                    sdk = floor_proc.replay_ns(bodies) / k * US
                    total[name].append(cpu / k * US)
                    floor[name].append(sdk)
                    excl[name].append(cpu / k * US - sdk)
            mode = _mode(streaming)
            detail = {
                "k": k,
                "reps": reps,
                "cpu_per_request_us": total,
                "sdk_floor_per_request_us": floor,
                "excl_sdk_us": excl,
                "how": "CPU of the whole k-request turn / k; after each turn the floor "
                "replays the same k bodies through the SDK alone",
            }
            figures += [
                Figure(
                    f"loop.{mode}.cpu_per_request",
                    f"loop ({mode}): CPU per model request",
                    "µs",
                    median(total["agent"]),
                    median(total["baseline"]),
                    Goal("ratio", 1.5, "≤ 1.50×"),
                    detail=detail,
                    pairs=pair_ratios(total["agent"], total["baseline"]),
                ),
                Figure(
                    f"loop.{mode}.sdk_floor",
                    f"loop ({mode}): SDK floor CPU per request",
                    "µs",
                    median(floor["agent"]),
                    median(floor["baseline"]),
                    pairs=pair_ratios(floor["agent"], floor["baseline"]),
                ),
                Figure(
                    f"loop.{mode}.cpu_excl_sdk",
                    f"loop ({mode}): CPU per request excl. SDK floor",
                    "µs",
                    median(excl["agent"]),
                    median(excl["baseline"]),
                    Goal("ratio", 1.5, "≤ 1.50×"),
                    pairs=pair_ratios(excl["agent"], excl["baseline"]),
                ),
            ]
    return figures
