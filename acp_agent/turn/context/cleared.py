"""What a session's requests leave out: old tool results cleared by `clearing.py`, and the thinking
blocks their clearing made unsendable.

The history keeps every message whole (the journal too, and session/load replays them whole);
`ClearedResults.view` is what a request carries instead: each cleared tool_result holds a short
note, and the thinking blocks of the messages that followed a cleared one when it was cleared are
left out (the 5.5 models refuse a thinking block replayed behind a changed prefix, and clearing
changes an earlier message). Both are keyed by what never moves (the call's id, the block's
signature), so a compaction, a rollback or a repair of the history leaves them right.

A session that never cleared anything sends its history as it is: the view is the same list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp_agent.turn.journal.entries import ClearedResult, ClearingEntry

__all__ = ["ClearedResults", "thinking_key"]

Message = dict[str, Any]
Block = dict[str, Any]

THINKING = frozenset({"thinking", "redacted_thinking"})
REASONING_LEFT_OUT = "[earlier reasoning omitted]"
"""An assistant message that held only thinking keeps this, so roles still alternate."""


def thinking_key(block: Block) -> str:
    """What identifies a thinking block wherever it moves: its signature (its data, redacted)."""
    return str(block.get("signature") or block.get("data") or block.get("thinking") or "")


class ClearedResults:
    """The session's cleared results and left-out thinking blocks, and the counts /status shows."""

    def __init__(self) -> None:
        self.notes: dict[str, Block] = {}
        """tool_use_id → the tool_result block sent in its place."""
        self.thinking: set[str] = set()
        """Keys (`thinking_key`) of the thinking blocks left out."""
        self.chars = self.images = self.clearings = 0

    def __bool__(self) -> bool:
        return bool(self.notes or self.thinking)

    def apply(self, entry: ClearingEntry, messages: list[Message]) -> None:
        """Take in one clearing, made when the history was `messages` (live, or as replayed)."""
        for result in entry.results:
            self.notes[result.tool_use_id] = _note_block(result)
            self.chars += result.chars
            self.images += result.images
        self.clearings += 1
        self.thinking.update(
            thinking_key(block)
            for message in messages[entry.first + 1 : entry.messages]
            if message["role"] == "assistant"
            for block in message["content"]
            if block.get("type") in THINKING
        )

    def results(self) -> int:
        return len(self.notes)

    def view(self, messages: list[Message]) -> list[Message]:
        """`messages` as a request carries them: unchanged messages are the same objects."""
        if not self:
            return messages
        notes, thinking = self.notes, self.thinking
        out = []
        for message in messages:
            content = message["content"]
            if message["role"] == "user":
                if any(b.get("type") == "tool_result" and b.get("tool_use_id") in notes for b in content):
                    message = {**message, "content": list(_with_notes(content, notes))}
            elif thinking and any(b.get("type") in THINKING and thinking_key(b) in thinking for b in content):
                kept = [b for b in content if not (b.get("type") in THINKING and thinking_key(b) in thinking)]
                message = {**message, "content": kept or [{"type": "text", "text": REASONING_LEFT_OUT}]}
            out.append(message)
        return out

    def status(self) -> str:
        """The /status line: how much the requests leave out."""
        if not self.notes:
            return "nothing yet"
        images = f" and {self.images} image(s)" if self.images else ""
        return (
            f"{len(self.notes)} old tool result(s) in {self.clearings} step(s): "
            f"{self.chars / 1000:,.1f} KB of text{images}, about {self.chars // 4:,} tokens "
            "per request (kept whole in the journal)"
        )


def _note_block(result: ClearedResult) -> Block:
    return {"type": "tool_result", "tool_use_id": result.tool_use_id, "content": result.note}


def _with_notes(content: Iterable[Block], notes: dict[str, Block]) -> Iterable[Block]:
    for block in content:
        note = notes.get(block.get("tool_use_id", "")) if block.get("type") == "tool_result" else None
        yield block if note is None else note
