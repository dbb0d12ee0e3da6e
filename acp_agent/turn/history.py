"""The conversation as the Messages API sees it, kept valid at every turn boundary.

Valid means: roles alternate, and every assistant `tool_use` is answered by a `tool_result` in the
next user message. A prompt that follows trailing tool results is merged into that user message
(turn-semantics C2.7), a refusal drops only that prompt's own blocks, and `repair()` answers any
dangling tool_use with an error result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

__all__ = ["History", "JournalWriter", "Mark", "add_note", "result_text", "tool_result"]

Message = dict[str, Any]
Block = dict[str, Any]

INTERRUPTED = "not executed: the turn was interrupted before this tool ran"


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False,
                media: Iterable[Block] = ()) -> Block:
    """A tool_result block; with `media` (image blocks) its content is a list: the text, then them."""
    extra = list(media)
    content: str | list[Block] = [{"type": "text", "text": text}, *extra] if extra else text
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def result_text(content: Any) -> str:
    """A tool_result's content as text: a list's text blocks, with `[image]` for each image."""
    if not isinstance(content, list):
        return str(content)
    return "\n".join(b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]"
                     for b in content if isinstance(b, dict))


def add_note(result: Block, note: str) -> None:
    """Append `note` to a tool_result's text, whichever shape its content has."""
    content = result.get("content")
    if isinstance(content, list):
        content.append({"type": "text", "text": note})
    else:
        result["content"] = str(content) + note


def _results_in_call_order(messages: list[Message]) -> None:
    """Put replayed tool_results back in their calls' order: calls that ran at once were journaled
    as each one finished."""
    for before, message in pairwise(messages):
        if before["role"] != "assistant" or message["role"] != "user":
            continue
        order = {b.get("id"): i for i, b in enumerate(before["content"]) if b.get("type") == "tool_use"}
        content = message["content"]
        leading = 0
        while leading < len(content) and content[leading].get("type") == "tool_result":
            leading += 1
        if order and leading > 1:
            content[:leading] = sorted(content[:leading],
                                       key=lambda b: order.get(b.get("tool_use_id"), len(order)))


class JournalWriter(Protocol):
    """Writes one entry; with `sync`, it (and every entry before it) is on disk when this returns."""

    def __call__(self, entry: dict[str, Any], *, sync: bool = True) -> None: ...


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a prompt began: message count, and block count of a user message it was merged into."""

    messages: int
    blocks: int


class History:
    """Messages in Anthropic's input shape, owned by one session.

    With a `journal`, every change is also written as an entry (prompt, user, assistant, rollback,
    tool_result) from which `History.replay` rebuilds the same messages after a restart.
    """

    def __init__(self, messages: list[Message] | None = None,
                 journal: JournalWriter | None = None) -> None:
        self.messages: list[Message] = messages or []
        self.journal = journal

    def note(self, entry: dict[str, Any], *, sync: bool = True) -> None:
        """Write an entry to the journal (if any), before the change is reported as done.

        `sync=False` skips the fsync for an entry nothing reports as kept: the next synced entry
        (a tool result, the turn record) makes it durable too, and a killed process loses nothing
        written (only a crash of the machine could).
        """
        if self.journal is not None:
            self.journal(entry, sync=sync)

    @classmethod
    def replay(cls, entries: Iterable[dict[str, Any]]) -> History:
        """Rebuild the messages from journal entries; a dangling tool_use is then repaired."""
        history = cls()
        for entry in entries:
            kind = entry.get("type")
            if kind in {"prompt", "user"}:
                history.add_user(list(entry.get("blocks") or []), journal=False)
            elif kind == "tool_result" and isinstance(entry.get("block"), dict):
                history.add_user([entry["block"]], journal=False)
            elif kind == "assistant":
                history.add_assistant(list(entry.get("blocks") or []), journal=False)
            elif kind == "compaction" and isinstance(entry.get("messages"), list):
                history.messages = [dict(m) for m in entry["messages"]]
            elif kind == "rollback":
                history.rollback(Mark(int(entry.get("messages", 0)), int(entry.get("blocks", 0))),
                                 journal=False)
        _results_in_call_order(history.messages)
        history.repair()
        return history

    def __len__(self) -> int:
        return len(self.messages)

    def mark(self) -> Mark:
        last = self.messages[-1] if self.messages else None
        blocks = len(last["content"]) if last and last["role"] == "user" else 0
        return Mark(len(self.messages), blocks)

    def rollback(self, mark: Mark, *, journal: bool = True) -> None:
        """Drop everything added since `mark` (a refused prompt and what followed it)."""
        if journal:
            self.note({"type": "rollback", "messages": mark.messages, "blocks": mark.blocks})
        del self.messages[mark.messages:]
        if mark.blocks and self.messages:
            del self.messages[-1]["content"][mark.blocks:]

    def add_prompt(self, blocks: list[Block], shown: list[dict[str, Any]] | None = None) -> None:
        """A new user prompt; `shown` is what the editor sent, replayed to it on session/load."""
        self.note({"type": "prompt", "blocks": blocks, "prompt": shown or []})
        self.add_user(blocks, journal=False)

    def add_user(self, blocks: list[Block], *, journal: bool = True) -> None:
        """Append user blocks, merging into a trailing user message (after its tool_results)."""
        if not blocks:
            return
        if journal:
            self.note({"type": "user", "blocks": blocks})
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})

    def add_assistant(self, blocks: list[Block], *, journal: bool = True) -> None:
        """Append a finished (or partial) assistant reply; empty replies leave no trace."""
        blocks = [b for b in blocks if not (b.get("type") == "text" and not b.get("text"))]
        if not blocks:
            return
        if journal:  # streamed already; the tool results or the turn record that follow sync it
            self.note({"type": "assistant", "blocks": blocks}, sync=False)
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "assistant", "content": blocks})

    def pending_tool_uses(self) -> list[Block]:
        """tool_use blocks of the last assistant message that have no tool_result yet."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return []
        return [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]

    def repair(self, reason: str = INTERRUPTED) -> int:
        """Answer every dangling tool_use with an error tool_result; returns how many were added."""
        dangling = self.pending_tool_uses()
        if dangling:
            self.add_user([tool_result(b["id"], reason, is_error=True) for b in dangling])
        return len(dangling)

    def last_assistant_text(self) -> str:
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                return "".join(b.get("text", "") for b in message["content"]
                               if b.get("type") == "text")
        return ""
