"""`python bench/cost.py [--json out.json]`: what a turn costs with the prompt cache, on both paths.

The agent runs on `claude-sonnet-5-5` against the loopback fake, which bills the cache markers it
receives as the API does (`acp_agent/testing/prompt_cache.py`). Scenarios:
- a 20-request tool loop whose tool results are about 2 KB each, then a follow-up prompt;
- `/compact` after three prompts, and the prompt after it;
- a verify turn with a model judge, and a phased turn (plan → act).
Cost ratios are the billed input cost over what the same prompts would cost uncached, at the
generic rates (read 0.1x, write 1.25x) and at Sonnet 5.5's own (read 0.05x, write 1.25x).
"""

from __future__ import annotations

import argparse
import json
import sys
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


def read_share(usage: dict[str, Any]) -> float:
    return usage["cache_read_input_tokens"] / prompt_tokens(usage)


def _workspace(root: Path) -> None:
    data = root / "data"
    data.mkdir(exist_ok=True)
    for i in range(LOOP):
        line = f"record {i}: " + "lorem ipsum dolor sit amet " * 3 + "\n"
        (data / f"part{i:02d}.txt").write_text(line * (RESULT_BYTES // len(line) + 1))


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
            "loop_billed_generic": billed(loop, GENERIC),
            "loop_billed_sonnet": billed(loop, SONNET),
            "loop_cost_usd": turn["costUsd"],
            "next_prompt_read_share": read_share(follow),
            "compact_read_share": read_share(compact),
            "after_compact_read_tokens": after["cache_read_input_tokens"],
            "tools_and_system_tokens_estimate": fixed,
            "max_breakpoints": max(r.breakpoints() for r in api.requests),
        }


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    results = {}
    for streaming in (True, False):
        mode = "streaming" if streaming else "non-streaming"
        results[mode] = {**tool_loop(streaming), **strategies(streaming)}
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    rows = [
        ("20-request tool loop billed / uncached (read 0.1x)", "loop_billed_generic", "≤ 0.25x"),
        ("20-request tool loop billed / uncached (Sonnet 5.5 rates)", "loop_billed_sonnet", ""),
        ("next prompt: first request read from cache", "next_prompt_read_share", "≥ 90%"),
        ("/compact request read from cache", "compact_read_share", "≥ 80%"),
        ("verify judge request read from cache", "judge_read_share", ""),
    ]
    print("\n| figure | streaming | non-streaming | goal |\n|---|---|---|---|")
    for label, key, goal in rows:
        cells = [results[m][key] for m in ("streaming", "non-streaming")]
        shown = [f"{c:.2f}x" if "billed" in key else f"{c:.1%}" for c in cells]
        print(f"| {label} | {shown[0]} | {shown[1]} | {goal} |")
    for mode in ("streaming", "non-streaming"):
        r = results[mode]
        print(
            f"{mode}: after /compact the prompt read {r['after_compact_read_tokens']:,} tokens "
            f"(tools + system ≈ {r['tools_and_system_tokens_estimate']:,}); max breakpoints "
            f"{r['max_breakpoints']}; phased read shares {r['phased_read_shares']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
