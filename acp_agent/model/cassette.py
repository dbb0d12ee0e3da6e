"""The record/replay cassette: one run's Messages API exchanges as JSON lines, and its two views.

Line 1 is a `CassetteHeader`, every further line one `Exchange` (the request body and the
response: a JSON body, or the SSE events in order). A reply recorded on one API path can be
served on the other, so this module also turns a message into its SSE events and back, the way
the SDK's stream helper assembles them. Pure data and stdlib: no `anthropic`, no `httpx2`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from acp_agent.errors import CassetteError

__all__ = [
    "CASSETTE_VERSION",
    "Cassette",
    "CassetteError",
    "CassetteHeader",
    "CassetteWriter",
    "Exchange",
    "RecordedResponse",
    "SseEvent",
    "error_status",
    "events_to_message",
    "load_cassette",
    "message_to_events",
    "parse_sse",
    "render_sse",
]

log = structlog.get_logger(__name__)

CASSETTE_VERSION = 1


class _Line(BaseModel):
    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )


class CassetteHeader(_Line):
    """The first line: what the run was recorded with."""

    version: Literal[1] = 1
    model: str
    """The model id the run used; a replay sends the same one."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    streaming: bool
    """Whether the run streamed; a replay may use either path."""


class SseEvent(_Line):
    """One server-sent event: its `event:` name and its `data:` (parsed JSON when it parses)."""

    event: str | None = None
    data: Any = None


class RecordedResponse(_Line):
    """The answer to one request: status, a few headers, and the body in one of its forms.

    `complete` is False when the body broke off (a dropped connection, or the reader stopped):
    a replay then serves what was recorded and breaks off at the same point.
    """

    status: int = 200
    headers: dict[str, str] = Field(default_factory=dict)
    json_body: Any = Field(default=None, alias="json")
    sse: list[SseEvent] | None = None
    text: str | None = None
    complete: bool = True


class Exchange(_Line):
    """One HTTP attempt at `POST /v1/messages` (a retry is an exchange of its own)."""

    request: dict[str, Any]
    response: RecordedResponse


@dataclass(frozen=True, slots=True)
class Cassette:
    """A loaded cassette: the header and the exchanges in recorded order."""

    path: Path
    header: CassetteHeader
    exchanges: tuple[Exchange, ...]


def _dump(line: _Line) -> str:
    return line.model_dump_json(by_alias=True, exclude_none=True) + "\n"


def load_cassette(path: Path) -> Cassette:
    """Read a cassette; a torn last line (a run killed mid-write) is dropped with a warning.

    Raises:
        CassetteError: the file is missing, has no header, or a complete line is invalid.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from None
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline, as every complete line does
    parsed: list[Any] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            parsed.append(_parse(path, number, line, CassetteHeader if number == 1 else Exchange))
    if torn.strip():
        try:
            parsed.append(_parse(path, len(lines) + 1, torn, CassetteHeader if not lines else Exchange))
        except CassetteError as exc:
            log.warning("cassette.torn_line", path=str(path), line=len(lines) + 1, error=str(exc))
    if not parsed or not isinstance(parsed[0], CassetteHeader):
        raise CassetteError(f"cassette {path} has no header line")
    return Cassette(path, parsed[0], tuple(parsed[1:]))


def _parse(path: Path, number: int, line: str, kind: type[_Line]) -> Any:
    try:
        return kind.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "line"
        raise CassetteError(
            f"cassette {path} line {number} is not a valid {kind.__name__}: {where}: {first['msg']}"
        ) from None


class CassetteWriter:
    """Appends exchanges to a cassette, one whole line per write, flushed at once.

    The file is opened per exchange (a few per turn), so no handle outlives a closed client
    and a crash loses at most the line being written.
    """

    def __init__(self, path: Path, header: CassetteHeader) -> None:
        self.path = path
        self.header = header
        self.count = 0
        path.write_text(_dump(header), encoding="utf-8")

    def append(self, exchange: Exchange) -> None:
        """Add one exchange at the end of the cassette."""
        with self.path.open("a", encoding="utf-8") as file:
            file.write(_dump(exchange))
        self.count += 1


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
    """One event as the API sends it: `event:` line, one-line `data:`, blank line."""
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


# ── a message ⇄ its stream ────────────────────────────────────────────────────────────────────

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


def message_to_events(message: dict[str, Any]) -> list[SseEvent]:
    """The SSE events the API would have streamed for a finished message (one delta per block)."""
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start.pop("stop_details", None)
    usage = dict(message.get("usage") or {})
    start["usage"] = {**usage, "output_tokens": min(1, int(usage.get("output_tokens") or 0))}
    events = [_ev("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        events.extend(_block_events(index, block))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    if message.get("stop_details") is not None:
        delta["stop_details"] = message["stop_details"]
    events.append(_ev("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(_ev("message_stop", {"type": "message_stop"}))
    return events


def _ev(name: str, data: dict[str, Any]) -> SseEvent:
    return SseEvent(event=name, data=data)


def _block_events(index: int, block: dict[str, Any]) -> list[SseEvent]:
    kind = block.get("type")
    first, deltas = dict(block), []
    if kind == "text":
        first = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": block.get("text", "")}]
        deltas += [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
    elif kind == "thinking":
        first = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": block.get("thinking", "")},
            {"type": "signature_delta", "signature": block.get("signature", "")},
        ]
    elif "input" in block:  # tool_use, server_tool_use, ...: the input arrives as JSON text
        first = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": ""},
            {"type": "input_json_delta", "partial_json": _compact(block["input"])},
        ]
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
