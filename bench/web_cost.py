"""`python bench/web_cost.py [--json out.json]`: what the web search budget costs in prompt cache.

`maxWebSearches` is enforced through the search tool's `max_uses`, which sits in `tools`, the head
of the cached prefix: every change rewrites the whole prefix (and, on the 5.5 models, takes the
history's thinking blocks with it). This runs one session of the real loop (`TurnRunner`, the
driver, the history, `AnthropicModel`) on `claude-sonnet-5-5` against the loopback fake, which bills
the cache markers as the API does and refuses a thinking block replayed behind changed tools, with
three ways of setting `max_uses`:
- ladder (shipped): the largest power of two within what is left of the turn's budget;
- left: exactly what is left (the budget until a search is used, then less at each one);
- fixed: always the budget (the cache's floor; NOT exact: a turn may search budget x requests).
Each turn's first reply searches (the pattern `SEARCHES`), then the model reads files with client
tools for a few requests and answers. Every figure is the fake's (deterministic token estimates).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acp_agent.turn.meter as meter_module
from acp_agent import logs
from acp_agent.limits import Limits
from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.profiles import builtin_profile, thinking_param
from acp_agent.model.server_tools import WebTools, search_allowance
from acp_agent.testing import FakeMessagesAPI, replies, web_replies
from acp_agent.tools.base import ToolContext
from acp_agent.tools.registry import default_registry
from acp_agent.turn.context.history import History
from acp_agent.turn.driver import drive_turn
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import RunnerSettings, TurnRunner
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.strategies.tools import ToolsStrategy

MODEL = "claude-sonnet-5-5"
BUDGET = 10
SEARCHES = (2, 0, 3, 1, 0, 5, 1, 2)
"""Searches in each turn's first reply: most turns search a little, some not at all."""
READS = 4
"""Client tool requests after the searches, each reading a ~2 KB file."""
SYSTEM = "You are a careful coding agent. " * 120
PRICE = {"input": 2.0, "read": 0.10, "write": 2.50}  # Sonnet 5.5, USD per million tokens

POLICIES: dict[str, Callable[[int | None, int], int | None]] = {
    "ladder": search_allowance,
    "left": lambda budget, used: None if budget is None else max(0, budget - used),
    "fixed": lambda budget, used: budget,
}


def _script(api: FakeMessagesAPI, searches: int) -> None:
    """One turn: a reply that searches `searches` times (within the request's max_uses) and reads
    a file, READS - 1 more reads, an answer; each reply with a thinking block (5.x notes)."""

    def first(body: dict[str, Any], n: int) -> replies.Message:
        cap = next((t.get("max_uses") for t in body.get("tools", []) if t.get("name") == "web_search"), 0)
        done = searches if cap is None else min(searches, cap)
        calls = [
            web_replies.web_search(f"query {n}.{i}", [("Docs", f"https://docs.example/{n}/{i}")])
            for i in range(done)
        ]
        blocks = [replies.thinking_block("Searching first.", "unsigned"), *(b for c in calls for b in c)]
        blocks.append(replies.tool_use_block("read_file", {"path": "data/part00.txt"}))
        return replies.message(blocks, stop_reason="tool_use", usage=(0, 60))

    api.script(first)
    for i in range(1, READS):
        api.script(
            replies.message(
                [
                    replies.thinking_block("Next file.", "unsigned"),
                    replies.tool_use_block("read_file", {"path": f"data/part{i:02d}.txt"}),
                ],
                stop_reason="tool_use",
                usage=(0, 40),
            )
        )
    api.script(
        replies.message(
            [replies.thinking_block("Done.", "unsigned"), replies.text_block("Answer.")], usage=(0, 40)
        )
    )


async def _session(policy: str, streaming: bool) -> dict[str, Any]:
    meter_module.search_allowance = POLICIES[policy]  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp, FakeMessagesAPI() as api:
        root = Path(tmp)
        (root / "data").mkdir()
        for i in range(READS):
            (root / "data" / f"part{i:02d}.txt").write_text(f"record {i}: lorem ipsum dolor sit amet\n" * 50)
        profile = builtin_profile(MODEL)
        settings = RunnerSettings(
            model=MODEL,
            max_tokens=4000,
            system=SYSTEM,
            thinking=thinking_param(profile, budget=None),
            context_window=profile.context_window,
            profile=profile,
            web=WebTools(search=profile.web_search, fetch=profile.web_fetch),
        )
        model = AnthropicModel(streaming=streaming, api_key="k", base_url=api.base_url, max_retries=0)
        runner = TurnRunner(TurnSpec(model, default_registry(), _Discard(), ToolContext(cwd=root), settings))
        history = History()
        searched = changes = 0
        previous: Any = None
        for searches in SEARCHES:
            _script(api, searches)
            result = await drive_turn(
                strategy=ToolsStrategy(),
                runner=runner,
                history=history,
                meter=TurnMeter(Limits(max_web_searches=BUDGET)),
                prompt=[{"type": "text", "text": "Look it up, then read the files."}],
                sink=runner.sink,
                scope=anyio.CancelScope(),
                turn_id=f"t_{uuid.uuid4().hex[:8]}",
                streaming=streaming,
            )
            assert result.failure is None, result.failure
            searched += result.record.web_searches
        for recorded in api.requests:
            tools = recorded.body.get("tools")
            changes += previous is not None and _strip(tools) != _strip(previous)
            previous = tools
        await model.aclose()
        usages = [s.usage for s in api.served if s.usage is not None]
        read = sum(u["cache_read_input_tokens"] for u in usages)
        write = sum(u["cache_creation_input_tokens"] for u in usages)
        plain = sum(u["input_tokens"] for u in usages)
        usd = (plain * PRICE["input"] + read * PRICE["read"] + write * PRICE["write"]) / 1_000_000
        return {
            "policy": policy,
            "requests": len(usages),
            "searches": searched,
            "tools_changes": changes,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
            "input_usd": round(usd, 4),
            "search_usd": searched / 100,
        }


def _strip(tools: Any) -> Any:
    return [{k: v for k, v in t.items() if k != "cache_control"} for t in tools or []]


class _Discard:
    async def emit(self, event: object) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    logs.configure("warning")
    rows = [anyio.run(_session, policy, True) for policy in POLICIES]
    print(
        f"{len(SEARCHES)} turns, searches per turn {list(SEARCHES)}, budget {BUDGET}, {READS} reads per turn"
    )
    heads = ("requests", "searches", "tools changes", "cache read", "cache write", "input $")
    print(f"{'policy':8} " + " ".join(f"{h:>{max(8, len(h))}}" for h in heads))
    for r in rows:
        print(
            f"{r['policy']:8} {r['requests']:>8} {r['searches']:>8} {r['tools_changes']:>13} "
            f"{r['cache_read_tokens']:>10,} {r['cache_write_tokens']:>11,} {r['input_usd']:>8.4f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
