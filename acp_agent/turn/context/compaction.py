"""Compaction: when the context nears the window, older turns become one summary.

One model request (counted in the turn, like any other) summarises the conversation; the latest
turns stay as they were. It is skipped when that request would be the last one allowed. The
journal keeps the full original; it records the compacted history as one entry.

The editor is told as it goes (`CompactionStarted`, the summary's text, `CompactionEnded`): the
session shows that as ACP `compaction_*` updates or as a thought. The journal's compaction entry
carries the compaction's id; its summary is the head of the rewritten history (`summary_of`).

The summary request is the session's own request with one more user block: the same tools,
system, thinking and messages, the instruction appended last, no forced tool choice. So it reads
the whole conversation from the prompt cache, and it replays every thinking block behind an
unchanged prefix, which the 5.5 models require. A tool call in its reply is ignored. The history
that results is a rewrite: the thinking blocks of the part kept are dropped (their prefix changed).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import structlog

from acp_agent.model.base import MessageDone, ModelClient, ModelRequest, RetryScheduled, TextDelta
from acp_agent.turn.context.history import History, with_user_block, without_thinking
from acp_agent.turn.events import CompactionEnded, CompactionStarted, CompactionText, EventSink
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.settings import RunnerSettings

__all__ = ["KEEP_TURNS", "compact", "split_point", "summary_of"]

log = structlog.get_logger(__name__)

KEEP_TURNS = 2
"""User prompts (with what followed them) kept verbatim after a compaction."""

SUMMARY_INSTRUCTION = (
    "[Compaction] Before you go on: summarise the conversation so far for your own later use: the "
    "user's goals, decisions made, files read or changed (with paths), commands run and their "
    "outcome, the current plan and what remains to do. Be specific and brief; this summary "
    "replaces the older part of the conversation. Do not call tools: answer with the summary only."
)
SUMMARY_HEADER = "[Summary of the earlier conversation]"


def _is_prompt(message: dict[str, Any]) -> bool:
    """A user message that holds text the user typed (not only tool results)."""
    return message["role"] == "user" and any(
        b.get("type") in {"text", "image"} for b in message["content"] if isinstance(b, dict)
    )


def split_point(messages: list[dict[str, Any]], keep: int = KEEP_TURNS) -> int:
    """Index of the first message kept; 0 when there is nothing old enough to summarise."""
    prompts = [i for i, m in enumerate(messages) if _is_prompt(m)]
    if len(prompts) <= keep:
        return 0
    return prompts[-keep]


def summary_of(messages: list[dict[str, Any]]) -> str | None:
    """The summary a compaction put at the head of the history (None: it holds none)."""
    first = messages[0]["content"][0] if messages and messages[0]["content"] else {}
    text = first.get("text") if isinstance(first, dict) else None
    if isinstance(text, str) and text.startswith(SUMMARY_HEADER + "\n"):
        return text.removeprefix(SUMMARY_HEADER + "\n")
    return None


def _rebuilt(summary: str, kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summary leads the first kept prompt; results of tool calls summarised away go."""
    first, *rest = kept
    blocks = [b for b in first["content"] if b.get("type") != "tool_result"]
    lead = {"type": "text", "text": f"{SUMMARY_HEADER}\n{summary}"}
    return without_thinking([{"role": "user", "content": [lead, *blocks]}, *rest])


async def compact(
    model: ModelClient,
    history: History,
    meter: TurnMeter,
    *,
    settings: RunnerSettings,
    tools: list[dict[str, Any]],
    previous_message_id: str | None = None,
    sink: EventSink | None = None,
) -> tuple[int, MessageDone | None]:
    """Summarise the older turns, telling `sink` as it goes (started, the summary as it is
    written, how it ended) once the request goes out.

    Returns how many messages were replaced (0 if skipped) and the summary's response, for the
    caller to account for (usage, cost, the session's latest message id); None when none came.
    """
    cut = split_point(history.messages)
    if cut == 0:
        return 0, None
    # A question, not a stop: a budget that forbids this request skips the compaction, and the
    # loop's own check then ends the turn if it must.
    if meter.requests_left() <= 1 or meter.exhausted() is not None:
        log.info("compaction.skipped", reason="it would use the last request allowed")
        return 0, None
    meter.start_request(settings.model)
    request = ModelRequest(
        model=settings.model,
        max_tokens=settings.max_tokens,
        system=settings.system,
        tools=tools,
        thinking=settings.thinking,
        output_config=settings.output_config,
        messages=with_user_block(history.for_request(), {"type": "text", "text": SUMMARY_INSTRUCTION}),
        previous_message_id=previous_message_id,
        deadline=meter.deadline(),
    )
    compaction_id = f"cmp_{uuid.uuid4().hex}"
    tell = _Teller(sink, compaction_id)
    await tell.event(CompactionStarted(compaction_id))
    done: MessageDone | None = None
    try:
        async for event in model.respond(request):
            if isinstance(event, TextDelta):
                await tell.event(CompactionText(compaction_id, event.text))
            elif isinstance(event, RetryScheduled):  # an attempt the API received: on the record
                meter.retry_scheduled()
            elif isinstance(event, MessageDone):
                done = event
    except anyio.get_cancelled_exc_class():
        await tell.ended("cancelled")
        raise
    except Exception as exc:
        await tell.ended("failed", f"the summary request failed: {exc}")
        raise
    summary = (
        "".join(b.get("text", "") for b in done.content if b.get("type") == "text").strip() if done else ""
    )
    if not summary:
        log.warning("compaction.no_summary", stop_reason=done.stop_reason if done else None)
        await tell.ended("failed", "the model wrote no summary; the history is unchanged")
        return 0, done
    history.replace_all(_rebuilt(summary, history.messages[cut:]), compaction_id=compaction_id)
    log.info("compaction.done", replaced=cut, kept=len(history.messages))
    await tell.ended("completed", replaced=cut)
    return cut, done


class _Teller:
    """Tells a sink (if any) how one compaction goes; its end is told even from a cancelled scope."""

    def __init__(self, sink: EventSink | None, compaction_id: str) -> None:
        self.sink, self.compaction_id = sink, compaction_id

    async def event(self, event: CompactionStarted | CompactionText) -> None:
        if self.sink is not None:
            await self.sink.emit(event)

    async def ended(self, status: str, error: str | None = None, *, replaced: int = 0) -> None:
        if self.sink is not None:
            with anyio.move_on_after(2, shield=True):
                await self.sink.emit(CompactionEnded(self.compaction_id, status, replaced, error))
