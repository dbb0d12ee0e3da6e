"""session/load: the journal's entries → the `session/update`s that show the conversation again.

User prompts, agent text and thinking, tool calls with their final status, notices, the last plan
and the mode, in the order they happened; built directly, like the live relay (D4). A tool call is
shown as the live turn showed it: the title, kind, content (diffs, output text), locations and
final status journaled with its result (`shown`, written by the runner). A tool call that a crash
left without a result ends `failed`, with what the model is told about it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from acp_agent.turn.history import INTERRUPTED, INTERRUPTED_RUNNING, result_text

__all__ = ["replay_updates"]


def _chunk(kind: str, text: str, message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": message_id}


def replay_updates(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates, in order; the last plan and the mode come at the end."""
    updates: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] | None = None
    mode: str | None = None
    announced: set[str] = set()
    entries = list(entries)
    # The tool_use comes before its result in the journal; the title and kind are in the result.
    shown_of = {
        e["block"].get("tool_use_id"): e.get("shown") or {}
        for e in entries
        if e.get("type") == "tool_result" and isinstance(e.get("block"), dict)
    }
    # A call that began before a crash has a tool_started entry and no result: it is shown.
    started = {str(e.get("toolUseId")) for e in entries if e.get("type") == "tool_started"}
    shown_of.update({call_id: {} for call_id in started if call_id not in shown_of})
    finished: set[str] = set()
    for entry in entries:
        kind = entry.get("type")
        if kind == "prompt":
            message_id = str(uuid.uuid4())
            updates.extend(
                _prompt_chunk(block, message_id)
                for block in entry.get("prompt") or []
                if isinstance(block, dict)
            )
        elif kind == "assistant":
            updates.extend(_assistant(entry.get("blocks") or [], announced, shown_of))
        elif kind in {"tool_result", "user"}:  # a user entry holds the results of a repair
            for block in [entry.get("block")] if kind == "tool_result" else entry.get("blocks") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    updates.extend(_tool_result({**entry, "block": block}, announced))
                    finished.add(str(block.get("tool_use_id")))
        elif kind == "notice":
            updates.append(_chunk("agent_message_chunk", str(entry.get("text", "")), str(uuid.uuid4())))
        elif kind == "plan":
            plan = list(entry.get("entries") or [])
        elif kind == "mode":
            mode = str(entry.get("modeId"))
    updates.extend(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "failed",
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": INTERRUPTED_RUNNING if call_id in started else INTERRUPTED,
                    },
                }
            ],
        }
        for call_id in [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
        if call_id not in finished
    )
    if plan is not None:
        updates.append({"sessionUpdate": "plan", "entries": plan})
    if mode is not None:
        updates.append({"sessionUpdate": "current_mode_update", "currentModeId": mode})
    return updates


def _prompt_chunk(block: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": "user_message_chunk", "content": block, "messageId": message_id}


def _assistant(
    blocks: list[dict[str, Any]], announced: set[str], shown_of: dict[Any, dict[str, Any]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    text_id, thought_id = str(uuid.uuid4()), str(uuid.uuid4())
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            out.append(_chunk("agent_message_chunk", block["text"], text_id))
        elif kind == "thinking" and block.get("thinking"):
            out.append(_chunk("agent_thought_chunk", block["thinking"], thought_id))
        elif kind == "tool_use" and block.get("id") not in announced:
            shown = shown_of.get(block.get("id"))
            if shown is None or shown.get("hidden"):
                continue  # never shown live: skipped by a limit, cut off, or cut short by a crash
            announced.add(block["id"])
            out.append(_tool_call(block["id"], shown, block.get("name"), block.get("input")))
    return out


def _tool_call(call_id: str, shown: dict[str, Any], name: Any, raw_input: Any) -> dict[str, Any]:
    """The `tool_call` as the live turn announced it."""
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": str(shown.get("title") or name or "tool"),
        "kind": str(shown.get("kind") or "other"),
        "status": "pending",
        "rawInput": raw_input if isinstance(raw_input, dict) else shown.get("rawInput") or {},
    }


def _tool_result(entry: dict[str, Any], announced: set[str]) -> list[dict[str, Any]]:
    block = entry.get("block") or {}
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        return []
    shown = entry.get("shown") or {}
    if shown.get("hidden"):
        return []
    status = shown.get("status") or ("failed" if block.get("is_error") else "completed")
    text = shown.get("text") if isinstance(shown.get("text"), str) else result_text(block.get("content", ""))
    content: list[dict[str, Any]] = [
        {"type": "diff", "path": str(path), "oldText": old, "newText": new}
        for path, old, new in shown.get("diffs") or []
    ]
    content.append({"type": "content", "content": {"type": "text", "text": text}})
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
        "content": content,
    }
    locations = [
        {"path": p} if line is None else {"path": p, "line": line} for p, line in shown.get("locations") or []
    ]
    if locations:
        update["locations"] = locations
    if isinstance(shown.get("rawOutput"), dict):
        update["rawOutput"] = shown["rawOutput"]
    if call_id in announced:
        return [update]
    announced.add(call_id)  # a result whose tool_use was lost: announce it first
    return [_tool_call(call_id, shown, None, None), update]
