"""The Messages API's stream encoding: a message ⇄ its SSE events ⇄ the bytes on the wire.

One codec for all that writes or reads the API's stream: the cassette transports (a reply
recorded on one API path is served on the other) and the loopback fake in `acp_agent/testing`
(which may import `model/`, never the reverse). Events are built in the order the API sends
them, and assembled back as the SDK's stream helper does. Standard library only, so the fake
stays light to start: `SseEvent` is a plain dataclass that a cassette line (pydantic) holds as is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SseEvent",
    "error_event",
    "error_status",
    "events_to_message",
    "message_to_events",
    "parse_sse",
    "render_sse",
]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its `event:` name and its `data:` (parsed JSON when it parses)."""

    __pydantic_config__ = {"extra": "forbid"}  # in a cassette line: unknown keys are an error

    event: str | None = None
    data: Any = None


# ── SSE text ⇄ events ─────────────────────────────────────────────────────────────────────────


def parse_sse(text: str) -> list[SseEvent]:
    """The events of an SSE body (comments skipped; multi-line data joined with newlines)."""
    events: list[SseEvent] = []
    name: str | None = None
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if name is not None or data:
                events.append(SseEvent(event=name, data=_json_or_text("\n".join(data))))
            name, data = None, []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    if name is not None or data:
        events.append(SseEvent(event=name, data=_json_or_text("\n".join(data))))
    return events


def render_sse(event: SseEvent) -> bytes:
    """One event as the API sends it: `event:` line, one-line compact `data:`, blank line."""
    data = event.data if isinstance(event.data, str) else _compact(event.data)
    head = "" if event.event is None else f"event: {event.event}\n"
    return f"{head}data: {data}\n\n".encode()


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# ── errors ────────────────────────────────────────────────────────────────────────────────────

_STATUS_OF_ERROR = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def error_status(error_type: str) -> int:
    """The HTTP status the API uses for an error type (500 for one it does not list)."""
    return _STATUS_OF_ERROR.get(error_type, 500)


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> SseEvent:
    """The `error` event the API sends when it fails mid-stream."""
    return SseEvent(event="error", data={"type": "error", "error": {"type": error_type, "message": message}})


# ── a message ⇄ its stream ────────────────────────────────────────────────────────────────────


def message_to_events(
    message: Mapping[str, Any],
    *,
    pieces: Sequence[Sequence[str] | None] | None = None,
    delta_usage: Mapping[str, Any] | None = None,
) -> list[SseEvent]:
    """The SSE events the API would have streamed for a finished message.

    `pieces[i]`, when given, splits block i's streamed text into those deltas: the text of a
    text block, the thinking of a thinking block, the input JSON of a tool call (a cut-off one
    included; the API's empty first `input_json_delta` is always sent). Otherwise each block
    streams in one delta. `message_delta` carries `delta_usage`, or else the whole usage.
    """
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start.pop("stop_details", None)
    usage = dict(message.get("usage") or {})
    start["usage"] = {**usage, "output_tokens": min(1, int(usage.get("output_tokens") or 0))}
    events = [_ev("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        split = pieces[index] if pieces is not None and index < len(pieces) else None
        events.extend(_block_events(index, block, split))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    if message.get("stop_details") is not None:
        delta["stop_details"] = message["stop_details"]
    final_usage = dict(delta_usage) if delta_usage is not None else usage
    events.append(_ev("message_delta", {"type": "message_delta", "delta": delta, "usage": final_usage}))
    events.append(_ev("message_stop", {"type": "message_stop"}))
    return events


def _ev(name: str, data: dict[str, Any]) -> SseEvent:
    return SseEvent(event=name, data=data)


def _block_events(index: int, block: Mapping[str, Any], split: Sequence[str] | None) -> list[SseEvent]:
    kind = block.get("type")
    first: dict[str, Any] = dict(block)
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        first = {"type": "text", "text": ""}
        texts = split if split is not None else [block.get("text", "")]
        deltas = [{"type": "text_delta", "text": t} for t in texts]
        deltas += [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
    elif kind == "thinking":
        first = {"type": "thinking", "thinking": "", "signature": ""}
        thoughts = split if split is not None else [block.get("thinking", "")]
        deltas = [{"type": "thinking_delta", "thinking": t} for t in thoughts]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    elif "input" in block:  # tool_use, server_tool_use, ...: the input arrives as JSON text
        first = {**block, "input": {}}
        parts = split if split is not None else [_compact(block["input"])]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *parts]]
    return [
        _ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}),
        *(
            _ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ),
        _ev("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def events_to_message(events: Iterable[SseEvent]) -> tuple[int, dict[str, Any]]:
    """The status and JSON body a non-streaming request would have got for these events.

    Assembled as the SDK's stream helper does; an `error` event becomes that error's status and
    body, and a stream without `message_start` a 500 `api_error`.
    """
    message: dict[str, Any] | None = None
    tool_json: dict[int, list[str]] = {}
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        kind = data.get("type")
        if kind == "error" or event.event == "error":
            error = data.get("error") or {"type": "api_error", "message": str(event.data)}
            return error_status(str(error.get("type"))), {"type": "error", "error": error}
        if kind == "message_start":
            message = copy.deepcopy(data["message"])
            message["content"] = []
        elif message is None:
            continue
        elif kind == "content_block_start":
            block = copy.deepcopy(data["content_block"])
            message["content"].append(block)
            if "input" in block:
                tool_json[data["index"]] = []
        elif kind == "content_block_delta":
            _apply_delta(message["content"][data["index"]], data["delta"], tool_json.get(data["index"]))
        elif kind == "content_block_stop" and tool_json.get(data["index"]):
            message["content"][data["index"]]["input"] = _tool_input("".join(tool_json[data["index"]]))
        elif kind == "message_delta":
            message.update(data.get("delta") or {})
            usage = message.setdefault("usage", {})
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
    if message is None:
        return 500, {
            "type": "error",
            "error": {"type": "api_error", "message": "the recorded stream has no message"},
        }
    return 200, message


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], parts: list[str] | None) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta["citation"])
    elif kind == "input_json_delta" and parts is not None:
        parts.append(delta["partial_json"])


def _tool_input(text: str) -> Any:
    """Tool input JSON; a cut-off one keeps its complete values, as the SDK's helper does."""
    try:
        return json.loads(text)
    except ValueError:
        import jiter  # a dependency of the SDK, needed only for a broken recording

        try:
            return jiter.from_json(text.encode(), partial_mode=True)
        except ValueError:
            return {}
