"""What the loop tells the outside world, through an `EventSink` the session implements.

The loop emits these; `session/relay.py` turns them into ACP `session/update`s. Hot-path values:
frozen slotted dataclasses, no validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from acp_agent.tools.base import PlanEntry
from acp_agent.turn.entries import ToolCallShown

__all__ = [
    "EventSink",
    "Notice",
    "PlanChanged",
    "TextChunk",
    "ThoughtChunk",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallStarted",
    "ToolCallUpdated",
    "TurnEvent",
    "UsageReported",
]


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Assistant text; chunks of one model response share `message_id`."""

    text: str
    message_id: str


@dataclass(frozen=True, slots=True)
class ThoughtChunk:
    """The model's thinking, or a status note such as "retrying in 2 s"."""

    text: str
    message_id: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A note for the user only (never in the model's history), e.g. which limit ended the turn."""

    text: str
    message_id: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    call_id: str
    title: str
    kind: str
    raw_input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallUpdated:
    """A tool call moved to `in_progress` (or got a new title)."""

    call_id: str
    status: str = "in_progress"


@dataclass(frozen=True, slots=True)
class ToolCallProgress:
    """A running tool's latest output tail (replacing the previous one), or its editor terminal."""

    call_id: str
    text: str | None = None
    terminal_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call ended: what the editor is shown of it (the same value its journal entry holds),
    and the editor terminal it ran in, if any (live only: a terminal does not outlive its call)."""

    call_id: str
    shown: ToolCallShown
    terminal_id: str | None = None

    @classmethod
    def of(
        cls, call_id: str, status: str, text: str, raw_output: dict[str, Any] | None = None
    ) -> ToolCallFinished:
        """A call that ends with a status and a text only (a strategy's check, a failure)."""
        return cls(call_id, ToolCallShown(status=status, text=text, raw_output=raw_output))


@dataclass(frozen=True, slots=True)
class PlanChanged:
    """The whole plan as it stands now (the editor replaces its copy)."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class UsageReported:
    """After each model request: the current context size (never a running total) and the window."""

    used: int
    size: int
    cost_usd: float | None = None
    """The session's cumulative cost, when the model's price is known."""


TurnEvent = (
    TextChunk
    | ThoughtChunk
    | Notice
    | ToolCallStarted
    | ToolCallUpdated
    | ToolCallProgress
    | ToolCallFinished
    | PlanChanged
    | UsageReported
)


class EventSink(Protocol):
    """Where the loop's events go. Implemented in `session/` and injected."""

    async def emit(self, event: TurnEvent) -> None: ...
