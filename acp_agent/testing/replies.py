"""Scripted replies for the loopback Messages API: what the fake answers, and how it misbehaves.

One reply value serves both API paths: the fake renders a `Message` as SSE when the request asked
for a stream and as one JSON body otherwise, so a test parametrised over `streaming` scripts once.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_agent.model import sse
from acp_agent.model.sse import message_to_events, render_sse
from acp_agent.testing.rules.server_rules import server_usage

__all__ = [
    "Block",
    "Error",
    "Message",
    "RedactedThinkingBlock",
    "Reply",
    "ReplyFactory",
    "ServerBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "content_json",
    "drop",
    "error",
    "error_event",
    "message",
    "redacted_thinking_block",
    "render_events",
    "render_json",
    "stall",
    "text",
    "text_block",
    "thinking_block",
    "tool_use",
    "tool_use_block",
]

_ids = itertools.count(1)


def _new_tool_id() -> str:
    return f"toolu_fake_{next(_ids):06d}"


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A text block; `chunks` splits it into that many `text_delta` events when streamed."""

    text: str
    chunks: int | None = None


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool_use block; its input is streamed as an empty `input_json_delta` then a few pieces.

    `partial_json` replaces the streamed JSON text, e.g. a cut-off one as at `max_tokens`.
    """

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=_new_tool_id)
    partial_json: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """A thinking block with the signature the API requires when it is sent back."""

    thinking: str
    signature: str
    chunks: int | None = None


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    """A redacted_thinking block: arrives whole in its start event."""

    data: str


@dataclass(frozen=True, slots=True)
class ServerBlock:
    """A block of a tool the API runs, as the API returns it (`web_replies.py` builds them): a
    `server_tool_use` streams its input as `input_json_delta`s, a result block arrives whole."""

    content: Mapping[str, Any]


Block = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerBlock


@dataclass(frozen=True, slots=True)
class Message:
    """A successful (200) reply, with optional faults.

    Stream faults count SSE events written (message_start is event 1):
    `chunk_delay` seconds between events; `stall_after=k` sends k events then hangs;
    `drop_after=k` closes the connection abruptly after k events; `truncate_after=k` ends the
    body cleanly after k events; `error_event_after=k` sends an `overloaded_error` event after k.
    Faults before any response, on both paths: `stall` hangs before the status line, `drop`
    closes the connection without answering. `delay` seconds pass before the response starts, on
    both paths (the API's time to first byte, for benches). `reported_usage` replaces fields of the
    reply's `usage` with what a broken (or hostile) API might say, `server_tool_use` included:
    negative counts, more searches than `max_uses` allowed.
    """

    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = "end_turn"
    usage: tuple[int, int] = (10, 5)
    model: str | None = None
    chunk_delay: float = 0.0
    stall_after: int | None = None
    drop_after: int | None = None
    truncate_after: int | None = None
    error_event_after: int | None = None
    stall: bool = False
    drop: bool = False
    delay: float = 0.0
    reported_usage: Mapping[str, Any] | None = None

    @property
    def has_stream_faults(self) -> bool:
        """Whether the SSE body must be written event by event instead of in one buffer."""
        return bool(self.chunk_delay) or any(
            k is not None
            for k in (self.stall_after, self.drop_after, self.truncate_after, self.error_event_after)
        )


@dataclass(frozen=True, slots=True)
class Error:
    """An API error reply with the real body shape; `retry_after*` become response headers."""

    status: int
    type: str
    message: str
    retry_after_ms: float | None = None
    retry_after: float | str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def body(self, request_id: str) -> dict[str, Any]:
        """The JSON body the API sends for this error."""
        return {
            "type": "error",
            "error": {"type": self.type, "message": self.message},
            "request_id": request_id,
        }

    def response_headers(self) -> dict[str, str]:
        """Extra response headers: the retry hints and anything given explicitly."""
        out = dict(self.headers)
        if self.retry_after_ms is not None:
            out["retry-after-ms"] = _number(self.retry_after_ms)
        if self.retry_after is not None:
            out["retry-after"] = (
                self.retry_after if isinstance(self.retry_after, str) else _number(self.retry_after)
            )
        return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


Reply = Message | Error
ReplyFactory = Callable[[dict[str, Any], int], Reply]
"""A dynamic reply: called with the parsed request body and the 1-based attempt number."""


def text_block(text: str, *, chunks: int | None = None) -> TextBlock:
    """A text block for `message()`."""
    return TextBlock(text, chunks)


def tool_use_block(
    name: str, input: Mapping[str, Any], *, id: str | None = None, partial_json: str | None = None
) -> ToolUseBlock:
    """A tool_use block for `message()`; the id defaults to a fresh `toolu_fake_…`."""
    return ToolUseBlock(name, dict(input), id or _new_tool_id(), partial_json)


def thinking_block(thinking: str, signature: str, *, chunks: int | None = None) -> ThinkingBlock:
    """A thinking block for `message()`."""
    return ThinkingBlock(thinking, signature, chunks)


def redacted_thinking_block(data: str) -> RedactedThinkingBlock:
    """A redacted_thinking block for `message()`."""
    return RedactedThinkingBlock(data)


def message(
    blocks: Sequence[Block],
    *,
    stop_reason: str | None = "end_turn",
    usage: tuple[int, int] = (10, 5),
    **faults: Any,
) -> Message:
    """A reply made of any blocks (several tool_use blocks, thinking + text, ...)."""
    return Message(tuple(blocks), stop_reason, usage, **faults)


def text(
    text: str,
    *,
    chunks: int | None = None,
    stop_reason: str | None = "end_turn",
    usage: tuple[int, int] = (10, 5),
    **faults: Any,
) -> Message:
    """A text answer; `chunks=N` streams it as N deltas."""
    return Message((TextBlock(text, chunks),), stop_reason, usage, **faults)


def tool_use(
    name: str,
    input: Mapping[str, Any],
    *,
    id: str | None = None,
    text: str | None = None,
    stop_reason: str | None = "tool_use",
    usage: tuple[int, int] = (10, 5),
    **faults: Any,
) -> Message:
    """One tool call, optionally preceded by a text block."""
    blocks: list[Block] = [] if text is None else [TextBlock(text)]
    blocks.append(tool_use_block(name, input, id=id))
    return Message(tuple(blocks), stop_reason, usage, **faults)


def error(
    status: int,
    type: str,
    message: str,
    *,
    retry_after_ms: float | None = None,
    retry_after: float | str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Error:
    """An API error such as `error(529, "overloaded_error", "Overloaded", retry_after_ms=10)`;
    `headers` adds response headers, e.g. `{"x-should-retry": "true"}`."""
    return Error(status, type, message, retry_after_ms, retry_after, dict(headers or {}))


def stall() -> Message:
    """Hang before answering at all (released by `FakeMessagesAPI.stop()` or after 30 s)."""
    return Message(stall=True)


def drop() -> Message:
    """Close the connection without sending any response."""
    return Message(drop=True)


# ── rendering: the exact bytes the real API would send (the codec is `model/sse.py`) ─────────


def _split(text: str, chunks: int | None) -> list[str]:
    """Split into `chunks` near-equal non-empty pieces (one piece when None or text is short)."""
    if not chunks or chunks <= 1 or len(text) <= 1:
        return [text]
    n = min(chunks, len(text))
    size, extra = divmod(len(text), n)
    pieces, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def content_json(block: Block) -> dict[str, Any]:
    """The block as it appears in a finished message's `content`."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, ServerBlock):
        copied: dict[str, Any] = json.loads(json.dumps(block.content))  # a deep copy, plain JSON
        return copied
    return {"type": "redacted_thinking", "data": block.data}


def _pieces(block: Block) -> list[str] | None:
    """How the block streams: text and thinking in `chunks` deltas, tool input JSON in three."""
    if isinstance(block, TextBlock):
        return _split(block.text, block.chunks)
    if isinstance(block, ThinkingBlock):
        return _split(block.thinking, block.chunks)
    if isinstance(block, ToolUseBlock):
        raw = block.partial_json if block.partial_json is not None else _compact(dict(block.input))
        return _split(raw, 3)
    if isinstance(block, ServerBlock) and "input" in block.content:
        return _split(_compact(block.content["input"]), 2)
    return None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _usage(reply: Message, usage: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = (
        dict(usage)
        if usage is not None
        else {
            "input_tokens": reply.usage[0],
            "output_tokens": reply.usage[1],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    )
    server = server_usage([content_json(b) for b in reply.blocks if isinstance(b, ServerBlock)])
    if server is not None:
        out["server_tool_use"] = server
    out.update(reply.reported_usage or {})
    return out


def render_json(
    reply: Message,
    *,
    model: str,
    message_id: str,
    usage: dict[str, Any] | None = None,
    diagnostics: dict[str, Any] | None = None,
    with_diagnostics: bool = False,
) -> dict[str, Any]:
    """The non-streaming response body; `usage` replaces the script's figures (a billed cache)."""
    body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [content_json(b) for b in reply.blocks],
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": _usage(reply, usage),
    }
    if with_diagnostics:
        body["diagnostics"] = diagnostics
    return body


def render_events(
    reply: Message,
    *,
    model: str,
    message_id: str,
    usage: dict[str, Any] | None = None,
    diagnostics: dict[str, Any] | None = None,
    with_diagnostics: bool = False,
) -> list[bytes]:
    """The SSE events of a streamed reply, in the real API's order, one bytes value per event.

    The same message as `render_json`, streamed: `message_delta` carries the output tokens only.
    """
    body = render_json(
        reply,
        model=model,
        message_id=message_id,
        usage=usage,
        diagnostics=diagnostics,
        with_diagnostics=with_diagnostics,
    )
    final: dict[str, Any] = {"output_tokens": body["usage"]["output_tokens"]}
    if "server_tool_use" in body["usage"]:  # cumulative, like the token counts
        final["server_tool_use"] = body["usage"]["server_tool_use"]
    events = message_to_events(body, pieces=[_pieces(block) for block in reply.blocks], delta_usage=final)
    return [render_sse(event) for event in events]


def error_event(type: str = "overloaded_error", message: str = "Overloaded") -> bytes:
    """The SSE `error` event the API sends when it fails mid-stream."""
    return render_sse(sse.error_event(type, message))
