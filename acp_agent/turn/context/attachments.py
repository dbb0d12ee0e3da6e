"""What joins the conversation when the model reads a file: instructions scoped to it.

Claude Code loads some memory only when it is needed: a rule whose `paths:` match the file read,
a CLAUDE.md in a directory below the cwd once a file there is read. `session/` knows those files
(`claude_code/memory/scoped_instructions.py`) and fills the `ReadAttachments` seam; the tool batch
asks it once per batch, with the files its calls read (`ToolResult.read`), and appends what is new
as text blocks after the batch's tool results, in the same user message.

Why there, and not in the system prompt: the system prompt, the tool list and every message
before stay byte for byte what the session sent, so the cached prefix holds; the new blocks are
the tail the next request adds anyway. Each block is a `<system-reminder>` (as Claude Code sends
its own) naming its source, so a file's text joins a conversation once: the history itself says
what it holds, which stays true through a `session/load` (the blocks are journaled), a rollback
(gone with what it removed) and a compaction (summarised away, and attached again at the next read).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog

from acp_agent.turn.context.history import History

__all__ = ["Attachment", "ReadAttachments", "attach_for_reads", "attached", "new_blocks"]

log = structlog.get_logger(__name__)

_OPEN = "<system-reminder>\nContents of "
_CLOSE = "\n</system-reminder>"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file's text for the conversation: `source` names it (its path), `about` says why it
    applies ("a rule for files matching src/**"), and a source joins a conversation once."""

    source: str
    about: str
    text: str

    def block(self) -> dict[str, Any]:
        return {"type": "text", "text": f"{_OPEN}{self.source} ({self.about}):\n\n{self.text}{_CLOSE}"}


class ReadAttachments(Protocol):
    """The instructions scoped to files the model read, in the order they apply; every one that
    applies, whether the conversation holds it already or not (the batch keeps it to once).
    Never raises for a bad file (it is left out and logged), and bounds its own disk time."""

    async def for_reads(self, paths: Sequence[Path]) -> Sequence[Attachment]: ...


def _texts(messages: Iterable[dict[str, Any]]) -> Iterable[str]:
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "text" and str(block.get("text", "")).startswith(_OPEN):
                    yield block["text"]


def attached(messages: Iterable[dict[str, Any]]) -> list[str]:
    """The heading of each attachment the conversation holds ("<source> (<about>)"), in order."""
    return [text[len(_OPEN) :].split(":\n", 1)[0] for text in _texts(messages)]


def new_blocks(messages: Sequence[dict[str, Any]], found: Sequence[Attachment]) -> list[dict[str, Any]]:
    """The blocks of `found` the conversation does not hold yet, once each, in order."""
    held = list(_texts(messages))
    blocks: list[dict[str, Any]] = []
    for item in found:
        mark = f"{_OPEN}{item.source} ("
        if any(text.startswith(mark) for text in held):
            continue
        block = item.block()
        held.append(block["text"])
        blocks.append(block)
    return blocks


async def attach_for_reads(history: History, attachments: ReadAttachments, read: Sequence[Path]) -> None:
    """Append to `history`'s last user message (a batch's results) what `attachments` says applies
    to the files `read` and the conversation does not hold yet (journaled, so a load keeps it)."""
    try:
        found = await attachments.for_reads(list(dict.fromkeys(read)))
    except Exception:  # instructions are a help: a failure never costs the turn
        log.exception("attachments.failed")
        return
    blocks = new_blocks(history.messages, found)
    if blocks:
        history.add_user(blocks)
