"""session/load: the journal's entries → the `session/update`s that show the conversation again.

User prompts, agent text and thinking, tool calls with their final status, notices, the last plan
and the mode, in the order they happened; built directly, like the live relay (D4).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from acp_agent.turn.history import result_text

__all__ = ["replay_updates"]


def _chunk(kind: str, text: str, message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text},
            "messageId": message_id}


def replay_updates(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates, in order; the last plan and the mode come at the end."""
    updates: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] | None = None
    mode: str | None = None
    announced: set[str] = set()
    for entry in entries:
        kind = entry.get("type")
        if kind == "prompt":
            message_id = str(uuid.uuid4())
            updates.extend(_prompt_chunk(block, message_id) for block in entry.get("prompt") or []
                           if isinstance(block, dict))
        elif kind == "assistant":
            updates.extend(_assistant(entry.get("blocks") or [], announced))
        elif kind == "tool_result":
            updates.extend(_tool_result(entry, announced))
        elif kind == "notice":
            updates.append(_chunk("agent_message_chunk", str(entry.get("text", "")),
                                  str(uuid.uuid4())))
        elif kind == "plan":
            plan = list(entry.get("entries") or [])
        elif kind == "mode":
            mode = str(entry.get("modeId"))
    if plan is not None:
        updates.append({"sessionUpdate": "plan", "entries": plan})
    if mode is not None:
        updates.append({"sessionUpdate": "current_mode_update", "currentModeId": mode})
    return updates


def _prompt_chunk(block: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": "user_message_chunk", "content": block, "messageId": message_id}


def _assistant(blocks: list[dict[str, Any]], announced: set[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    text_id, thought_id = str(uuid.uuid4()), str(uuid.uuid4())
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            out.append(_chunk("agent_message_chunk", block["text"], text_id))
        elif kind == "thinking" and block.get("thinking"):
            out.append(_chunk("agent_thought_chunk", block["thinking"], thought_id))
        elif kind == "tool_use" and block.get("id") not in announced:
            announced.add(block["id"])
            out.append({"sessionUpdate": "tool_call", "toolCallId": block["id"],
                        "title": block.get("name") or "tool", "kind": "other",
                        "status": "pending", "rawInput": block.get("input") or {}})
    return out


def _tool_result(entry: dict[str, Any], announced: set[str]) -> list[dict[str, Any]]:
    block = entry.get("block") or {}
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        return []
    shown = entry.get("shown") or {}
    status = shown.get("status") or ("failed" if block.get("is_error") else "completed")
    text = shown.get("text") if isinstance(shown.get("text"), str) else result_text(block.get("content", ""))
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status,
        "content": [{"type": "content", "content": {"type": "text", "text": text}}]}
    if shown.get("title"):
        update["title"] = shown["title"]
    if shown.get("kind"):
        update["kind"] = shown["kind"]
    locations = [{"path": p} if line is None else {"path": p, "line": line}
                 for p, line in shown.get("locations") or []]
    if locations:
        update["locations"] = locations
    if call_id in announced:
        return [update]
    announced.add(call_id)  # a result whose tool_use was lost: announce it first
    return [{"sessionUpdate": "tool_call", "toolCallId": call_id, "title": shown.get("title") or
             "tool", "status": "pending"}, update]
