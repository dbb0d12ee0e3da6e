"""Turn events → ACP `session/update` notifications, built directly (no validation per chunk, D4).

Each payload comes from `updates.py`, the builder session/load's replay uses too. Text chunks, the
hot path, go out through a per-message sender that encodes the rest of the line once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from acp_agent.session.requester import Requester
from acp_agent.session.updates import (
    chunk,
    plan_update,
    tool_call,
    tool_call_finished,
    tool_call_progress,
    tool_call_status,
)
from acp_agent.tools.shown import shown_value
from acp_agent.turn.entries import Entry, NoticeEntry, PlanChangedEntry
from acp_agent.turn.events import (
    Notice,
    PlanChanged,
    TextChunk,
    ThoughtChunk,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
    TurnEvent,
    UsageReported,
)

__all__ = ["Relay"]

UPDATE = "session/update"
TEXT_PATH = ("update", "content", "text")


class Relay:
    """An EventSink for one session: every event becomes one `session/update`."""

    def __init__(
        self, session_id: str, requester: Requester, journal: Callable[[Entry], None] | None = None
    ) -> None:
        self.session_id = session_id
        self.requester = requester
        self.journal = journal
        self._senders: dict[tuple[type, str], Callable[[str], Awaitable[None]]] = {}

    async def emit(self, event: TurnEvent) -> None:
        kind = type(event)
        if kind is TextChunk or kind is ThoughtChunk or kind is Notice:
            if kind is Notice and self.journal is not None:
                self.journal(_journal_entry(cast("Notice", event)))
            chunk = cast("TextChunk | ThoughtChunk | Notice", event)  # identity checks: the hot path
            await self._chunk_sender(kind, chunk.message_id)(chunk.text)
            return
        if kind is PlanChanged and self.journal is not None:
            self.journal(_journal_entry(cast("PlanChanged", event)))
        update = _tool_or_usage_update(event)
        await self.requester.notify(UPDATE, {"sessionId": self.session_id, "update": update})

    def _chunk_sender(self, kind: type, message_id: str) -> Callable[[str], Awaitable[None]]:
        """The sender of one message's chunks: built at its first chunk, encoded once (D4)."""
        key = (kind, message_id)
        send = self._senders.get(key)
        if send is None:
            if len(self._senders) >= 4:  # a message's chunks come together: keep the latest
                self._senders.clear()
            update = "agent_thought_chunk" if kind is ThoughtChunk else "agent_message_chunk"
            send = self._senders[key] = self.requester.notifier(
                UPDATE,
                {"sessionId": self.session_id, "update": chunk(update, "", message_id)},
                TEXT_PATH,
            )
        return send


def _tool_or_usage_update(event: TurnEvent) -> dict[str, Any]:
    if isinstance(event, ToolCallStarted):
        # rawInput as the model sent it: not yet checked, so made encodable here
        return tool_call(event.call_id, event.title, event.kind, shown_value(event.raw_input))
    if isinstance(event, ToolCallUpdated):
        return tool_call_status(event.call_id, event.status)
    if isinstance(event, ToolCallProgress):
        return tool_call_progress(event.call_id, event.text, event.terminal_id)
    if isinstance(event, ToolCallFinished):
        return tool_call_finished(event.call_id, event.shown, event.terminal_id)
    if isinstance(event, PlanChanged):
        return plan_update(event.entries)
    if isinstance(event, UsageReported):
        usage: dict[str, Any] = {"sessionUpdate": "usage_update", "used": event.used, "size": event.size}
        if event.cost_usd is not None:
            usage["cost"] = {"amount": round(event.cost_usd, 6), "currency": "USD"}
        return usage
    raise TypeError(f"no ACP update for {type(event).__name__}")


def _journal_entry(event: Notice | PlanChanged) -> NoticeEntry | PlanChangedEntry:
    """Notices and plans are replayed on session/load, so they are journaled before they are sent."""
    if isinstance(event, Notice):
        return NoticeEntry(event.text)
    return PlanChangedEntry(event.entries)
