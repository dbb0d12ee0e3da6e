"""Turn events → ACP `session/update` notifications, built directly (no validation per chunk, D4).

The official schema checks these in the tests; here they are plain dicts serialised once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from acp_agent.session.requester import Requester
from acp_agent.tools.shown import shown_value
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
        self, session_id: str, requester: Requester, journal: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.session_id = session_id
        self.requester = requester
        self.journal = journal
        self._senders: dict[tuple[type, str], Callable[[str], Awaitable[None]]] = {}

    async def emit(self, event: TurnEvent) -> None:
        kind = type(event)
        if kind is TextChunk or kind is ThoughtChunk or kind is Notice:
            if kind is Notice and self.journal is not None:
                self.journal(_journal_entry(event))
            chunk = cast("TextChunk | ThoughtChunk | Notice", event)  # identity checks: the hot path
            await self._chunk_sender(kind, chunk.message_id)(chunk.text)
            return
        if kind is PlanChanged and self.journal is not None:
            self.journal(_journal_entry(event))
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
                {
                    "sessionId": self.session_id,
                    "update": {
                        "sessionUpdate": update,
                        "content": {"type": "text", "text": ""},
                        "messageId": message_id,
                    },
                },
                TEXT_PATH,
            )
        return send


def _tool_or_usage_update(event: TurnEvent) -> dict[str, Any]:
    if isinstance(event, ToolCallStarted):
        return {
            "sessionUpdate": "tool_call",
            "toolCallId": event.call_id,
            "title": event.title,
            "kind": event.kind,
            "status": "pending",
            "rawInput": shown_value(event.raw_input),  # as the model sent it: not yet checked
        }
    if isinstance(event, ToolCallUpdated):
        return {"sessionUpdate": "tool_call_update", "toolCallId": event.call_id, "status": event.status}
    if isinstance(event, ToolCallProgress):
        content = (
            [{"type": "terminal", "terminalId": event.terminal_id}]
            if event.terminal_id
            else [_text_content(event.text or "")]
        )
        return {"sessionUpdate": "tool_call_update", "toolCallId": event.call_id, "content": content}
    if isinstance(event, ToolCallFinished):
        content = [
            {"type": "diff", "path": str(d.path), "oldText": d.old_text, "newText": d.new_text}
            for d in event.diffs
        ]
        if event.terminal_id:
            content.append({"type": "terminal", "terminalId": event.terminal_id})
        content.append(_text_content(event.text))
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": event.call_id,
            "status": event.status,
            "content": content,
        }
        if event.locations:
            update["locations"] = [
                {"path": str(path)} if line is None else {"path": str(path), "line": line}
                for path, line in event.locations
            ]
        if event.raw_output is not None:
            update["rawOutput"] = event.raw_output
        return update
    if isinstance(event, PlanChanged):
        return {
            "sessionUpdate": "plan",
            "entries": [
                {"content": e.content, "priority": e.priority, "status": e.status} for e in event.entries
            ],
        }
    if isinstance(event, UsageReported):
        usage: dict[str, Any] = {"sessionUpdate": "usage_update", "used": event.used, "size": event.size}
        if event.cost_usd is not None:
            usage["cost"] = {"amount": round(event.cost_usd, 6), "currency": "USD"}
        return usage
    raise TypeError(f"no ACP update for {type(event).__name__}")


def _text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _journal_entry(event: TurnEvent) -> dict[str, Any]:
    """Notices and plans are replayed on session/load, so they are journaled before they are sent."""
    if isinstance(event, Notice):
        return {"type": "notice", "text": event.text}
    assert isinstance(event, PlanChanged)
    return {
        "type": "plan",
        "entries": [
            {"content": e.content, "priority": e.priority, "status": e.status} for e in event.entries
        ],
    }
