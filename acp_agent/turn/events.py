"""What the loop tells the outside world, through an `EventSink` the session implements.

The loop emits these; `session/editor/relay.py` turns them into ACP `session/update`s. Hot-path values:
frozen slotted dataclasses, no validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from acp_agent.tools.base import PlanEntry
from acp_agent.turn.journal.entries import ToolCallShown

__all__ = [
    "CompactionEnded",
    "CompactionStarted",
    "CompactionText",
    "EventSink",
    "Notice",
    "PlanChanged",
    "SteeringJoined",
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
    """A note for the user only (never in the model's history).

    With a `title` it is a notice proper (which limit ended the turn, a retry, a warning): a
    client that shows ACP notices gets one (`severity`, `title`, `description`); any other gets
    `text` as a message, or as a thought when `thought` (a retry: no part of the answer). Without
    a title (a command's answer) it is always a message. A message is journaled and replayed.
    """

    text: str
    message_id: str
    title: str | None = None
    description: str | None = None
    severity: str = "info"
    """info, warning or error."""
    thought: bool = False

    @classmethod
    def warning(cls, text: str, message_id: str, *, thought: bool = False) -> Notice:
        """A warning whose title is the first sentence of `text`, and its description the rest."""
        first, _, rest = text.strip().partition("\n")
        head, dot, tail = first.partition(". ")
        description = " ".join(part for part in (tail.strip(), rest.strip()) if part) or None
        title = head.rstrip(".") if dot else first.rstrip(".")
        return cls(text, message_id, title or "Warning", description, "warning", thought)


@dataclass(frozen=True, slots=True)
class SteeringJoined:
    """A message the user sent while the turn ran joined its history (`turn/steering.py`):
    shown to the editor as the user's message, `shown` as the editor sent it."""

    shown: tuple[dict[str, Any], ...]
    message_id: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A call is announced; `name` is the tool's own name (None: not a tool, e.g. a check)."""

    call_id: str
    title: str
    kind: str
    raw_input: dict[str, Any]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallUpdated:
    """A tool call moved to `in_progress` (or got a new title)."""

    call_id: str
    status: str = "in_progress"


@dataclass(frozen=True, slots=True)
class ToolCallProgress:
    """A running tool's latest output tail (replacing the previous one), or its editor terminal;
    `status` moves the call on (a background command's call, once the command ended)."""

    call_id: str
    text: str | None = None
    terminal_id: str | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call ended: what the editor is shown of it (the same value its journal entry holds),
    and the editor terminal it ran in, if any (live only: a terminal does not outlive its call);
    its images come from `media`, as on replay they come from the journaled result block."""

    call_id: str
    shown: ToolCallShown
    terminal_id: str | None = None
    media: tuple[dict[str, Any], ...] = ()
    """The result's media blocks for the model (the images `shown.images` counts)."""

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


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """The summary request of a compaction went out (`compaction_id`: unique in the session)."""

    compaction_id: str


@dataclass(frozen=True, slots=True)
class CompactionText:
    """A piece of a compaction's summary, as the model writes it."""

    compaction_id: str
    text: str


@dataclass(frozen=True, slots=True)
class CompactionEnded:
    """A compaction ended: `completed` (it replaced `replaced` earlier messages), `failed` (with
    `error`) or `cancelled`."""

    compaction_id: str
    status: str
    replaced: int = 0
    error: str | None = None


TurnEvent = (
    TextChunk
    | ThoughtChunk
    | Notice
    | SteeringJoined
    | ToolCallStarted
    | ToolCallUpdated
    | ToolCallProgress
    | ToolCallFinished
    | PlanChanged
    | UsageReported
    | CompactionStarted
    | CompactionText
    | CompactionEnded
)


class EventSink(Protocol):
    """Where the loop's events go. Implemented in `session/` and injected."""

    async def emit(self, event: TurnEvent) -> None: ...
