"""`python bench/cost.py [--json out.json] [--compare before.json] [--sweep]`: what a turn and a long
session cost with the prompt cache.

The agent runs on `claude-sonnet-5-5` against the loopback fake, which bills the cache markers it
receives as the API does (`acp_agent/testing/prompt_cache.py`). Scenarios, on both model paths:
- a 20-request tool loop whose tool results are about 2 KB each, then a follow-up prompt;
- `/compact` after three prompts, and the prompt after it;
- a verify turn with a model judge, and a phased turn (plan → act).
And, on the streaming path only (the requests are the same on both):
- a long session: 200 model requests (10 prompts of 19 `read_file` calls and an answer), every
  tool result 10 KB, no compaction (the history stays far below 80% of the 1M window); old tool
  results are cleared at the agent's defaults (`acp_agent/turn/context/clearing.py`); again with a thinking
  block in every reply (a clearing then waits for a turn's end). `--sweep` runs it at several
  triggers and keeps, clearing off included (~2 min).
Cost ratios are the billed input cost over what the same prompts would cost uncached, at the
generic rates (read 0.1x, write 1.25x) and at Sonnet 5.5's own (read 0.05x, write 1.25x). Token
figures are the fake's: "sent" is every input token of every request (uncached + read + written),
"billed" prices reads at 0.1x and writes at 1.25x.

`--json` keeps the figures; `--compare` prints them against a file kept earlier
(`bench/results/cost-before.json` holds the long session before old tool results were cleared).
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.testing import FakeMessagesAPI, replies
from bench.common import AGENT, Scratch, spawn

MODEL = "claude-sonnet-5-5"
LOOP = 20
RESULT_BYTES = 2_000
GENERIC = (0.10, 1.25)
SONNET = (0.05, 1.25)
LONG_PROMPTS = 10
"""The long session: this many prompts of `LOOP` requests each (200 requests)."""
LONG_RESULT_BYTES = 10_000
CLEARED = "[cleared to save context"
"""How a cleared tool result's note starts (`acp_agent/turn/context/clearing.py`)."""


def prompt_tokens(usage: dict[str, Any]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def billed(usages: list[dict[str, Any]], rates: tuple[float, float]) -> float:
    """Billed input over uncached input: (input + read·r + write·w) / prompt."""
    read, write = rates
    paid = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] * read + u["cache_creation_input_tokens"] * write
        for u in usages
    )
    return paid / sum(prompt_tokens(u) for u in usages)


def billed_tokens(usages: list[dict[str, Any]], rates: tuple[float, float] = GENERIC) -> float:
    """Input tokens as billed: uncached + read·r + written·w, summed over the requests."""
    read, write = rates
    return sum(
        u["input_tokens"] + u["cache_read_input_tokens"] * read + u["cache_creation_input_tokens"] * write
        for u in usages
    )


def read_share(usage: dict[str, Any]) -> float:
    return usage["cache_read_input_tokens"] / prompt_tokens(usage)


def _workspace(root: Path, files: int = LOOP, size: int = RESULT_BYTES) -> None:
    data = root / "data"
    data.mkdir(exist_ok=True)
    for i in range(files):
        line = f"record {i}: " + "lorem ipsum dolor sit amet " * 3 + "\n"
        (data / f"part{i:03d}.txt" if files > 100 else data / f"part{i:02d}.txt").write_text(
            line * (size // len(line) + 1)
        )


def _usages(api: FakeMessagesAPI, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
    usages = [s.usage for s in api.served[start:stop]]
    assert all(u is not None for u in usages), "the fake did not bill the cache"
    return [u for u in usages if u is not None]


def tool_loop(streaming: bool) -> dict[str, Any]:
    """20 requests with ~2 KB results, a follow-up, two more prompts, /compact and one after."""
    with Scratch() as scratch, FakeMessagesAPI() as api:
        _workspace(scratch.workspace)
        api.script(
            *(
                replies.tool_use("read_file", {"path": f"data/part{i:02d}.txt"}, usage=(0, 60))
                for i in range(LOOP - 1)
            ),
            replies.text("All parts read.", usage=(0, 40)),
            replies.text("Follow-up answer.", usage=(0, 40)),
            replies.text("Third answer.", usage=(0, 40)),
            replies.text("Fourth answer.", usage=(0, 40)),
            replies.text("SUMMARY: read 20 parts, answered three questions.", usage=(0, 80)),
            replies.text("After the compaction.", usage=(0, 40)),
        )
        env = scratch.env(api.base_url, streaming=streaming, ACP_AGENT_MODEL=MODEL)
        with spawn(AGENT, scratch, env, "cost") as agent:
            agent.initialize()
            _, session = agent.new_session(scratch.workspace)
            _, _, record = agent.prompt(session, "Read every file under data/, one by one.")
            for text in ("And then?", "Anything else?", "One more thing?"):
                agent.prompt(session, text)
            agent.prompt(session, "/compact")
            agent.prompt(session, "Where were we?")
        loop = _usages(api, 0, LOOP)
        follow, compact, after = (_usages(api)[i] for i in (LOOP, LOOP + 3, LOOP + 4))
        fixed = (
            sum(len(json.dumps(r.body.get(k, ""))) for r in api.requests[:1] for k in ("tools", "system"))
            // 4
        )
        turn = record["_meta"]["acp-agent"]["turn"]
        return {
            "loop_requests": len(loop),
            "loop_tokens_sent": sum(prompt_tokens(u) for u in loop),
            "loop_billed_tokens": billed_tokens(loop),
            "loop_billed_generic": billed(loop, GENERIC),
            "loop_billed_sonnet": billed(loop, SONNET),
            "loop_cost_usd": turn["costUsd"],
            "next_prompt_read_share": read_share(follow),
            "compact_read_share": read_share(compact),
            "after_compact_read_tokens": after["cache_read_input_tokens"],
            "tools_and_system_tokens_estimate": fixed,
            "max_breakpoints": max(r.breakpoints() for r in api.requests),
        }


def _long_script(thoughts: bool) -> list[replies.Message]:
    """10 prompts of 19 reads and an answer; with `thoughts`, each reply starts with a thinking
    block, as Sonnet 5.5's notes between tool calls do."""
    calls, script = LOOP - 1, []
    for p in range(LONG_PROMPTS):
        for i in range(calls):
            call = replies.tool_use_block("read_file", {"path": f"data/part{p * calls + i:03d}.txt"})
            thought = (
                [replies.thinking_block(f"Reading part {p * calls + i}.", "unsigned")] if thoughts else []
            )
            script.append(replies.message([*thought, call], stop_reason="tool_use", usage=(0, 60)))
        thought = [replies.thinking_block("All read.", "unsigned")] if thoughts else []
        script.append(replies.message([*thought, replies.text_block(f"Batch {p} read.")], usage=(0, 40)))
    return script


def long_session(streaming: bool = True, *, thoughts: bool = False, **settings: str) -> dict[str, Any]:
    """200 requests in one session, every tool result 10 KB: what each request resends.

    `thoughts`: every reply has a thinking block (a clearing then waits for a turn's end);
    `settings`: extra environment for the agent (the clearing's trigger and keep, for `--sweep`)."""
    calls = LOOP - 1
    with Scratch() as scratch, FakeMessagesAPI() as api:
        _workspace(scratch.workspace, files=LONG_PROMPTS * calls, size=LONG_RESULT_BYTES)
        api.script(*_long_script(thoughts))
        env = scratch.env(api.base_url, streaming=streaming, ACP_AGENT_MODEL=MODEL, **settings)
        with spawn(AGENT, scratch, env, "cost-long") as agent:
            agent.initialize()
            _, session = agent.new_session(scratch.workspace)
            for p in range(LONG_PROMPTS):
                first, last = p * calls, (p + 1) * calls - 1
                ask = f"Read data/part{first:03d}.txt to data/part{last:03d}.txt, one by one."
                agent.prompt(session, ask, timeout=300)
        usages = _usages(api)
        sent = [prompt_tokens(u) for u in usages]
        notes = [json.dumps(r.body["messages"]).count(CLEARED) for r in api.requests]
        return {
            "long_requests": len(usages),
            "long_tokens_sent": sum(sent),
            "long_billed_tokens": billed_tokens(usages),
            "long_billed_tokens_sonnet": billed_tokens(usages, SONNET),
            "long_billed_generic": billed(usages, GENERIC),
            "long_billed_sonnet": billed(usages, SONNET),
            "long_last_request_tokens": sent[-1],
            "long_largest_request_tokens": max(sent),
            "long_max_breakpoints": max(r.breakpoints() for r in api.requests),
            "long_clearings": sum(b > a for a, b in pairwise(notes)),
            "long_results_cleared": notes[-1],
        }


SWEEP = (
    (0, 0, False),
    (50_000, 10_000, False),
    (100_000, 10_000, False),
    (100_000, 20_000, False),
    (100_000, 50_000, False),
    (200_000, 40_000, False),
    (0, 0, True),
    (100_000, 20_000, True),
)
"""(trigger, keep, a thinking block in every reply) `--sweep` runs the long session with; a
trigger of 0 is clearing off."""


def sweep() -> list[dict[str, Any]]:
    """The long session at each setting of `SWEEP`: what the defaults were chosen from."""
    rows = []
    for at, keep, thoughts in SWEEP:
        figures = long_session(
            True,
            thoughts=thoughts,
            ACP_AGENT_CLEAR_RESULTS_AT=str(at),
            ACP_AGENT_CLEAR_RESULTS_KEEP=str(keep),
        )
        rows.append({"clear_results_at": at, "clear_results_keep": keep, "thoughts": thoughts, **figures})
    return rows


def sweep_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| replies | trigger | keep | clearings | billed (read 0.1x) | vs off | billed (Sonnet 5.5) "
        "| vs off | largest request |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        off = next(o for o in rows if o["clear_results_at"] == 0 and o["thoughts"] == r["thoughts"])
        generic, sonnet = r["long_billed_tokens"], r["long_billed_tokens_sonnet"]
        replied = "thinking + tool_use" if r["thoughts"] else "tool_use"
        lines.append(
            f"| {replied} | {r['clear_results_at']:,} | {r['clear_results_keep']:,} | {r['long_clearings']} "
            f"| {generic:,.0f} | {generic / off['long_billed_tokens']:.2f}x | {sonnet:,.0f} "
            f"| {sonnet / off['long_billed_tokens_sonnet']:.2f}x | {r['long_largest_request_tokens']:,} |"
        )
    return "\n".join(lines)


def strategies(streaming: bool) -> dict[str, Any]:
    """A verify turn whose judge is a model, and a phased turn: what their extra requests read."""
    out: dict[str, Any] = {}
    verdict = json.dumps({"score": 0.9, "passed": True, "feedback": "fine"})
    with Scratch() as scratch, FakeMessagesAPI() as api:
        _workspace(scratch.workspace)
        api.script(
            replies.tool_use("read_file", {"path": "data/part00.txt"}, usage=(0, 60)),
            replies.text("Part 0 is lorem ipsum.", usage=(0, 40)),
            replies.text(verdict, usage=(0, 40)),
        )
        env = scratch.env(
            api.base_url,
            streaming=streaming,
            ACP_AGENT_MODEL=MODEL,
            ACP_AGENT_LOOP="verify",
            ACP_AGENT_VERIFY_RUBRIC="The answer says what part 0 holds.",
        )
        with spawn(AGENT, scratch, env, "cost-verify") as agent:
            agent.initialize()
            _, session = agent.new_session(scratch.workspace)
            agent.prompt(session, "What is in data/part00.txt?")
        judge = _usages(api)[2]
        out["judge_read_share"] = read_share(judge)
        out["judge_billed_sonnet"] = billed([judge], SONNET)
    with Scratch() as scratch, FakeMessagesAPI() as api:
        _workspace(scratch.workspace)
        api.script(
            replies.tool_use("read_file", {"path": "data/part00.txt"}, usage=(0, 60)),
            replies.tool_use(
                "update_plan",
                {"entries": [{"content": "Summarise part 0", "status": "pending"}]},
                usage=(0, 60),
            ),
            replies.text("Plan ready.", usage=(0, 40)),
            replies.text("Done: part 0 summarised.", usage=(0, 40)),
        )
        env = scratch.env(
            api.base_url,
            streaming=streaming,
            ACP_AGENT_MODEL=MODEL,
            ACP_AGENT_LOOP="phased",
            ACP_AGENT_VERIFY_CMD="true",
        )
        with spawn(AGENT, scratch, env, "cost-phased") as agent:
            agent.initialize()
            _, session = agent.new_session(scratch.workspace)
            try:
                agent.prompt(session, "Summarise data/part00.txt.", timeout=60)
            except Exception as exc:  # the plan approval needs an answering client
                out["phased_error"] = str(exc)[:200]
        usages = _usages(api)
        out["phased_requests"] = len(usages)
        out["phased_read_shares"] = [round(read_share(u), 3) for u in usages]
        out["phased_billed_sonnet"] = billed(usages, SONNET) if usages else None
    return out


COMPARED = (
    ("long session: input tokens sent", "long_tokens_sent", None),
    ("long session: billed input tokens (read 0.1x, write 1.25x)", "long_billed_tokens", 0.5),
    (
        "long session: billed input tokens at Sonnet 5.5's rates (read 0.05x)",
        "long_billed_tokens_sonnet",
        None,
    ),
    ("long session: last request's input tokens", "long_last_request_tokens", None),
    ("20-request loop: input tokens sent", "loop_tokens_sent", None),
    ("20-request loop: billed input tokens", "loop_billed_tokens", None),
)
"""Figures `--compare` sets against the earlier run, with the issue's goal on the ratio where it has one."""


def _figure(results: dict[str, Any], key: str) -> Any:
    """A streaming figure; the Sonnet-rate billed tokens of a file kept before they were written
    out come from its ratio and the tokens sent."""
    figures = results.get("streaming", {})
    if key == "long_billed_tokens_sonnet" and key not in figures and "long_billed_sonnet" in figures:
        return figures["long_billed_sonnet"] * figures["long_tokens_sent"]
    return figures.get(key)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A before/after table of the streaming figures; ratio = after / before."""
    lines = ["| figure | before | after | after/before | goal |", "|---|---|---|---|---|"]
    for label, key, limit in COMPARED:
        old, new = _figure(before, key), _figure(after, key)
        ratio = f"{new / old:.2f}x" if isinstance(old, int | float) and old and new is not None else "—"
        goal = f"≤ {limit:.2f}x" if limit is not None else ""
        shown = [f"{v:,.0f}" if isinstance(v, int | float) else "—" for v in (old, new)]
        lines.append(f"| {label} | {shown[0]} | {shown[1]} | {ratio} | {goal} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--compare", type=Path, help="print the figures against this earlier --json file")
    parser.add_argument("--long-only", action="store_true", help="only the long session (and the loop)")
    parser.add_argument(
        "--sweep", action="store_true", help="only the long session, at several clearing settings (~1 min)"
    )
    args = parser.parse_args(argv)
    if args.sweep:
        rows = sweep()
        print(json.dumps(rows, indent=2))
        print("\n" + sweep_table(rows))
        return 0
    results: dict[str, dict[str, Any]] = {}
    for streaming in (True, False):
        mode = "streaming" if streaming else "non-streaming"
        if args.long_only and not streaming:
            continue
        results[mode] = tool_loop(streaming)
        if not args.long_only:
            results[mode].update(strategies(streaming))
        if streaming:
            results[mode].update(long_session(streaming))
            thinking = long_session(streaming, thoughts=True)
            results[mode].update({f"long_thinking_{k.removeprefix('long_')}": v for k, v in thinking.items()})
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    modes = list(results)
    rows = [
        ("20-request tool loop billed / uncached (read 0.1x)", "loop_billed_generic", "≤ 0.25x"),
        ("20-request tool loop billed / uncached (Sonnet 5.5 rates)", "loop_billed_sonnet", ""),
        ("20-request tool loop: input tokens sent", "loop_tokens_sent", ""),
        ("20-request tool loop: billed input tokens (read 0.1x)", "loop_billed_tokens", ""),
        ("next prompt: first request read from cache", "next_prompt_read_share", "≥ 90%"),
        ("/compact request read from cache", "compact_read_share", "≥ 80%"),
        ("verify judge request read from cache", "judge_read_share", ""),
        ("long session (200 requests, 10 KB results): input tokens sent", "long_tokens_sent", ""),
        ("long session: billed input tokens (read 0.1x)", "long_billed_tokens", ""),
        ("long session billed / uncached (read 0.1x)", "long_billed_generic", ""),
        ("long session: most breakpoints on one request", "long_max_breakpoints", "≤ 4"),
        ("long session: clearings (old tool results left out)", "long_clearings", ""),
        ("the same, a thinking block in every reply: billed input tokens", "long_thinking_billed_tokens", ""),
        ("the same, a thinking block in every reply: clearings", "long_thinking_clearings", ""),
    ]
    print(f"\n| figure | {' | '.join(modes)} | goal |\n|---|{'---|' * len(modes)}---|")
    for label, key, goal in rows:
        cells = [results[m].get(key) for m in modes]
        shown = [
            "—"
            if c is None
            else f"{c:.2f}x"
            if "billed_" in key and "tokens" not in key
            else f"{c:.1%}"
            if "share" in key
            else f"{c:,.0f}"
            for c in cells
        ]
        print(f"| {label} | {' | '.join(shown)} | {goal} |")
    for mode in modes:
        r = results[mode]
        if "after_compact_read_tokens" in r:
            print(
                f"{mode}: after /compact the prompt read {r['after_compact_read_tokens']:,} tokens "
                f"(tools + system ≈ {r['tools_and_system_tokens_estimate']:,}); max breakpoints "
                f"{r['max_breakpoints']}; phased read shares {r.get('phased_read_shares')}"
            )
    if args.compare:
        print("\n" + compare(json.loads(args.compare.read_text()), results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
