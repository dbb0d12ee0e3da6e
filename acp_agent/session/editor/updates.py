"""What the editor is shown, as ACP payloads: the one builder of tool calls, chunks and plans.

The live relay (`relay.py`), the replay of session/load (`session/loading/replay.py`) and the
permission question (`permissions.py`) build a tool call here, from the same typed value
(`turn/journal/shown_calls.py:ToolCallShown`, which the tool batch both journals and emits), so what
the editor shows live, after a reload and before an approval cannot drift apart. A new kind of
tool-call content is rendered in `tool_content`, and all three show it.

Built directly as dicts (no validation per update, docs/decisions.md D4); the tests validate every
one against the official schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from acp_agent.tools.base import PlanEntry
from acp_agent.tools.printable import one_line
from acp_agent.turn.journal.entries import ToolCallShown

if TYPE_CHECKING:
    from acp_agent.turn.events import Notice

__all__ = [
    "chunk",
    "commands_update",
    "compaction_chunk",
    "compaction_update",
    "info_update",
    "mode_update",
    "notice_update",
    "permission_tool_call",
    "plan_update",
    "session_message",
    "subagent_update",
    "text_content",
    "tool_call",
    "tool_call_finished",
    "tool_call_progress",
    "tool_call_status",
    "tool_content",
    "user_chunks",
]


_UNSET: Any = object()


def info_update(*, title: Any = _UNSET, updated_at: str | None = None) -> dict[str, Any]:
    """A `session_info_update` with the fields given (a title of None clears the editor's)."""
    update: dict[str, Any] = {"sessionUpdate": "session_info_update"}
    if title is not _UNSET:
        update["title"] = title
    if updated_at is not None:
        update["updatedAt"] = updated_at
    return update


def subagent_update(
    session_id: str, *, title: str | None = None, cancel: bool | None = None, state: dict[str, Any]
) -> dict[str, Any]:
    """A `subagent_update` (ACP unstable), sent on the parent session about its child `session_id`:
    the first announces it; each replaces the child's whole `state` (and its `title`, if given).
    `cancel` True offers the client `session/cancel` on the child alone (`capabilities.cancel`);
    False clears the capabilities (`null`: no mutation any more); None leaves them as they were."""
    update: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": session_id}
    if title is not None:
        update["title"] = one_line(title)  # the task's description, as the model wrote it
    if cancel is not None:
        update["capabilities"] = {"cancel": {}} if cancel else None
    update["state"] = state
    return update


def session_message(message_id: str, sender: str, recipient: str, text: str) -> dict[str, Any]:
    """A whole `session_message` (ACP unstable): one session's text `sender` → `recipient`, as the
    transcript of the session it is sent on shows it (here: the child's, its task)."""
    return {
        "sessionUpdate": "session_message",
        "messageId": message_id,
        "senderSessionId": sender,
        "recipientSessionId": recipient,
        "content": [{"type": "text", "text": text}],
    }


def text_content(text: str) -> dict[str, Any]:
    """Text as a tool call's content item."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def user_chunks(blocks: Iterable[dict[str, Any]], message_id: str) -> list[dict[str, Any]]:
    """The user's message as the editor sent it: one `user_message_chunk` per content block."""
    return [{"sessionUpdate": "user_message_chunk", "content": b, "messageId": message_id} for b in blocks]


def chunk(kind: str, text: str, message_id: str) -> dict[str, Any]:
    """A message chunk (`agent_message_chunk`, `agent_thought_chunk`) of the message `message_id`."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": message_id}


def notice_update(notice: Notice, *, notices: bool) -> dict[str, Any]:
    """A `notice` for a client that shows them (`clientCapabilities.session.notices`); else what
    every client has always been sent: the text as a message, or as a thought."""
    if notice.title and notices:
        update: dict[str, Any] = {
            "sessionUpdate": "notice",
            "severity": notice.severity,
            "title": " ".join(notice.title.split()) or "Notice",  # one line of plain text
        }
        if notice.description:
            update["description"] = notice.description
        return update
    kind = "agent_thought_chunk" if notice.thought else "agent_message_chunk"
    return chunk(kind, notice.text, notice.message_id)


def compaction_update(
    compaction_id: str, status: str, *, summary: str | None = None, error: str | None = None
) -> dict[str, Any]:
    """A compaction's state (`in_progress`, `completed`, `failed`, `cancelled`): fields left out
    keep what the client has, so the summary the chunks built stays."""
    update: dict[str, Any] = {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": status,
    }
    if summary is not None:
        update["summary"] = [{"type": "text", "text": summary}]
    if error is not None:
        update["error"] = error
    return update


def compaction_chunk(compaction_id: str, text: str) -> dict[str, Any]:
    """A piece of a compaction's summary, appended by the client."""
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": compaction_id,
        "content": {"type": "text", "text": text},
    }


def _tool_call_fields(
    call_id: str, title: str, kind: str, raw_input: dict[str, Any], name: str | None
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "toolCallId": call_id,
        "title": one_line(title),  # it names what a server or the model said (an MCP tool, a query)
        "kind": kind,
        "status": "pending",
        "rawInput": raw_input,
    }
    if name:
        fields["name"] = name
    return fields


def tool_call(
    call_id: str, title: str, kind: str, raw_input: dict[str, Any], name: str | None = None
) -> dict[str, Any]:
    """The `tool_call` that announces a call (`status` pending, explicitly: docs/decisions.md D3);
    `name` is the tool's own name (`title` is for people)."""
    return {"sessionUpdate": "tool_call", **_tool_call_fields(call_id, title, kind, raw_input, name)}


def tool_call_status(call_id: str, status: str) -> dict[str, Any]:
    """A call moved on (to `in_progress`) with nothing new to show."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status}


def tool_call_progress(
    call_id: str, text: str | None, terminal_id: str | None, status: str | None = None
) -> dict[str, Any]:
    """A running call's output tail, or the editor terminal it runs in (its content is replaced);
    with `status`, the call moves on too (a background command's, once the command ended), and
    with a status alone its content stays as it is."""
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
    if terminal_id:
        update["content"] = [{"type": "terminal", "terminalId": terminal_id}]
    elif text is not None or status is None:
        update["content"] = [text_content(text or "")]
    if status is not None:
        update["status"] = status
    return update


def tool_content(
    shown: ToolCallShown, terminal_id: str | None = None, media: Iterable[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """What a call shows as ACP content: its diffs, its terminal, its steps (a subagent's tool
    calls, one line each), its text, its links, then its images (the `shown.images` image blocks
    of `media`, the result's blocks for the model)."""
    content: list[dict[str, Any]] = [
        {"type": "diff", "path": path, "oldText": old, "newText": new} for path, old, new in shown.diffs
    ]
    if terminal_id:
        content.append({"type": "terminal", "terminalId": terminal_id})
    if shown.steps:
        content.append(text_content("\n".join(shown.steps)))
    if shown.text is not None:
        content.append(text_content(shown.text))
    content.extend(
        {"type": "content", "content": {"type": "resource_link", "uri": uri, "name": title or uri}}
        for uri, title in shown.links
    )
    if shown.images:
        images = [b for b in media if b.get("type") == "image"][: shown.images]
        content.extend(c for c in map(_image_content, images) if c is not None)
    return content


def _image_content(block: dict[str, Any]) -> dict[str, Any] | None:
    """An API image block (base64) as ACP image content; None for another source (a url)."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    image = {"type": "image", "data": source.get("data", ""), "mimeType": source.get("media_type", "")}
    return {"type": "content", "content": image}


def _locations(shown: ToolCallShown) -> list[dict[str, Any]]:
    return [
        {"path": path} if line is None else {"path": path, "line": line} for path, line in shown.locations
    ]


def tool_call_finished(
    call_id: str,
    shown: ToolCallShown,
    terminal_id: str | None = None,
    media: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A call's final `tool_call_update`: status, content, locations and raw output.

    Live, with the terminal it ran in and the result's media; on replay, from the journaled
    `shown` and result block (no terminal: it did not outlive the call).
    """
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
    if shown.status is not None:
        update["status"] = shown.status
    update["content"] = tool_content(shown, terminal_id, media)
    if shown.locations:
        update["locations"] = _locations(shown)
    if shown.raw_output is not None:
        update["rawOutput"] = shown.raw_output
    return update


def permission_tool_call(
    call_id: str,
    title: str,
    kind: str,
    raw_input: dict[str, Any],
    preview: ToolCallShown | None,
    name: str | None = None,
) -> dict[str, Any]:
    """The `toolCall` of a `session/request_permission`: the call as announced, with what it would
    do (its diffs, locations and text, as its final update would show them)."""
    fields = _tool_call_fields(call_id, title, kind, raw_input, name)
    if preview is not None:
        if content := tool_content(preview):
            fields["content"] = content
        if preview.locations:
            fields["locations"] = _locations(preview)
    return fields


def plan_update(entries: Iterable[PlanEntry]) -> dict[str, Any]:
    """The whole plan (the editor replaces its copy)."""
    return {
        "sessionUpdate": "plan",
        "entries": [{"content": e.content, "priority": e.priority, "status": e.status} for e in entries],
    }


def commands_update(commands: list[dict[str, Any]]) -> dict[str, Any]:
    """The `/` menu's commands (`availableCommands`: name, description, input hint)."""
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def mode_update(mode_id: str) -> dict[str, Any]:
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
