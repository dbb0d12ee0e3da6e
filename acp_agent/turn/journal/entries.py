"""The journal's vocabulary: every kind of entry a session journal holds, one typed value each.

The journal (`session/journal/store.py`) is the one durable format: `turn/` writes entries through
`History.note`, `session/` writes its own (the header, notices, plans, option changes) and reads
them all back for session/load. Each kind is a frozen dataclass here, built directly by its writer
(no validation: the agent's own values) and validated once when a line is read (a pydantic
TypeAdapter over these classes: a boundary crossed once per entry, docs/decisions.md D4).
`lines.py` turns an entry into its line and back; `schemas/journal-entry.schema.json` is
generated from these classes.

On disk an entry is one JSON object: `type` first, then its fields in camelCase, in the order
declared here. A field whose default is None, False, () or 0 is left out at that default, and a
reader fills it back in, so journals written before a field existed still load.

To add an entry kind: a dataclass here with `type: Literal["<kind>"] = "<kind>"` as its last
field, added to `Entry`; its writer builds it and `History.note`s it; readers match on the class.
To add a kind of tool-call content (an image, a server tool's result): a field on `ToolCallShown`
with an empty default, filled in `ToolCallShown.of_result`, and rendered to ACP content in
`session/editor/updates.py:tool_content`; the live update, the replay and the preview then all show it.
Then regenerate the schemas (`python -m acp_agent.schemas`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple, TypeVar, dataclass_transform

from pydantic import AfterValidator, ConfigDict, NonNegativeInt, WithJsonSchema
from pydantic.alias_generators import to_camel

from acp_agent.tools.base import PlanEntry, Preview, ToolResult

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


# ── the Messages API's blocks and messages, as an entry carries them ────────────────────────────
# Checked only as far as the history relies on them, and kept as plain dicts: they go back to the
# API unchanged. Their JSON schema (for `schemas/journal-entry.schema.json`) says as much, no more.


def _block(block: dict[str, Any]) -> dict[str, Any]:
    """A Messages API content block, checked only as far as the history relies on it."""
    kind = block.get("type")
    if not isinstance(kind, str):
        raise ValueError("a block without a type")
    if kind == "tool_use" and not (isinstance(block.get("id"), str) and isinstance(block.get("name"), str)):
        raise ValueError("a tool_use without an id and a name")
    if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
        raise ValueError("a tool_result without a tool_use_id")
    if kind in {"text", "thinking"} and not isinstance(block.get(kind), str):
        raise ValueError(f"a {kind} block without its text")
    return block


Block = Annotated[
    dict[str, Any],
    AfterValidator(_block),
    WithJsonSchema({"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}),
]
"""A content block as the Messages API takes it (kept as a plain dict: it goes back unchanged)."""


def _message(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") not in {"user", "assistant"}:
        raise ValueError("a message whose role is not user or assistant")
    content = message.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise ValueError("a message whose content is not a list of blocks")
    for block in content:
        _block(block)
    return message


Message = Annotated[
    dict[str, Any],
    AfterValidator(_message),
    WithJsonSchema(
        {
            "type": "object",
            "required": ["role", "content"],
            "properties": {"role": {"enum": ["user", "assistant"]}, "content": {"type": "array"}},
        }
    ),
]


def _result_block(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") != "tool_result":
        raise ValueError("not a tool_result block")
    return block


ResultBlock = Annotated[Block, AfterValidator(_result_block)]
"""A `tool_result` block."""

JOURNAL_VERSION = 1
"""The header's `version`: the format as this module defines it."""
_CONFIG = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _typed(cls: type[_T]) -> type[_T]:
    """A frozen, slotted dataclass whose JSON keys the reader takes in camelCase."""
    cls.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    return dataclass(frozen=True, slots=True)(cls)


class ShownLocation(NamedTuple):
    """A place the editor can follow: an absolute path and a 1-based line (None: the whole file)."""

    path: str
    line: int | None


class ShownDiff(NamedTuple):
    """A file change for the editor: `old_text` None means a new file."""

    path: str
    old_text: str | None
    new_text: str


class ShownLink(NamedTuple):
    """A page a call found or read (a web search's result, a fetched URL), for the editor to open."""

    uri: str
    title: str


@_typed
class ToolCallShown:
    """What the editor is shown of a tool call: its final update, its replay and its preview.

    One value, journaled with the call's result (`ToolResultEntry.shown`) and carried by the live
    `ToolCallFinished` event, so the live and the replayed update come from the same data.
    `hidden`: the call was never shown live (skipped by a limit), so a replay skips it too. None
    fields are unknown (an older or a cancelled call): the replay falls back to the result block.
    """

    title: str | None = None
    kind: str | None = None
    status: str | None = None
    raw_input: dict[str, Any] | None = None
    text: str | None = None
    locations: tuple[ShownLocation, ...] = ()
    diffs: tuple[ShownDiff, ...] = ()
    raw_output: dict[str, Any] | None = None
    hidden: bool = False
    links: tuple[ShownLink, ...] = ()
    """Pages the call found or read (a server tool's results), shown as `resource_link`s."""
    images: int = 0
    """How many images the call's result gave the model, shown too: they are the image blocks of
    the result's `tool_result` (journaled there once, never twice)."""
    steps: tuple[str, ...] = ()
    """What a subagent did, one short line per tool call it made, shown before its answer."""

    @classmethod
    def of_result(cls, title: str, kind: str, raw_input: dict[str, Any], result: ToolResult) -> ToolCallShown:
        """A finished call as its tool's result shows it."""
        return cls(
            title=title,
            kind=kind,
            status="failed" if result.is_error else "completed",
            raw_input=raw_input,
            text=result.text,
            locations=tuple(ShownLocation(str(path), line) for path, line in result.locations),
            diffs=tuple(ShownDiff(str(d.path), d.old_text, d.new_text) for d in result.diffs),
            raw_output=result.raw_output,
            images=sum(1 for block in result.media if block.get("type") == "image"),
            steps=result.steps,
        )

    @classmethod
    def of_preview(cls, preview: Preview) -> ToolCallShown:
        """What a call would do, shown with its permission question (`text`: None when empty)."""
        return cls(
            text=preview.text or None,
            locations=tuple(ShownLocation(str(path), line) for path, line in preview.locations),
            diffs=tuple(ShownDiff(str(d.path), d.old_text, d.new_text) for d in preview.diffs),
        )


@_typed
class MetaEntry:
    """The header, first line of every journal: which session, rooted where (its cwd and the
    client's additional roots), since when."""

    version: int
    session_id: str
    cwd: str
    created_at: str
    additional_directories: tuple[str, ...] = ()
    type: Literal["meta"] = "meta"


@_typed
class RootsEntry:
    """The additional roots a session/load or session/resume gave, where they differ from before."""

    directories: tuple[str, ...]
    type: Literal["roots"] = "roots"


@_typed
class TitleEntry:
    """The user renamed the session (session/set_title): its title from now on."""

    title: str
    type: Literal["title"] = "title"


@_typed
class PromptEntry:
    """A user prompt: `blocks` as the model got them, `prompt` as the editor sent them (replayed,
    as the user message `message_id`: `_session/rewind` may name a prompt by it)."""

    blocks: list[Block]
    prompt: list[dict[str, Any]] = field(default_factory=list)
    message_id: str | None = None
    type: Literal["prompt"] = "prompt"


@_typed
class SteeringEntry:
    """A message the user sent while a turn ran (`_session/steering`), as it joined the history:
    `blocks` as the model got them, after the tool results they followed; `prompt` as the editor
    sent them (replayed as the user's message). Part of the running turn, never a prompt of its own."""

    blocks: list[Block]
    prompt: list[dict[str, Any]] = field(default_factory=list)
    type: Literal["steering"] = "steering"


@_typed
class UserEntry:
    """User blocks the agent added: a strategy's feedback, or the results of a history repair."""

    blocks: list[Block]
    type: Literal["user"] = "user"


@_typed
class AssistantEntry:
    """A finished (or partial) assistant reply, with its thinking and tool_use blocks."""

    blocks: list[Block]
    type: Literal["assistant"] = "assistant"


@_typed
class ToolStartedEntry:
    """A call with side effects began running: after a crash the model hears it may have run."""

    tool_use_id: str
    type: Literal["tool_started"] = "tool_started"


@_typed
class ToolResultEntry:
    """A tool call's result for the model (`block`) and for the editor (`shown`)."""

    block: ResultBlock
    shown: ToolCallShown = field(default_factory=ToolCallShown)
    type: Literal["tool_result"] = "tool_result"


@_typed
class ShownCallEntry:
    """A tool call made for the user, not the model (a command file's `` !`cmd` ``): its output went
    into the prompt, so it is never a message; session/load shows it as the live turn did."""

    tool_use_id: str
    name: str
    raw_input: dict[str, Any]
    shown: ToolCallShown
    type: Literal["shown_call"] = "shown_call"


@_typed
class TurnEntry:
    """A turn's record (`schemas/turn-record.schema.json`), kept as written: never read back."""

    record: dict[str, Any]
    type: Literal["turn"] = "turn"


@_typed
class NoticeEntry:
    """A note for the user only (a limit, a command's answer): replayed, never in the history.

    `title` is set for a notice proper (a limit, a warning): a client that shows ACP notices is
    not sent it again on replay (notices are live events), any other gets `text` as a message.
    """

    text: str
    title: str | None = None
    type: Literal["notice"] = "notice"


@_typed
class PlanChangedEntry:
    """The whole plan as it stood (replay shows the last one)."""

    entries: tuple[PlanEntry, ...]
    type: Literal["plan"] = "plan"


@_typed
class ModeEntry:
    """A permission mode change (a mode that skips questions is never restored from disk)."""

    mode_id: str
    type: Literal["mode"] = "mode"


@_typed
class ModelEntry:
    """A model switch."""

    model_id: str
    type: Literal["model"] = "model"


@_typed
class EffortEntry:
    """An effort change; None is the model's own default."""

    effort: str | None
    type: Literal["effort"] = "effort"


@_typed
class LoopEntry:
    """A loop change: its id only (a verify command is never taken from disk: the configuration
    or the load's `_meta` supplies it)."""

    loop: str
    type: Literal["loop"] = "loop"


@_typed
class WebEntry:
    """The web tools switched on or off (the `web` config option)."""

    enabled: bool
    type: Literal["web"] = "web"


@_typed
class StyleEntry:
    """The output style chosen (the `output_style` config option), by name."""

    style: str
    type: Literal["output_style"] = "output_style"


@_typed
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


@_typed
class ClearingEntry:
    """Old tool results left out of what the session sends from here on (`turn/context/clearing.py`);
    the results stay in the journal and the history. The thinking blocks of messages `first`+1
    up to `messages` (the history's length then) go from the requests too: they were signed to
    the prefix that changed."""

    results: tuple[ClearedResult, ...]
    first: NonNegativeInt
    messages: NonNegativeInt
    type: Literal["clearing"] = "clearing"


@_typed
class RollbackEntry:
    """A refused prompt and what followed it dropped: the history back to this mark."""

    messages: NonNegativeInt
    blocks: NonNegativeInt
    type: Literal["rollback"] = "rollback"


class FileState(NamedTuple):
    """A file's content as a checkpoint keeps it: its git blob id (the SHA-1 of `blob <size>\\0`
    and the bytes, whether git stored it or the agent's own store did) and its git mode
    (`100644`, `100755`, or `120000` for a symlink, whose content is its target)."""

    blob: str
    mode: str


class FileChange(NamedTuple):
    """One file changed: its absolute path, what it held before and after (None: it did not exist)."""

    path: str
    before: FileState | None
    after: FileState | None


class FileImage(NamedTuple):
    """A file as it was before an edit tool wrote it (`state` None: it did not exist)."""

    path: str
    state: FileState | None


class RootTree(NamedTuple):
    """A session root's snapshot: its tree in the session's shadow git store."""

    root: str
    tree: str


@_typed
class CheckpointEntry:
    """What a turn's changes are measured from, journaled before the turn first changes anything:
    the snapshot of each root (`trees`, `session/journal/shadow_git.py`) before its first change,
    and the before-image of each file an edit tool is about to write (`images`), kept in the
    session's checkpoint store. A turn may journal several: the trees once, an image per file."""

    trees: tuple[RootTree, ...] = ()
    images: tuple[FileImage, ...] = ()
    type: Literal["checkpoint"] = "checkpoint"


@_typed
class ChangesEntry:
    """What a turn changed in the workspace, journaled when it ends: each file with what it held
    before the turn and after it, and the roots' snapshots after it. `prompt` names the turn's
    prompt as a `RewindEntry` does (a turn a crash ended is closed later, by the next turn or
    rewind)."""

    prompt: NonNegativeInt
    changes: tuple[FileChange, ...] = ()
    trees: tuple[RootTree, ...] = ()
    """The roots' snapshots after the turn (what a later rewind may find the turn left)."""
    type: Literal["changes"] = "changes"


@_typed
class RewindEntry:
    """The session went back to before a prompt (`/rewind`, `_session/rewind`).

    `prompt` names the prompt by its place among every `prompt` entry of the journal (0 for the
    first one ever written, rewound or not), so it still names the same one after earlier rewinds.
    With `scope` "all" or "chat", every entry from that prompt on is left out of the conversation
    (`session/journal/timeline.py`); with "all" or "files", `restore` lists the files put back,
    each `before` what the turns left there and `after` what it held before the prompt. The entry is
    written before any file is touched: a crash mid-restore is finished by the next load.
    `conflicts` are files someone else changed since, left as they are.
    """

    prompt: NonNegativeInt
    scope: Literal["all", "chat", "files"] = "all"
    restore: tuple[FileChange, ...] = ()
    conflicts: tuple[str, ...] = ()
    type: Literal["rewind"] = "rewind"


@_typed
class RewoundEntry:
    """A rewind's files are back; `conflicts` are those found changed by someone else while it ran
    (or before a crash's rewind was finished), left as they were."""

    conflicts: tuple[str, ...] = ()
    type: Literal["rewound"] = "rewound"


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
