"""The conversation as the Messages API sees it, kept valid at every turn boundary.

Valid means: roles alternate, and every assistant `tool_use` is answered by a `tool_result` in the
next user message. A prompt that follows trailing tool results is merged into that user message
(turn-semantics C2.7), a refusal drops only that prompt's own blocks, and `repair()` answers any
dangling tool_use with an error result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["History", "Mark", "tool_result"]

Message = dict[str, Any]
Block = dict[str, Any]

INTERRUPTED = "not executed: the turn was interrupted before this tool ran"


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a prompt began: message count, and block count of a user message it was merged into."""

    messages: int
    blocks: int


class History:
    """Messages in Anthropic's input shape, owned by one session."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = messages or []

    def __len__(self) -> int:
        return len(self.messages)

    def mark(self) -> Mark:
        last = self.messages[-1] if self.messages else None
        blocks = len(last["content"]) if last and last["role"] == "user" else 0
        return Mark(len(self.messages), blocks)

    def rollback(self, mark: Mark) -> None:
        """Drop everything added since `mark` (a refused prompt and what followed it)."""
        del self.messages[mark.messages:]
        if mark.blocks and self.messages:
            del self.messages[-1]["content"][mark.blocks:]

    def add_user(self, blocks: list[Block]) -> None:
        """Append user blocks, merging into a trailing user message (after its tool_results)."""
        if not blocks:
            return
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})

    def add_assistant(self, blocks: list[Block]) -> None:
        """Append a finished (or partial) assistant reply; empty replies leave no trace."""
        blocks = [b for b in blocks if not (b.get("type") == "text" and not b.get("text"))]
        if not blocks:
            return
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
