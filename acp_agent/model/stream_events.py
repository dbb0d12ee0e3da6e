"""Raw Messages API stream events → ModelEvents, and the reply's content blocks as history input.

Kept apart from the retry loop in `anthropic.py`: this is the per-delta hot path (benchmarked), and
it needs nothing from the SDK but the event objects it is given.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import structlog

from acp_agent.errors import AgentError
from acp_agent.model.base import (
    ModelEvent,
    ServerToolBlock,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
    Usage,
)

__all__ = [
    "EMPTY_TEXT",
    "MAX_EXACT_COUNT",
    "MAX_SERVER_TOOL_USES",
    "NO_USAGE",
    "Attempt",
    "MalformedReply",
    "cache_miss_of",
    "input_block",
    "is_server_block",
    "message_events",
    "relay_events",
    "searches_past_allowance",
    "tool_input",
    "usage_of",
    "web_search_bound",
]

log = structlog.get_logger(__name__)

NO_USAGE = Usage()
EMPTY_TEXT = {"type": "text", "text": ""}
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
SERVER_USAGE_FIELDS = ("web_search_requests", "web_fetch_requests")
"""`usage.server_tool_use`: what the server tools ran (cumulative, like the token counts)."""
MAX_EXACT_COUNT = 2**53 - 1
"""The largest whole number JSON carries exactly (any reader that takes numbers as doubles rounds
past it): a usage figure beyond it is not a count the reply can be held to."""
MAX_SERVER_TOOL_USES = 10_000
"""The search tool's `max_uses` a reply is compared with when the request set none."""


class MalformedReply(AgentError, ValueError):
    """A reply the API could not have sent: a usage figure that is not a whole number >= 0."""


class Attempt:
    """What one attempt produced so far: blocks by index, usage, stop reason, relayed or not."""

    __slots__ = (
        "_blocks",
        "_done",
        "_parts",
        "cache_miss",
        "max_searches",
        "message_id",
        "relayed",
        "stop_reason",
        "stopped",
        "usage",
    )

    def __init__(self, max_searches: int = MAX_SERVER_TOOL_USES) -> None:
        self.max_searches = max_searches
        """The request's `max_uses` (`web_search_bound`): a reply that reports more searches is
        kept and counted as reported (the API bills what it ran), and the log says so."""
        self.relayed = self.stopped = False
        self.stop_reason: str | None = None
        self.message_id: str | None = None
        self.cache_miss: dict[str, Any] | None = None
        self.usage = Usage()
        self._blocks: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, list[str]] = {}
        self._done: set[int] = set()

    def finish(self, index: int) -> None:
        """A block is complete: join its pieces (tool input JSON is parsed)."""
        block = self._blocks.get(index)
        parts = self._parts.pop(index, None)
        if block is None:
            return
        if parts is not None:
            joined = "".join(parts)
            kind = block["type"]
            if kind == "text":
                block["text"] = joined
            elif kind == "thinking":
                block["thinking"] = joined
            else:
                block["input"] = tool_input(joined)
        self._done.add(index)

    def content(self, *, partial: bool = False) -> list[dict[str, Any]]:
        """The complete blocks in order, as valid input for the next request.

        With `partial`, a text block still in progress is kept too; an unfinished tool_use or
        thinking block never is (its input or signature is missing).
        """
        out = []
        for i, block in sorted(self._blocks.items()):
            if i not in self._done:
                if not (partial and block["type"] == "text"):
                    continue
                block = {"type": "text", "text": "".join(self._parts.get(i, ()))}
            if block != EMPTY_TEXT:
                out.append(block)
        return out


async def relay_events(stream: Any, a: Attempt) -> AsyncIterator[ModelEvent]:
    """Map the SDK's raw stream events to ModelEvents, accumulating blocks in `a`. Hot path."""
    blocks, parts = a._blocks, a._parts
    async for event in stream:
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            dkind = delta.type
            if dkind == "text_delta":
                parts[event.index].append(delta.text)
                a.relayed = True
                yield TextDelta(event.index, delta.text)
            elif dkind == "input_json_delta":
                parts[event.index].append(delta.partial_json)
            elif dkind == "thinking_delta":
                parts[event.index].append(delta.thinking)
                a.relayed = True
                yield ThinkingDelta(event.index, delta.thinking)
            elif dkind == "signature_delta":
                blocks[event.index]["signature"] += delta.signature
        elif kind == "content_block_start":
            index, block = event.index, event.content_block
            blocks[index] = item = input_block(block)
            if block.type in ("text", "thinking"):
                first = item.get(block.type, "")
                parts[index] = [first] if first else []
                if first:
                    a.relayed = True
                    yield (TextDelta if block.type == "text" else ThinkingDelta)(index, first)
            elif "input" in item:
                parts[index] = []
                if block.type == "tool_use":
                    a.relayed = True
                    yield ToolUseStarted(index, block.id, block.name)
        elif kind == "content_block_stop":
            index = event.index
            a.finish(index)
            block = blocks.get(index)
            if block is not None and is_server_block(block["type"]):
                a.relayed = True
                yield ServerToolBlock(index, block)
        elif kind == "message_delta":
            a.stop_reason = event.delta.stop_reason
            a.usage = usage_of(event.usage, a.usage)
            yield a.usage
        elif kind == "message_start":
            a.message_id = event.message.id
            a.cache_miss = cache_miss_of(event.message)
            a.usage = usage_of(event.message.usage)
            yield a.usage
        elif kind == "message_stop":
            a.stopped = True


def message_events(message: Any) -> tuple[list[ModelEvent], list[dict[str, Any]]]:
    """What a finished (non-streaming) message would have streamed, and its content blocks.

    The events the streaming path yields for the same reply, in block order (C8): its text and
    thinking whole, each tool call's start, each server tool block once complete.
    """
    events: list[ModelEvent] = []
    content: list[dict[str, Any]] = []
    block: Any
    for index, block in enumerate(message.content):
        kind = block.type
        item = input_block(block)
        if kind == "text" and block.text:
            events.append(TextDelta(index, block.text))
        elif kind == "thinking":
            events.append(ThinkingDelta(index, block.thinking))
        elif kind == "tool_use":
            events.append(ToolUseStarted(index, block.id, block.name))
        elif is_server_block(kind):
            events.append(ServerToolBlock(index, item))
        if item != EMPTY_TEXT:
            content.append(item)
    return events, content


def is_server_block(kind: str) -> bool:
    """A block of a tool the API runs: its `server_tool_use`, or a result such as
    `web_search_tool_result` (a reply never holds the client's own `tool_result`)."""
    return kind == "server_tool_use" or kind.endswith("_tool_result")


def input_block(block: Any) -> dict[str, Any]:
    """An SDK content block as an API *input* block (no None fields, no citations)."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature or ""}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    dumped.pop("citations", None)
    return dumped


def tool_input(text: str) -> Any:
    """Tool input JSON; one cut off (max_tokens) keeps its complete values, as the SDK does."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        import jiter  # a dependency of the SDK

        try:
            value = jiter.from_json(text.encode(), partial_mode=True)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def usage_of(raw: Any, prev: Usage = NO_USAGE) -> Usage:
    """Usage from the API; counts that a message_delta leaves out keep their earlier values.

    A count is taken as the API reports it, however large: it is what the request is billed
    (more web searches than the request's `max_uses` included; the meter then shows the turn's
    search budget spent). Only a figure that is no count makes the reply malformed.

    Raises:
        MalformedReply: a count that is not a whole number from 0 (to `MAX_EXACT_COUNT`).
    """
    counts = {name: _count(raw, name, getattr(prev, name)) for name in USAGE_FIELDS}
    server = getattr(raw, "server_tool_use", None)
    for name in SERVER_USAGE_FIELDS:
        counts[name] = _count(server, name, getattr(prev, name), "server_tool_use.")
    split = getattr(raw, "cache_creation", None)
    counts["cache_creation_1h_input_tokens"] = _count(
        split, "ephemeral_1h_input_tokens", prev.cache_creation_1h_input_tokens
    )
    return Usage(**counts)


def _count(raw: Any, name: str, prev: int, where: str = "") -> int:
    value = getattr(raw, name, None)
    if value is None:
        return prev
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EXACT_COUNT:
        raise MalformedReply(f"usage.{where}{name} is {str(value)[:40]}, not a whole number >= 0")
    return value


def web_search_bound(tools: list[dict[str, Any]] | None) -> int:
    """The web searches a request with these `tools` allows: its search tool's `max_uses`, 0
    without a search tool, `MAX_SERVER_TOOL_USES` without a `max_uses`. A reply may report more
    (the API's own count, billed): it is kept, and `searches_past_allowance` logs it."""
    for tool in tools or ():
        if tool.get("name") == "web_search" and str(tool.get("type", "")).startswith("web_search_"):
            most = tool.get("max_uses")
            return most if isinstance(most, int) else MAX_SERVER_TOOL_USES
    return 0


def searches_past_allowance(usage: Usage, attempt: Attempt) -> None:
    """Log a reply that reports more web searches than its request allowed (kept as reported)."""
    if usage.web_search_requests > attempt.max_searches:
        log.warning(
            "model.searches_past_max_uses",
            reported=usage.web_search_requests,
            max_uses=attempt.max_searches,
            message_id=attempt.message_id,
        )


def cache_miss_of(message: Any) -> dict[str, Any] | None:
    """The response's `diagnostics.cache_miss_reason` as a plain dict, or None."""
    reason = getattr(getattr(message, "diagnostics", None), "cache_miss_reason", None)
    if reason is None:
        return None
    dumped: dict[str, Any] = reason.model_dump(mode="json", exclude_none=True)
    return dumped
