"""The conversation as the Messages API sees it, kept valid at every turn boundary.

Valid means: roles alternate, and every assistant `tool_use` is answered by a `tool_result` in the
next user message. A prompt that follows trailing tool results is merged into that user message
(docs/decisions.md C2.7), a refusal drops only that prompt's own blocks, and `repair()` answers any
dangling tool_use with an error result.

The history is also the text boundary: every block that enters it passes through `shown_value`
(as every journal line does, `turn/journal/lines.py`), so no lone surrogate (a non-UTF-8 file name, a
client's `"\\ud800"`) can make a later request unencodable. What it journals are the typed entries
of `turn/journal/entries.py`.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from acp_agent.errors import JournalFailed
from acp_agent.tools.shown import shown_value
from acp_agent.turn.context.cleared import ClearedResults
from acp_agent.turn.journal.entries import (
    AssistantEntry,
    ClearingEntry,
    CompactionEntry,
    Entry,
    PromptEntry,
    RollbackEntry,
    SteeringEntry,
    ToolResultEntry,
    ToolStartedEntry,
    UserEntry,
)

__all__ = [
    "INTERRUPTED",
    "INTERRUPTED_RUNNING",
    "THINKING_BLOCKS",
    "History",
    "JournalWriter",
    "Mark",
    "add_note",
    "result_text",
    "tool_result",
    "with_user_block",
    "without_thinking",
]

Message = dict[str, Any]
Block = dict[str, Any]

INTERRUPTED = "not executed: the turn was interrupted before this tool ran"
INTERRUPTED_RUNNING = "interrupted while running; it may have had effects"
THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
REASONING_OMITTED = "[earlier reasoning omitted]"


def without_thinking(messages: list[Message]) -> list[Message]:
    """The messages with every thinking block dropped (copies where something changed).

    For a rewritten history: the 5.5 models refuse a thinking block replayed behind a changed
    prefix. An assistant message of thinking alone keeps a short text, so roles still alternate.
    """
    out = []
    for message in messages:
        blocks = message["content"]
        if message["role"] == "assistant" and any(b.get("type") in THINKING_BLOCKS for b in blocks):
            kept = [b for b in blocks if b.get("type") not in THINKING_BLOCKS]
            message = {**message, "content": kept or [{"type": "text", "text": REASONING_OMITTED}]}
        out.append(message)
    return out


def with_user_block(messages: list[Message], block: Block) -> list[Message]:
    """A copy of `messages` with `block` last in a user message (the history is left as it is).

    An extra request on the session's own prefix (a summary, a judge) asks this way: everything
    before the new block is byte for byte what the session sent, so it reads from the prompt cache
    and replays thinking blocks behind an unchanged prefix.
    """
    if messages and messages[-1]["role"] == "user":
        last = messages[-1]
        return [*messages[:-1], {**last, "content": [*last["content"], block]}]
    return [*messages, {"role": "user", "content": [block]}]


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False, media: Iterable[Block] = ()) -> Block:
    """A tool_result block; with `media` (image blocks) its content is a list: the text, then them."""
    extra = list(media)
    content: str | list[Block] = [{"type": "text", "text": text}, *extra] if extra else text
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def _interrupted(tool_use_id: str, reason: str, started: Collection[str]) -> Block:
    return tool_result(tool_use_id, INTERRUPTED_RUNNING if tool_use_id in started else reason, is_error=True)


def _answer(reply: Message, uses: list[str], reason: str, started: Collection[str]) -> tuple[int, bool]:
    """Put a result for each of `uses` first in `reply`, in order, adding the missing ones;
    returns how many were added and whether `reply` changed."""
    content = reply["content"]
    results = {b["tool_use_id"]: b for b in content if b.get("type") == "tool_result"}
    ordered = [results.get(use_id) or _interrupted(use_id, reason, started) for use_id in uses]
    rest = [b for b in content if b.get("type") != "tool_result"]
    changed = content[: len(ordered)] != ordered or len(content) != len(ordered) + len(rest)
    if changed:
        content[:] = ordered + rest
    return sum(use_id not in results for use_id in uses), changed


def _drop_orphans(message: Message, before: Message | None) -> bool:
    """Drop tool_results that answer no tool_use of the message before (a torn journal);
    returns whether any was dropped."""
    asked = {b.get("id") for b in before["content"]} if before and before["role"] == "assistant" else set()
    if not any(
        b.get("type") == "tool_result" and b.get("tool_use_id") not in asked for b in message["content"]
    ):
        return False
    message["content"][:] = [
        b for b in message["content"] if b.get("type") != "tool_result" or b.get("tool_use_id") in asked
    ]
    return True


def _merge_at(messages: list[Message], index: int) -> None:
    """After a removal at `index`, merge the two messages that now meet there if roles repeat."""
    if 0 < index < len(messages) and messages[index - 1]["role"] == messages[index]["role"]:
        messages[index - 1]["content"].extend(messages.pop(index)["content"])


def result_text(content: Any) -> str:
    """A tool_result's content as text: a list's text blocks, with `[image]` for each image."""
    if not isinstance(content, list):
        return str(content)
    return "\n".join(
        b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]"
        for b in content
        if isinstance(b, dict)
    )


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
            content[:leading] = sorted(
                content[:leading], key=lambda b: order.get(b.get("tool_use_id"), len(order))
            )


class JournalWriter(Protocol):
    """Writes one entry; with `sync`, it (and every entry before it) is on disk when this returns."""

    def __call__(self, entry: Entry, *, sync: bool = True) -> None: ...


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a prompt began: message count, and block count of a user message it was merged into."""

    messages: int
    blocks: int


class History:
    """Messages in Anthropic's input shape, owned by one session.

    With a `journal`, every change is also written as an entry (prompt, user, assistant, rollback,
    compaction, clearing; the tool batch adds tool_started and tool_result) from which
    `History.replay` rebuilds the same messages after a restart. `messages` stay whole; a request
    carries `for_request()`, which leaves out the old results `cleared` holds (`clearing.py`).
    """

    def __init__(self, messages: list[Message] | None = None, journal: JournalWriter | None = None) -> None:
        self.messages: list[Message] = messages or []
        self.journal = journal
        self.cleared = ClearedResults()

    def for_request(self) -> list[Message]:
        """The messages as a request carries them: cleared results as their notes (`cleared.py`)."""
        return self.cleared.view(self.messages)

    def clear_results(self, entry: ClearingEntry) -> None:
        """Leave these old results out of every later request (journaled; the history keeps them)."""
        self.note(entry)
        self.cleared.apply(entry, self.messages)

    def note(self, entry: Entry, *, sync: bool = True) -> None:
        """Write an entry to the journal (if any), before the change is reported as done.

        `sync=False` skips the fsync for an entry nothing reports as kept: the next synced entry
        (a tool result, the turn record) makes it durable too, and a killed process loses nothing
        written (only a crash of the machine could).

        Raises:
            JournalFailed: the entry is not kept (a full disk); the turn ends with that error.
        """
        if self.journal is not None:
            try:
                self.journal(entry, sync=sync)
            except OSError as exc:
                raise JournalFailed(str(exc)) from exc

    @classmethod
    def replay(cls, entries: Iterable[Entry]) -> History:
        """Rebuild the messages from journal entries, then repair them: a tool_use left without a
        result anywhere (a kill during a batch) is answered, a started one as interrupted."""
        history = cls()
        started: set[str] = set()
        for entry in entries:
            if isinstance(entry, ToolStartedEntry):
                started.add(entry.tool_use_id)
            elif isinstance(entry, PromptEntry | UserEntry | SteeringEntry):
                history.add_user(list(entry.blocks), journal=False)
            elif isinstance(entry, ToolResultEntry):
                history.add_user([entry.block], journal=False)
            elif isinstance(entry, AssistantEntry):
                history.add_assistant(list(entry.blocks), journal=False)
            elif isinstance(entry, CompactionEntry):
                history.messages = shown_value([{**m, "content": list(m["content"])} for m in entry.messages])
            elif isinstance(entry, ClearingEntry):
                history.cleared.apply(entry, history.messages)
            elif isinstance(entry, RollbackEntry):  # its mark counted the repaired history the session had
                history.repair(started=started)
                history.rollback(Mark(entry.messages, entry.blocks), journal=False)
        _results_in_call_order(history.messages)
        history.repair(started=started)
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
            self.note(RollbackEntry(mark.messages, mark.blocks))
        del self.messages[mark.messages :]
        if mark.blocks and self.messages:
            del self.messages[-1]["content"][mark.blocks :]

    def add_prompt(self, blocks: list[Block], shown: list[dict[str, Any]] | None = None) -> None:
        """A new user prompt; `shown` is what the editor sent, replayed to it on session/load."""
        blocks = shown_value(blocks)
        self.note(PromptEntry(blocks, shown_value(shown or []), str(uuid.uuid4())))
        self.add_user(blocks, journal=False)

    def add_steering(self, blocks: list[Block], shown: list[dict[str, Any]]) -> None:
        """A message the user sent while the turn ran: user text after the pending tool results
        (merged into their message), journaled as such (`turn/steering.py`)."""
        blocks = shown_value(blocks)
        self.note(SteeringEntry(blocks, shown_value(shown)))
        self.add_user(blocks, journal=False)

    def add_user(self, blocks: list[Block], *, journal: bool = True) -> None:
        """Append user blocks, merging into a trailing user message (after its tool_results)."""
        if not blocks:
            return
        blocks = shown_value(blocks)
        if journal:
            self.note(UserEntry(blocks))
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})

    def add_assistant(self, blocks: list[Block], *, journal: bool = True) -> None:
        """Append a finished (or partial) assistant reply; empty replies leave no trace."""
        blocks = shown_value([b for b in blocks if not (b.get("type") == "text" and not b.get("text"))])
        if not blocks:
            return
        if journal:  # streamed already; the tool results or the turn record that follow sync it
            self.note(AssistantEntry(blocks), sync=False)
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "assistant", "content": blocks})

    def thinking_blocks(self) -> int:
        """How many thinking blocks the history holds."""
        return sum(
            1
            for m in self.messages
            if m["role"] == "assistant"
            for b in m["content"]
            if b.get("type") in THINKING_BLOCKS
        )

    def drop_thinking(self, reason: str) -> int:
        """Rewrite the history without its thinking blocks (journaled); returns how many went."""
        count = self.thinking_blocks()
        if count:
            self.replace_all(without_thinking(self.messages))
        return count

    def replace_all(self, messages: list[Message], *, compaction_id: str | None = None) -> None:
        """Put `messages` in place of the whole history (a compaction, named by its id), and
        journal them."""
        self.messages[:] = shown_value(messages)
        self.note(CompactionEntry(self.messages, compaction_id))

    def pending_tool_uses(self) -> list[Block]:
        """tool_use blocks of the last assistant message that have no tool_result yet."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return []
        return [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]

    def repair(self, reason: str = INTERRUPTED, *, started: Collection[str] = ()) -> int:
        """Make every tool_use answered in the next user message, results first; returns how many
        results were added.

        A dangling tool_use gets an error result: `reason`, or, for a call in `started` (it began
        running before a crash), INTERRUPTED_RUNNING. At the end of the history (a live turn)
        the results are journaled; anywhere else (a journal torn by a kill during a batch) the
        repair is redone by every replay, so the journal stays a record of what happened.
        """
        dangling = self.pending_tool_uses()
        if dangling:
            results = [_interrupted(b["id"], reason, started) for b in dangling]
            try:
                self.add_user(results)
            except JournalFailed:
                self.add_user(results, journal=False)  # valid in memory, whatever the disk says
                raise
            return len(dangling) + self._repair_inside(reason, started)
        return self._repair_inside(reason, started)

    def _repair_inside(self, reason: str, started: Collection[str]) -> int:
        added, changed = self._answer_inside(reason, started)
        if changed < len(self.messages) - 1:  # rewritten, not appended: later thinking is refused
            self.messages[changed:] = without_thinking(self.messages[changed:])
        return added

    def _answer_inside(self, reason: str, started: Collection[str]) -> tuple[int, int]:
        """Answer every tool_use in place; returns how many results were added and the index of
        the first message changed (the length of the history when none was)."""
        added = 0
        messages = self.messages
        changed = len(messages)
        index = 0
        while index < len(messages):
            message = messages[index]
            if message["role"] == "user":
                if _drop_orphans(message, messages[index - 1] if index else None):
                    changed = min(changed, index)
                if not message["content"]:
                    del messages[index]
                    _merge_at(messages, index)
                    changed = min(changed, index)
                    continue
            uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
            if message["role"] == "assistant" and uses:
                if index + 1 == len(messages) or messages[index + 1]["role"] != "user":
                    messages.insert(index + 1, {"role": "user", "content": []})
                    changed = min(changed, index + 1)
                count, reordered = _answer(messages[index + 1], uses, reason, started)
                added += count
                if reordered:
                    changed = min(changed, index + 1)
            index += 1
        return added, changed
