"""Turn events → ACP `session/update` notifications, built directly (no validation per chunk, D4).

Each payload comes from `updates.py`, the builder session/load's replay uses too. Text chunks, the
hot path, go out through a per-message sender that encodes the rest of the line once. Notices and
compactions are shown as the client's capabilities allow (`session.notices`,
`session.compaction`); a client without them is sent what clients always were.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any, cast

from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.editor.updates import (
    chunk,
    compaction_chunk,
    compaction_update,
    notice_update,
    plan_update,
    tool_call,
    tool_call_finished,
    tool_call_progress,
    tool_call_status,
    user_chunks,
)
from acp_agent.session.requester import Requester
from acp_agent.tools.shown import shown_value
from acp_agent.turn.events import (
    CompactionEnded,
    CompactionStarted,
    CompactionText,
    Notice,
    PlanChanged,
    SteeringJoined,
    TextChunk,
    ThoughtChunk,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
    TurnEvent,
    UsageReported,
)
from acp_agent.turn.journal.entries import Entry, NoticeEntry, PlanChangedEntry

__all__ = ["Relay"]

UPDATE = "session/update"
TEXT_PATH = ("update", "content", "text")


class Relay:
    """An EventSink for one session: every event becomes one `session/update`."""

    def __init__(
        self,
        session_id: str,
        requester: Requester,
        journal: Callable[[Entry], None] | None = None,
        capabilities: ClientCapabilities | None = None,
    ) -> None:
        self.session_id = session_id
        self.requester = requester
        self.journal = journal
        caps = capabilities or ClientCapabilities()
        self.notices, self.compaction = caps.notices, caps.compaction
        """What the client shows beyond chunks (`notice`, `compaction_*`); else what it always got."""
        self._senders: dict[tuple[type, str], Callable[[str], Awaitable[None]]] = {}

    async def emit(self, event: TurnEvent) -> None:
        kind = type(event)
        if kind is TextChunk or kind is ThoughtChunk:
            chunk = cast("TextChunk | ThoughtChunk", event)  # identity checks: the hot path
            await self._chunk_sender(kind, chunk.message_id)(chunk.text)
            return
        if self.journal is not None and _replayed(event):
            self.journal(_journal_entry(cast("Notice | PlanChanged", event)))
        if isinstance(event, SteeringJoined):  # journaled by the history it joined
            for shown in user_chunks(event.shown, event.message_id):
                await self.requester.notify(UPDATE, {"sessionId": self.session_id, "update": shown})
            return
        update = self._update(event)
        if update is not None:
            await self.requester.notify(UPDATE, {"sessionId": self.session_id, "update": update})

    def _update(self, event: TurnEvent) -> dict[str, Any] | None:
        """The update for an event off the hot path; None when this client is shown nothing of it."""
        if isinstance(event, Notice):
            return notice_update(event, notices=self.notices)
        if isinstance(event, CompactionStarted | CompactionText | CompactionEnded):
            return self._compaction(event)
        return _tool_or_usage_update(event)

    def _compaction(
        self, event: CompactionStarted | CompactionText | CompactionEnded
    ) -> dict[str, Any] | None:
        """`compaction_*` updates where the client shows them; else the thought it always got."""
        if self.compaction:
            if isinstance(event, CompactionStarted):
                return compaction_update(event.compaction_id, "in_progress")
            if isinstance(event, CompactionText):
                return compaction_chunk(event.compaction_id, event.text)
            return compaction_update(event.compaction_id, event.status, error=event.error)
        if isinstance(event, CompactionEnded) and event.status == "completed" and event.replaced:
            text = f"Context is getting full: summarised {event.replaced} earlier messages.\n"
            return chunk("agent_thought_chunk", text, str(uuid.uuid4()))
        return None

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
        return tool_call(event.call_id, event.title, event.kind, shown_value(event.raw_input), event.name)
    if isinstance(event, ToolCallUpdated):
        return tool_call_status(event.call_id, event.status)
    if isinstance(event, ToolCallProgress):
        return tool_call_progress(event.call_id, event.text, event.terminal_id, event.status)
    if isinstance(event, ToolCallFinished):
        return tool_call_finished(event.call_id, event.shown, event.terminal_id, event.media)
    if isinstance(event, PlanChanged):
        return plan_update(event.entries)
    if isinstance(event, UsageReported):
        usage: dict[str, Any] = {"sessionUpdate": "usage_update", "used": event.used, "size": event.size}
        if event.cost_usd is not None:
            usage["cost"] = {"amount": round(event.cost_usd, 6), "currency": "USD"}
        return usage
    raise TypeError(f"no ACP update for {type(event).__name__}")


def _replayed(event: TurnEvent) -> bool:
    """A plan, or a notice shown as a message: journaled, so session/load shows it again."""
    return isinstance(event, PlanChanged) or (isinstance(event, Notice) and not event.thought)


def _journal_entry(event: Notice | PlanChanged) -> NoticeEntry | PlanChangedEntry:
    """Notices and plans are replayed on session/load, so they are journaled before they are sent."""
    if isinstance(event, Notice):
        return NoticeEntry(event.text, event.title)
    return PlanChangedEntry(event.entries)
