"""Compaction: when the context nears the window, older turns become one summary.

One model request (counted in the turn, like any other) summarises the older part of the history;
the latest turns stay as they were. It is skipped when that request would be the last one allowed.
The journal keeps the full original; it records the compacted history as one entry.
"""

from __future__ import annotations

import json
from typing import Any

import structlog

from acp_agent.model.base import MessageDone, ModelClient, ModelRequest
from acp_agent.turn.governor import Stop, TurnMeter
from acp_agent.turn.history import History, result_text

__all__ = ["KEEP_TURNS", "compact", "split_point"]

log = structlog.get_logger(__name__)

KEEP_TURNS = 2
"""User prompts (with what followed them) kept verbatim after a compaction."""

SUMMARY_INSTRUCTION = (
    "Summarise the conversation below for your own later use: the user's goals, decisions made, "
    "files read or changed (with paths), commands run and their outcome, the current plan and what "
    "remains to do. Be specific and brief; this summary replaces the conversation.")
SUMMARY_MAX_TOKENS = 2_000
TRANSCRIPT_CAP = 400_000


def _is_prompt(message: dict[str, Any]) -> bool:
    """A user message that holds text the user typed (not only tool results)."""
    return message["role"] == "user" and any(
        b.get("type") in {"text", "image"} for b in message["content"] if isinstance(b, dict))


def split_point(messages: list[dict[str, Any]], keep: int = KEEP_TURNS) -> int:
    """Index of the first message kept; 0 when there is nothing old enough to summarise."""
    prompts = [i for i, m in enumerate(messages) if _is_prompt(m)]
    if len(prompts) <= keep:
        return 0
    return prompts[-keep]


def _render(messages: list[dict[str, Any]]) -> str:
    lines = []
    for message in messages:
        for block in message["content"]:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"{message['role']}: {block['text']}")
            elif kind == "tool_use":
                lines.append(f"assistant called {block['name']}({json.dumps(block.get('input'))})")
            elif kind == "tool_result":
                lines.append(f"tool result: {result_text(block.get('content'))[:2000]}")
    text = "\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CAP else text[-TRANSCRIPT_CAP:]


async def compact(model: ModelClient, history: History, meter: TurnMeter, *, model_id: str,
                  system: str | None) -> int:
    """Summarise the older turns; returns how many messages were replaced (0 if skipped)."""
    cut = split_point(history.messages)
    if cut == 0:
        return 0
    if meter.requests_left() <= 1 or isinstance(meter.before_request(), Stop):
        log.info("compaction.skipped", reason="it would use the last request allowed")
        return 0
    meter.count_request()
    request = ModelRequest(
        model=model_id, max_tokens=SUMMARY_MAX_TOKENS, system=system,
        messages=[{"role": "user", "content": [
            {"type": "text", "text": f"{SUMMARY_INSTRUCTION}\n\n{_render(history.messages[:cut])}"}]}])
    done: MessageDone | None = None
    async for event in model.respond(request):
        if isinstance(event, MessageDone):
            done = event
    if done is None:
        return 0
    meter.add_usage(done.usage)
    summary = "".join(b.get("text", "") for b in done.content if b.get("type") == "text").strip()
    kept = history.messages[cut:]
    history.messages[:] = [
        {"role": "user", "content": [{"type": "text", "text":
                                      f"[Summary of the earlier conversation]\n{summary}"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Understood; continuing."}]},
        *kept]
    history.note({"type": "compaction", "messages": history.messages})
    log.info("compaction.done", replaced=cut, kept=len(kept))
    return cut
