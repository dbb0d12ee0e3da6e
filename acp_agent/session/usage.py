"""What a session spent (`/cost`, and `/status`'s cache and cost lines) and what fills its context
window (`/context`), answered without a model request.

`/cost` sums the session's turn records (each turn's `_meta["acp-agent"]["turn"]`, the same
figures the editor got with each answer): the ones of this process, and, after session/load or
resume, the ones its journal kept. It counts the turns that asked the model (a prompt's, or
`/compact`'s: each journals its record); one that asked nothing spent nothing, and is left out
whether or not its record was journaled (an empty prompt's is, a `/status`'s is not), so the
sums are the same before and after a load. A turn on a model with no known price has no cost:
the sum says how many such turns it leaves out, never a false 0.

`/context` estimates, by part, what the next request would carry: the system prompt (the memory
files and the output style counted apart), the tool definitions, the conversation's messages
and the tool results in them, at `CHARS_PER_TOKEN` characters a token and `IMAGE_TOKENS` an
image (the estimate that decides when old tool results are cleared, `turn/context/clearing.py`).
Beside it, the last request's measured size, from the API's own usage figures.

`/status` reads the runner's `SessionUsage` (`turn/session_usage.py`): what this process's requests
spent, subagents' included, with the share of prompt tokens read from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_agent.turn.context.clearing import CHARS_PER_TOKEN, estimated_tokens

if TYPE_CHECKING:
    from acp_agent.claude_code.conventions.output_styles import OutputStyle
    from acp_agent.claude_code.memory.instructions import Instructions
    from acp_agent.turn.context.history import History
    from acp_agent.turn.runner import TurnRunner
    from acp_agent.turn.session_usage import SessionUsage

__all__ = ["Spend", "context_report", "usage_status"]


@dataclass(slots=True)
class Spend:
    """The sums of a session's turn records."""

    turns: int = 0
    """Turns that asked the model (the others spent nothing)."""
    model_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_searches: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0
    """Turns that made a request on a model with no known price (their cost is unknown)."""

    def add(self, record: dict[str, Any]) -> None:
        """One turn's record (camelCase, as `TurnRecord.to_meta` writes it); one that made no
        model request is left out."""
        if not record.get("modelRequests"):
            return
        self.turns += 1
        self.model_requests += int(record.get("modelRequests", 0))
        self.input_tokens += int(record.get("inputTokens", 0))
        self.output_tokens += int(record.get("outputTokens", 0))
        self.cache_read_input_tokens += int(record.get("cacheReadInputTokens", 0))
        self.cache_creation_input_tokens += int(record.get("cacheCreationInputTokens", 0))
        self.web_searches += int(record.get("webSearches", 0))
        cost = record.get("costUsd")
        if isinstance(cost, int | float):
            self.cost_usd += cost
        else:
            self.unpriced += 1

    @classmethod
    def of(cls, records: Iterable[dict[str, Any]]) -> Spend:
        spend = cls()
        for record in records:
            spend.add(record)
        return spend

    def report(self) -> str:
        """`/cost`'s answer."""
        unpriced = (
            f" (and {self.unpriced} turn{'s' if self.unpriced != 1 else ''} on a model with no known "
            "price: pass --prices FILE)"
            if self.unpriced
            else ""
        )
        return (
            f"Session cost so far: ${self.cost_usd:.6f}{unpriced}\n"
            f"Turns that asked the model: {self.turns:,}, model requests: {self.model_requests:,}\n"
            f"Tokens: {self.input_tokens:,} input, {self.output_tokens:,} output, "
            f"{self.cache_read_input_tokens:,} read from the cache, "
            f"{self.cache_creation_input_tokens:,} written to it\n"
            f"Web searches: {self.web_searches:,}\n"
            "(The sum of this session's turn records, those its journal kept included; "
            "no model request.)"
        )


def usage_status(usage: SessionUsage) -> str:
    """`/status`'s prompt cache and cost lines, from the runner's figures."""
    prompt, read = usage.prompt_tokens, usage.cache_read
    cache = f"{read / prompt:.0%} of {prompt:,} prompt tokens read from cache" if prompt else "no request yet"
    cost = "unknown (no price for this model)" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    return f"Prompt cache: {cache}\nCost so far: {cost}"


def context_report(
    runner: TurnRunner, history: History, instructions: Instructions | None, style: OutputStyle
) -> str:
    """`/context`'s answer for a session's `runner`, `history`, memory and output style: the next
    request's parts, estimated, and the last request measured."""
    system = runner.settings.system or ""
    memory = instructions.prompt_section() if instructions is not None else ""
    style_text = style.prompt_section()
    tools = [*runner.tools.api_tools(), *runner.settings.web.definitions(max_uses=None)]
    messages, results = _conversation(history.for_request())
    parts = [
        ("System prompt (the agent's own)", _chars(system) - _chars(memory) - _chars(style_text)),
        ("Memory files (CLAUDE.md, AGENTS.md, rules)", _chars(memory)),
        (f"Output style ({style.name})", _chars(style_text)),
        (f"Tool definitions ({len(tools)} tools)", _chars(json.dumps(tools))),
        (f"Messages ({len(history)})", messages),
        ("Tool results", results),
    ]
    total = sum(tokens for _, tokens in parts)
    window = runner.settings.context_window
    width = max(len(name) for name, _ in parts)
    lines = [f"Context window of {runner.settings.model}: {window:,} tokens"]
    lines += [f"  {name:<{width}}  {tokens:>9,}  {tokens / window:6.1%}" for name, tokens in parts]
    lines.append(f"  {'Total (estimated)':<{width}}  {total:>9,}  {total / window:6.1%}")
    lines.append(f"  {'Free':<{width}}  {max(window - total, 0):>9,}")
    measured = runner.last_context_tokens
    lines.append(
        f"The last request measured {measured:,} tokens (the API's usage figures)."
        if measured
        else "No request measured yet in this process."
    )
    lines.append(
        f"(Estimated at {CHARS_PER_TOKEN} characters a token, an image as 1,600, over what the next "
        "request would carry; no model request.)"
    )
    return "\n".join(lines)


def _chars(text: str) -> int:
    return estimated_tokens(text)


def _conversation(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(the messages' own tokens, their tool results' tokens), estimated."""
    own = results = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            own += estimated_tokens(content)
            continue
        for block in content or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                results += estimated_tokens(block.get("content", ""))
            elif block.get("type") == "tool_use":
                own += estimated_tokens(json.dumps(block.get("input", {})))
            elif block.get("type") in ("image", "document"):
                own += estimated_tokens([block])
            else:
                own += estimated_tokens(str(block.get("text") or block.get("thinking") or ""))
    return own, results
