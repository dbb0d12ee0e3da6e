"""The journal's vocabulary: every kind of entry a session journal holds, one typed value each.

The journal (`journal/store.py`) is the one durable format: `turn/` writes entries through
`History.note`, `session/` writes its own (the header, notices, plans, option changes) and reads
them all back for session/load. Each kind is a frozen dataclass (`journaled.py`), built directly by
its writer (no validation: the agent's own values) and validated once when a line is read (a
pydantic TypeAdapter over these classes: a boundary crossed once per entry, docs/decisions.md D4).
The conversation's and the options' kinds are here, with the one `Entry` union of every kind; the
workspace history's (checkpoints, changes, rewinds) are in `workspace_entries.py`, the API blocks
and messages the entries carry in `api_blocks.py`, what the editor is shown of a tool call in
`shown_calls.py`; every name is importable from here. `lines.py` turns an entry into its line and
back; `schemas/journal-entry.schema.json` is generated from these classes.

On disk an entry is one JSON object: `type` first, then its fields in camelCase, in the order
declared. A field whose default is None, False, () or 0 is left out at that default, and a
reader fills it back in, so journals written before a field existed still load.

To add an entry kind: a `@journaled` class with `type: Literal["<kind>"] = "<kind>"` as its last
field, added to `Entry`; its writer builds it and `History.note`s it; readers match on the class.
Then regenerate the schemas (`python -m acp_agent.schemas`).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, NamedTuple

from pydantic import NonNegativeInt

from acp_agent.tools.base import PlanEntry
from acp_agent.turn.journal.api_blocks import Block, Message, ResultBlock
from acp_agent.turn.journal.journaled import journaled
from acp_agent.turn.journal.shown_calls import ShownDiff, ShownLink, ShownLocation, ToolCallShown
from acp_agent.turn.journal.workspace_entries import (
    ChangesEntry,
    CheckpointEntry,
    FileChange,
    FileImage,
    FileState,
    RewindEntry,
    RewoundEntry,
    RootTree,
)

__all__ = [
    "ENTRY_CLASSES",
    "JOURNAL_VERSION",
    "AssistantEntry",
    "ChangesEntry",
    "CheckpointEntry",
    "ClearedResult",
    "ClearingEntry",
    "CompactionEntry",
    "EffortEntry",
    "Entry",
    "FileChange",
    "FileImage",
    "FileState",
    "LoopEntry",
    "MetaEntry",
    "ModeEntry",
    "ModelEntry",
    "NoticeEntry",
    "PlanChangedEntry",
    "PromptEntry",
    "RewindEntry",
    "RewoundEntry",
    "RollbackEntry",
    "RootTree",
    "RootsEntry",
    "ShownCallEntry",
    "ShownDiff",
    "ShownLink",
    "ShownLocation",
    "SteeringEntry",
    "StyleEntry",
    "TitleEntry",
    "ToolCallShown",
    "ToolResultEntry",
    "ToolStartedEntry",
    "TurnEntry",
    "UserEntry",
    "WebEntry",
]


JOURNAL_VERSION = 1
"""The header's `version`: the format as this module defines it."""


@journaled
class MetaEntry:
    """The header, first line of every journal: which session, rooted where (its cwd and the
    client's additional roots), since when."""

    version: int
    session_id: str
    cwd: str
    created_at: str
    additional_directories: tuple[str, ...] = ()
    type: Literal["meta"] = "meta"


@journaled
class RootsEntry:
    """The additional roots a session/load or session/resume gave, where they differ from before."""

    directories: tuple[str, ...]
    type: Literal["roots"] = "roots"


@journaled
class TitleEntry:
    """The user renamed the session (session/set_title): its title from now on."""

    title: str
    type: Literal["title"] = "title"


@journaled
class PromptEntry:
    """A user prompt: `blocks` as the model got them, `prompt` as the editor sent them (replayed,
    as the user message `message_id`: `_session/rewind` may name a prompt by it)."""

    blocks: list[Block]
    prompt: list[dict[str, Any]] = field(default_factory=list)
    message_id: str | None = None
    type: Literal["prompt"] = "prompt"


@journaled
class SteeringEntry:
    """A message the user sent while a turn ran (`_session/steering`), as it joined the history:
    `blocks` as the model got them, after the tool results they followed; `prompt` as the editor
    sent them (replayed as the user's message). Part of the running turn, never a prompt of its own."""

    blocks: list[Block]
    prompt: list[dict[str, Any]] = field(default_factory=list)
    type: Literal["steering"] = "steering"


@journaled
class UserEntry:
    """User blocks the agent added: a strategy's feedback, or the results of a history repair."""

    blocks: list[Block]
    type: Literal["user"] = "user"


@journaled
class AssistantEntry:
    """A finished (or partial) assistant reply, with its thinking and tool_use blocks."""

    blocks: list[Block]
    type: Literal["assistant"] = "assistant"


@journaled
class ToolStartedEntry:
    """A call with side effects began running: after a crash the model hears it may have run."""

    tool_use_id: str
    type: Literal["tool_started"] = "tool_started"


@journaled
class ToolResultEntry:
    """A tool call's result for the model (`block`) and for the editor (`shown`)."""

    block: ResultBlock
    shown: ToolCallShown = field(default_factory=ToolCallShown)
    type: Literal["tool_result"] = "tool_result"


@journaled
class ShownCallEntry:
    """A tool call made for the user, not the model (a command file's `` !`cmd` ``): its output went
    into the prompt, so it is never a message; session/load shows it as the live turn did."""

    tool_use_id: str
    name: str
    raw_input: dict[str, Any]
    shown: ToolCallShown
    type: Literal["shown_call"] = "shown_call"


@journaled
class TurnEntry:
    """A turn's record (`schemas/turn-record.schema.json`), kept as written: a prompt turn's, and a
    command's that asked the model (`/compact`). Only `/cost` reads it back, after session/load
    (`session/usage.py`); session/load's replay shows nothing of it."""

    record: dict[str, Any]
    type: Literal["turn"] = "turn"


@journaled
class NoticeEntry:
    """A note for the user only (a limit, a command's answer): replayed, never in the history.

    `title` is set for a notice proper (a limit, a warning): a client that shows ACP notices is
    not sent it again on replay (notices are live events), any other gets `text` as a message.
    """

    text: str
    title: str | None = None
    type: Literal["notice"] = "notice"


@journaled
class PlanChangedEntry:
    """The whole plan as it stood (replay shows the last one)."""

    entries: tuple[PlanEntry, ...]
    type: Literal["plan"] = "plan"


@journaled
class ModeEntry:
    """A permission mode change (a mode that skips questions is never restored from disk)."""

    mode_id: str
    type: Literal["mode"] = "mode"


@journaled
class ModelEntry:
    """A model switch."""

    model_id: str
    type: Literal["model"] = "model"


@journaled
class EffortEntry:
    """An effort change; None is the model's own default."""

    effort: str | None
    type: Literal["effort"] = "effort"


@journaled
class LoopEntry:
    """A loop change: its id only (a verify command is never taken from disk: the configuration
    or the load's `_meta` supplies it)."""

    loop: str
    type: Literal["loop"] = "loop"


@journaled
class WebEntry:
    """The web tools switched on or off (the `web` config option)."""

    enabled: bool
    type: Literal["web"] = "web"


@journaled
class StyleEntry:
    """The output style chosen (the `output_style` config option), by name."""

    style: str
    type: Literal["output_style"] = "output_style"


@journaled
class CompactionEntry:
    """The whole history rewritten (a summary, or thinking dropped on a model switch).

    `compaction_id` is set for a summary (`turn/context/compaction.py`), whose text heads `messages`:
    session/load shows it again as that compaction.
    """

    messages: list[Message]
    compaction_id: str | None = None
    type: Literal["compaction"] = "compaction"


class ClearedResult(NamedTuple):
    """One old tool result left out of the requests: its call, the note sent in its place, and
    the size of what it held (characters of text, images)."""

    tool_use_id: str
    note: str
    chars: int
    images: int


@journaled
class ClearingEntry:
    """Old tool results left out of what the session sends from here on (`turn/context/clearing.py`);
    the results stay in the journal and the history. The thinking blocks of messages `first`+1
    up to `messages` (the history's length then) go from the requests too: they were signed to
    the prefix that changed."""

    results: tuple[ClearedResult, ...]
    first: NonNegativeInt
    messages: NonNegativeInt
    type: Literal["clearing"] = "clearing"


@journaled
class RollbackEntry:
    """A refused prompt and what followed it dropped: the history back to this mark."""

    messages: NonNegativeInt
    blocks: NonNegativeInt
    type: Literal["rollback"] = "rollback"


Entry = (
    MetaEntry
    | PromptEntry
    | UserEntry
    | SteeringEntry
    | AssistantEntry
    | ToolStartedEntry
    | ToolResultEntry
    | ShownCallEntry
    | TurnEntry
    | NoticeEntry
    | PlanChangedEntry
    | ModeEntry
    | ModelEntry
    | EffortEntry
    | LoopEntry
    | WebEntry
    | StyleEntry
    | CompactionEntry
    | RollbackEntry
    | RootsEntry
    | TitleEntry
    | ClearingEntry
    | RewindEntry
    | RewoundEntry
    | CheckpointEntry
    | ChangesEntry
)
"""Every kind of journal entry."""

ENTRY_CLASSES: dict[str, type[Entry]] = {
    cls.__dataclass_fields__["type"].default: cls for cls in Entry.__args__
}
"""Entry kind (its `type`) → class."""
