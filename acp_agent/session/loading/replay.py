"""session/load: the journal's entries → the `session/update`s that show the conversation again.

User prompts (and the messages that steered a turn), agent text and thinking, tool calls with their
final status (their images from the journaled result block), the calls a command file's `!` lines
made, notices, compactions (for a client that shows them) and the last plan, in the order they
happened (the restored mode follows them: `SessionOptions.restore`). A tool call is shown as the
live turn showed it: from the `ToolCallShown` journaled with its result, through the builder the
live relay uses (`session/editor/updates.py`). A tool call that a crash left without a result ends
`failed`, with what the model is told about it. A web search or fetch (a server tool's blocks in
the reply) is shown from those blocks, as the live turn showed it (`turn/server_calls.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from acp_agent.session.editor.updates import (
    chunk,
    compaction_update,
    plan_update,
    tool_call,
    tool_call_finished,
    user_chunks,
)
from acp_agent.tools.base import PlanEntry
from acp_agent.turn.context.compaction import summary_of
from acp_agent.turn.context.history import INTERRUPTED, INTERRUPTED_RUNNING, result_text
from acp_agent.turn.events import ToolCallFinished, ToolCallStarted, ToolCallUpdated
from acp_agent.turn.journal.entries import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    NoticeEntry,
    PlanChangedEntry,
    PromptEntry,
    ShownCallEntry,
    SteeringEntry,
    ToolCallShown,
    ToolResultEntry,
    ToolStartedEntry,
    TurnEntry,
    UserEntry,
)
from acp_agent.turn.server_calls import ServerCalls, is_server_block

__all__ = ["replay_updates"]


def replay_updates(
    entries: Iterable[Entry], *, notices: bool = False, compaction: bool = False
) -> list[dict[str, Any]]:
    """The updates, in order; the last plan comes at the end.

    For a client that shows ACP notices (`notices`), a notice proper is not sent again: notices
    are live events, not history. For one that shows compactions (`compaction`), each summary
    is shown where it happened, as a completed compaction with its summary.
    """
    entries = list(entries)
    updates: list[dict[str, Any]] = []
    plan: Sequence[PlanEntry] | None = None
    announced: set[str] = set()
    # The tool_use comes before its result in the journal; the title and kind are in the result.
    shown_of = {e.block["tool_use_id"]: e.shown for e in entries if isinstance(e, ToolResultEntry)}
    # A call that began before a crash has a tool_started entry and no result: it is shown.
    started = {e.tool_use_id for e in entries if isinstance(e, ToolStartedEntry)}
    shown_of.update({call_id: ToolCallShown() for call_id in started if call_id not in shown_of})
    finished: set[str] = set()
    server = ServerCalls()  # web searches and fetches: shown from the reply's own blocks
    for entry in entries:
        if isinstance(entry, PromptEntry | SteeringEntry):  # the user's words, sent with or in a turn
            message_id = entry.message_id if isinstance(entry, PromptEntry) else None
            updates.extend(user_chunks(entry.prompt, message_id or str(uuid.uuid4())))
        elif isinstance(entry, AssistantEntry):
            updates.extend(_assistant(entry.blocks, announced, shown_of, server, finished))
        elif isinstance(entry, ToolResultEntry | UserEntry):  # a user entry holds a repair's results
            results = [entry.block] if isinstance(entry, ToolResultEntry) else entry.blocks
            shown = entry.shown if isinstance(entry, ToolResultEntry) else ToolCallShown()
            for block in results:
                if block["type"] == "tool_result":
                    updates.extend(_tool_result(block, shown, announced))
                    finished.add(block["tool_use_id"])
        elif isinstance(entry, ShownCallEntry) and not entry.shown.hidden:  # a command's `!` line
            shown = entry.shown
            updates.append(_announce(entry.tool_use_id, shown, entry.name, entry.raw_input))
            updates.append(tool_call_finished(entry.tool_use_id, shown))
            finished.add(entry.tool_use_id)
        elif isinstance(entry, NoticeEntry):
            if not (notices and entry.title):
                updates.append(chunk("agent_message_chunk", entry.text, str(uuid.uuid4())))
        elif isinstance(entry, CompactionEntry) and compaction and entry.compaction_id:
            summary = summary_of(entry.messages)
            updates.append(compaction_update(entry.compaction_id, "completed", summary=summary))
        elif isinstance(entry, PlanChangedEntry):
            plan = entry.entries
        elif isinstance(entry, TurnEntry):  # the turn ended: its open server calls were closed
            updates.extend(_server_updates(server.close(), finished))
    unfinished = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
    updates.extend(
        tool_call_finished(
            call_id,
            ToolCallShown(status="failed", text=INTERRUPTED_RUNNING if call_id in started else INTERRUPTED),
        )
        for call_id in unfinished
        if call_id not in finished
    )
    if plan is not None:
        updates.append(plan_update(plan))
    return updates


def _assistant(
    blocks: list[dict[str, Any]],
    announced: set[str],
    shown_of: dict[str, ToolCallShown],
    server: ServerCalls,
    finished: set[str],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    text_id, thought_id = str(uuid.uuid4()), str(uuid.uuid4())
    for block in blocks:
        kind = block["type"]
        if is_server_block(kind):
            out.extend(_server_updates(server.events(block), finished))
        elif kind == "text" and block["text"]:
            out.append(chunk("agent_message_chunk", block["text"], text_id))
        elif kind == "thinking" and block["thinking"]:
            out.append(chunk("agent_thought_chunk", block["thinking"], thought_id))
        elif kind == "tool_use" and block["id"] not in announced:
            shown = shown_of.get(block["id"])
            if shown is None or shown.hidden:
                continue  # never shown live: skipped by a limit, cut off, or cut short by a crash
            announced.add(block["id"])
            out.append(_announce(block["id"], shown, block["name"], block.get("input")))
    return out


def _server_updates(
    events: Iterable[ToolCallStarted | ToolCallUpdated | ToolCallFinished], finished: set[str]
) -> list[dict[str, Any]]:
    """A server call's updates as the live relay sent them (its `in_progress` step aside)."""
    out = []
    for event in events:
        if isinstance(event, ToolCallStarted):
            out.append(tool_call(event.call_id, event.title, event.kind, event.raw_input, event.name))
        elif isinstance(event, ToolCallFinished):
            finished.add(event.call_id)
            out.append(tool_call_finished(event.call_id, event.shown))
    return out


def _announce(call_id: str, shown: ToolCallShown, name: str | None, raw_input: Any) -> dict[str, Any]:
    """The `tool_call` as the live turn announced it."""
    raw = raw_input if isinstance(raw_input, dict) else shown.raw_input or {}
    return tool_call(call_id, shown.title or name or "tool", shown.kind or "other", raw, name)


def _tool_result(block: dict[str, Any], shown: ToolCallShown, announced: set[str]) -> list[dict[str, Any]]:
    """The call's final update, as the live turn sent it; a call journaled without its status or
    text (a cancelled one, an older journal) is completed from its result block."""
    call_id = block["tool_use_id"]
    if shown.hidden:
        return []
    shown = replace(
        shown,
        status=shown.status or ("failed" if block.get("is_error") else "completed"),
        text=shown.text if shown.text is not None else result_text(block.get("content", "")),
    )
    content = block.get("content")
    update = tool_call_finished(call_id, shown, media=content if isinstance(content, list) else ())
    if call_id in announced:
        return [update]
    announced.add(call_id)  # a result whose tool_use was lost: announce it first
    return [_announce(call_id, shown, None, None), update]
