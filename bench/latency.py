"""Wall-clock figures, timed on the client side: cold start, first prompt, cancel, shutdown; and memory.

Fresh processes for every start-up sample, agent and baseline interleaved (and the order swapped
each round) so a noisy neighbour hurts both alike.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from bench.common import AGENT, BASELINE, STACK_FLOOR, BenchError, Peer, Scratch, median, p90, spawn
from bench.report import Figure, Goal, pair_ratios
from bench.scenario import HELLO, Arrivals, ensure_extras, fake_api, slow, stall

__all__ = ["cancel_latency", "cold_start", "first_prompt", "memory", "shutdown"]

MS = 1000.0
IMPLS = (("agent", AGENT), ("baseline", BASELINE))
COLD_IMPLS = (*IMPLS, ("stack_floor", STACK_FLOOR))


def _rounds(n: int) -> Iterator[tuple[str, tuple[str, ...]]]:
    """n rounds of (agent, baseline), the order swapped every other round."""
    for i in range(n):
        yield from (IMPLS if i % 2 == 0 else IMPLS[::-1])


def _rotated_rounds(
    n: int, impls: tuple[tuple[str, tuple[str, ...]], ...]
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """n rounds of every impl, the order rotated by one each round (so each leads as often)."""
    for i in range(n):
        k = i % len(impls)
        yield from impls[k:] + impls[:k]


def _median_or_none(values: list[float]) -> float | None:
    return median(values) if values else None


def _stats(values: list[float]) -> dict[str, object]:
    return {
        "median": median(values),
        "p90": p90(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
        "samples": [round(v, 2) for v in values],
    }


def cold_start(scratch: Scratch, n: int) -> list[Figure]:
    """spawn → initialize answered, and spawn → session/new answered (sent after initialize).

    Three processes per round, the order rotated: the agent, the relay baseline (stdlib only) and
    the stack floor (`baselines/stack_floor.py`: anyio + pydantic + structlog and nothing else),
    the second reference for the agent's own stack."""
    init: dict[str, list[float]] = {name: [] for name, _ in COLD_IMPLS}
    ready: dict[str, list[float]] = {name: [] for name, _ in COLD_IMPLS}
    exits: list[float] = []
    floor_exits: list[float] = []
    with fake_api() as api:
        env = scratch.env(api.base_url)
        for name, command in _rotated_rounds(n, COLD_IMPLS):
            with spawn(command, scratch, env, f"cold-{name}") as peer:
                t_init = peer.initialize()
                t_new, _ = peer.new_session(scratch.workspace)
                init[name].append((t_init - peer.spawned_at) * MS)
                ready[name].append((t_new - peer.spawned_at) * MS)
                if name == "agent":  # EOF while the SDK import is still under way
                    sent = peer.close_stdin()
                    gone = peer.wait_exit(10)
                    if gone is not None:
                        exits.append((gone - sent) * MS)
                elif name == "stack_floor":  # it must end by itself, and cleanly, on EOF
                    sent = peer.close_stdin()
                    gone = peer.wait_exit(10)
                    if gone is None or peer.proc.returncode != 0:
                        raise BenchError(
                            f"stack floor: exit code {peer.proc.returncode} after EOF{peer.stderr_tail()}"
                        )
                    floor_exits.append((gone - sent) * MS)
    floor = {
        "initialize": _stats(init["stack_floor"]),
        "session_new": _stats(ready["stack_floor"]),
        "exit_on_eof_right_after_session_new_ms": _stats(floor_exits),
    }
    return [
        Figure(
            "cold_start.initialize.median",
            "cold start: spawn → initialize, median",
            "ms",
            median(init["agent"]),
            median(init["baseline"]),
            Goal("max", 250, "≤ 250 ms"),
            detail={k: _stats(v) for k, v in init.items()},
            pairs=pair_ratios(init["agent"], init["baseline"]),
        ),
        Figure(
            "cold_start.initialize.p90",
            "cold start: spawn → initialize, p90",
            "ms",
            p90(init["agent"]),
            p90(init["baseline"]),
        ),
        Figure(
            "cold_start.session_new.median",
            "cold start: spawn → session/new, median",
            "ms",
            median(ready["agent"]),
            median(ready["baseline"]),
            Goal("max", 250, "≤ 250 ms"),
            detail={
                **{k: _stats(v) for k, v in ready.items()},
                "agent_exit_on_eof_right_after_session_new_ms": _stats(exits),
            },
            pairs=pair_ratios(ready["agent"], ready["baseline"]),
        ),
        Figure(
            "cold_start.session_new.p90",
            "cold start: spawn → session/new, p90",
            "ms",
            p90(ready["agent"]),
            p90(ready["baseline"]),
        ),
        # The stack floor sits in the baseline column: the ratio is what the agent adds over its
        # own libraries' import and first use.
        Figure(
            "cold_start.session_new.vs_stack_floor.median",
            "cold start: spawn → session/new, median, vs stack floor",
            "ms",
            median(ready["agent"]),
            median(ready["stack_floor"]),
            detail={"agent": _stats(ready["agent"]), "stack_floor": _stats(ready["stack_floor"])},
            pairs=pair_ratios(ready["agent"], ready["stack_floor"]),
        ),
        # The floor's own number, in the agent column, against the relay baseline: what the stack
        # costs over a stdlib-only process.
        Figure(
            "cold_start.stack_floor.session_new.median",
            "stack floor: spawn → session/new, median (vs relay)",
            "ms",
            median(ready["stack_floor"]),
            median(ready["baseline"]),
            detail={"stack_floor": floor, "baseline": _stats(ready["baseline"])},
            pairs=pair_ratios(ready["stack_floor"], ready["baseline"]),
        ),
    ]


def first_prompt(scratch: Scratch, n: int, wait_after_init: float | None) -> list[Figure]:
    """initialize + session/new + a one-line prompt → the first model request (as the fake sees it
    arrive) and the first agent_message_chunk."""
    to_chunk: dict[str, list[float]] = {"agent": [], "baseline": []}
    from_spawn: dict[str, list[float]] = {"agent": [], "baseline": []}
    to_request: dict[str, list[float]] = {"agent": [], "baseline": []}
    with fake_api() as api:
        arrivals = Arrivals(api)
        env = scratch.env(api.base_url)
        for name, command in _rounds(n):
            if name == "baseline":
                ensure_extras(scratch)
            arrivals.clear()
            with spawn(command, scratch, env, f"first-{name}") as peer:
                t_init = peer.initialize()
                _, sid = peer.new_session(scratch.workspace)
                if wait_after_init is not None:
                    time.sleep(max(0.0, t_init + wait_after_init - time.perf_counter()))
                rid, sent = peer.start_prompt(sid, HELLO)
                if not peer.first_chunk.wait(30):
                    raise BenchError(f"{name}: no agent_message_chunk in 30 s{peer.stderr_tail()}")
                assert peer.first_chunk_at is not None
                peer.wait(rid, 30)
                if name == "agent":
                    scratch.note_agent_request(api.requests[-1].body)
                to_chunk[name].append((peer.first_chunk_at - sent) * MS)
                from_spawn[name].append((peer.first_chunk_at - peer.spawned_at) * MS)
                requested = arrivals.first_message_request()
                if requested is None:
                    raise BenchError(f"{name}: the fake saw no Messages request")
                to_request[name].append((requested - sent) * MS)
    if wait_after_init is None:
        return [
            Figure(
                "first_prompt.immediate.prompt_to_request",
                "first prompt, sent at once: prompt → first model request, median",
                "ms",
                median(to_request["agent"]),
                median(to_request["baseline"]),
                detail={k: _stats(v) for k, v in to_request.items()},
                pairs=pair_ratios(to_request["agent"], to_request["baseline"]),
            ),
            Figure(
                "first_prompt.immediate.prompt_to_chunk",
                "first prompt, sent at once: prompt → first chunk, median",
                "ms",
                median(to_chunk["agent"]),
                median(to_chunk["baseline"]),
                detail={k: _stats(v) for k, v in to_chunk.items()},
                pairs=pair_ratios(to_chunk["agent"], to_chunk["baseline"]),
            ),
            Figure(
                "first_prompt.immediate.spawn_to_chunk",
                "first prompt, sent at once: spawn → first chunk, median",
                "ms",
                median(from_spawn["agent"]),
                median(from_spawn["baseline"]),
                Goal("ratio", 0.9, "≤ 0.90×"),
                detail={k: _stats(v) for k, v in from_spawn.items()},
                pairs=pair_ratios(from_spawn["agent"], from_spawn["baseline"]),
            ),
        ]
    return [
        Figure(
            "first_prompt.after_2s.prompt_to_chunk",
            f"first prompt, sent {wait_after_init:g} s after initialize: prompt → first chunk, median",
            "ms",
            median(to_chunk["agent"]),
            median(to_chunk["baseline"]),
            Goal("ratio", 1.0, "≤ 1.00× (no later)"),
            detail={k: _stats(v) for k, v in to_chunk.items()},
            pairs=pair_ratios(to_chunk["agent"], to_chunk["baseline"]),
        )
    ]


def memory(scratch: Scratch, sessions: int, budget_s: float) -> list[Figure]:
    """RSS after initialize, after the first prompt, and after `sessions` more (each one prompt)."""
    out: dict[str, dict[str, object]] = {name: {} for name, _ in IMPLS}
    with fake_api() as api:
        env = scratch.env(api.base_url)
        with (
            spawn(AGENT, scratch, env, "memory-agent") as agent,
            spawn(BASELINE, scratch, env, "memory-baseline") as baseline,
        ):
            peers = {"agent": agent, "baseline": baseline}
            for name, peer in peers.items():  # both SDK imports start now
                peer.initialize()
                out[name]["init_kb"] = peer.rss_kb()
            for name, peer in peers.items():
                if name == "baseline":
                    ensure_extras(scratch)
                _, sid = peer.new_session(scratch.workspace)
                peer.prompt(sid, HELLO)
                if name == "agent":
                    scratch.note_agent_request(api.requests[-1].body)
                out[name]["first_prompt_kb"] = peer.rss_kb()
            for name, peer in peers.items():
                deadline = time.monotonic() + budget_s
                made = 0
                while made < sessions and time.monotonic() < deadline:
                    _, sid = peer.new_session(scratch.workspace)
                    peer.prompt(sid, HELLO)
                    made += 1
                out[name]["after_sessions_kb"] = peer.rss_kb()
                out[name]["sessions"] = made
    mb = {
        name: {k: v["VmRSS"] / 1024 for k, v in d.items() if isinstance(v, dict)} for name, d in out.items()
    }
    made = min(int(d["sessions"]) for d in out.values())  # type: ignore[call-overload]
    a, b = mb["agent"], mb["baseline"]
    return [
        Figure(
            "memory.rss_after_initialize",
            "RSS right after initialize answered",
            "MB",
            a["init_kb"],
            b["init_kb"],
            detail=out,
        ),
        Figure(
            "memory.rss_after_first_prompt",
            "RSS after the first prompt",
            "MB",
            a["first_prompt_kb"],
            b["first_prompt_kb"],
            Goal("max", 90, "≤ 90 MB"),
        ),
        Figure(
            "memory.rss_after_sessions",
            f"RSS after {made:,} more sessions (one prompt each)",
            "MB",
            a["after_sessions_kb"],
            b["after_sessions_kb"],
        ),
        Figure(
            "memory.rss_growth_sessions",
            f"RSS growth over those {made:,} sessions",
            "MB",
            a["after_sessions_kb"] - a["first_prompt_kb"],
            b["after_sessions_kb"] - b["first_prompt_kb"],
            Goal("max", 30, "≤ 30 MB"),
            detail={"sessions": made, "wanted": sessions},
        ),
    ]


def _answered_cancelled(peer: Peer, rid: int, timeout: float) -> float:
    answered, message = peer.wait(rid, timeout)
    stop = (message.get("result") or {}).get("stopReason")
    if stop != "cancelled":
        raise BenchError(f"cancelled prompt answered {message!r:.300}")
    return answered


def cancel_latency(scratch: Scratch, n: int, streaming: bool) -> Figure:
    """session/cancel during a slow stream (or a non-streaming request the API has not answered)
    → the prompt answered `cancelled`. Agent only."""
    samples: list[float] = []
    with fake_api() as api:
        env = scratch.env(api.base_url, streaming=streaming)
        with spawn(AGENT, scratch, env, "cancel") as peer:
            peer.initialize()
            _, sid = peer.new_session(scratch.workspace)
            peer.prompt(sid, HELLO)  # the SDK is imported and the client built
            for _ in range(n):
                peer.reset_chunks()
                before = api.attempts
                rid, _ = peer.start_prompt(sid, stall())
                if streaming:
                    if not peer.first_chunk.wait(10):
                        raise BenchError(f"no chunk of the slow stream{peer.stderr_tail()}")
                else:
                    api.wait_for_attempts(before + 1, 10)
                sent = peer.notify("session/cancel", {"sessionId": sid})
                samples.append((_answered_cancelled(peer, rid, 10) - sent) * MS)
    mode = "streaming" if streaming else "non-streaming"
    return Figure(
        f"cancel.{mode}.median",
        f"cancel latency ({mode}): session/cancel → answered, median",
        "ms",
        median(samples),
        None,
        Goal("max", 500, "< 500 ms"),
        detail=_stats(samples),
    )


def shutdown(scratch: Scratch, n: int, with_baseline: bool = True) -> list[Figure]:
    """stdin EOF → process exit: idle after a prompt, and during a streaming turn (whose prompt
    must be answered `cancelled` first). The goal is the agent's; the baseline shows what the
    interpreter's own teardown of the SDK costs."""
    idle: dict[str, list[float]] = {"agent": [], "baseline": []}
    busy: dict[str, list[float]] = {"agent": [], "baseline": []}
    with fake_api() as api:
        env = scratch.env(api.base_url)
        runs = list(enumerate(_rounds(2 * n)))
        for i, (name, command) in runs:
            during_turn = (i // 2) % 2 == 1
            if name == "baseline" and not with_baseline:
                continue
            if name == "baseline":
                ensure_extras(scratch)
            with spawn(command, scratch, env, f"shutdown-{name}") as peer:
                peer.initialize()
                _, sid = peer.new_session(scratch.workspace)
                peer.prompt(sid, HELLO)
                if name == "agent":
                    scratch.note_agent_request(api.requests[-1].body)
                rid = None
                if during_turn:
                    peer.reset_chunks()
                    rid, _ = peer.start_prompt(sid, slow(400, 0.02))
                    if not peer.first_chunk.wait(10):
                        raise BenchError(f"no chunk of the slow stream{peer.stderr_tail()}")
                sent = peer.close_stdin()
                gone = peer.wait_exit(10)
                if gone is None:
                    raise BenchError(f"{name} did not exit within 10 s of EOF{peer.stderr_tail()}")
                if peer.proc.returncode != 0:
                    raise BenchError(
                        f"{name}: exit code {peer.proc.returncode} after EOF{peer.stderr_tail()}"
                    )
                if rid is not None:
                    _answered_cancelled(peer, rid, 1)
                (busy if during_turn else idle)[name].append((gone - sent) * MS)
    return [
        Figure(
            "shutdown.idle.median",
            "shutdown: stdin EOF → exit (idle), median",
            "ms",
            median(idle["agent"]),
            _median_or_none(idle["baseline"]),
            Goal("max", 250, "≤ 250 ms"),  # acpx sends SIGTERM 240 ms after EOF (issue 17)
            detail={k: _stats(v) for k, v in idle.items() if v},
            pairs=pair_ratios(idle["agent"], idle["baseline"]),
        ),
        Figure(
            "shutdown.during_turn.median",
            "shutdown: stdin EOF → exit (turn streaming), median",
            "ms",
            median(busy["agent"]),
            _median_or_none(busy["baseline"]),
            Goal("max", 2000, "≤ 2000 ms"),
            detail={k: _stats(v) for k, v in busy.items() if v},
            pairs=pair_ratios(busy["agent"], busy["baseline"]),
        ),
    ]
