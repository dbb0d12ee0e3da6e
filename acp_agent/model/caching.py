"""Prompt-cache breakpoints: where a request marks `cache_control`, so a turn pays for a prompt once
(docs/decisions.md D14).

The API reads a request as one prefix (tools, then system, then messages) and bills what it finds
cached at 0.1x (0.05x on Sonnet/Opus 5.5). Four breakpoints at most:
- on the last tool definition and on the system prompt: fixed, the same bytes for the whole
  session (the `--cache-ttl` applies to these);
- on the last block of the conversation: slides with every request, so the next request finds
  this one's prefix (the API looks back about 20 blocks from each breakpoint);
- on the last block of the user message before the latest reply: the previous request's tail,
  a fallback that still hits when a step added more than 20 blocks (a large tool batch).
Markers go on copies: the session's history never holds one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_BREAKPOINTS", "with_breakpoints"]

MAX_BREAKPOINTS = 4
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def _marker(ttl: str) -> dict[str, Any]:
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def _mark_last_block(message: dict[str, Any], marker: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `message` with its last markable block marked; None when it has none."""
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if block.get("type") in UNMARKABLE or (block.get("type") == "text" and not block.get("text")):
            continue
        blocks[i] = {**block, "cache_control": marker}
        return {**message, "content": blocks}
    return None


def with_breakpoints(kwargs: dict[str, Any], *, ttl: str = "5m") -> dict[str, Any]:
    """The request's keyword arguments with breakpoints on tools, system and the conversation."""
    fixed, sliding = _marker(ttl), _marker("5m")
    out = dict(kwargs)
    tools = out.get("tools")
    if tools:
        out["tools"] = [*tools[:-1], {**tools[-1], "cache_control": fixed}]
    system = out.get("system")
    if isinstance(system, str) and system:
        out["system"] = [{"type": "text", "text": system, "cache_control": fixed}]
    messages = list(out.get("messages") or [])
    if messages:
        tail = _mark_last_block(messages[-1], sliding)
        if tail is not None:
            messages[-1] = tail
        replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        before = replies[-1] - 1 if replies else -1
        if before >= 0 and messages[before]["role"] == "user" and before != len(messages) - 1:
            marked = _mark_last_block(messages[before], sliding)
            if marked is not None:
                messages[before] = marked
        out["messages"] = messages
    return out
