"""The model seam: one `respond()` that yields the same event sequence on both API paths.

The turn loop never branches on streaming; the non-streaming adapter synthesises the events a
stream would have produced from the finished message (docs/decisions.md C8).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "MessageDone",
    "ModelClient",
    "ModelEvent",
    "ModelRequest",
    "RetryScheduled",
    "ServerToolBlock",
    "TextDelta",
    "ThinkingDelta",
    "ToolUseStarted",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One logical Messages API request, in Anthropic's own shapes."""

    model: str
    max_tokens: int
    messages: list[dict[str, Any]]
    system: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    """`effort` and, for a judge, a JSON-schema `format` (structured output)."""
    previous_message_id: str | None = None
    """The session's previous response id, sent as `diagnostics.previous_message_id` so the API
    can say why a cache missed; None on a session's first request."""
    deadline: float | None = None
    """When the turn this request belongs to ends, on `time.monotonic()`'s clock; None for no end.
    Not sent: the model client's retries never wait past it."""

    def seconds_left(self) -> float | None:
        """Seconds until the turn's deadline (never below 0), or None when it has none."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text, relayed as it arrives. `index` is the content block's index."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's thinking."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseStarted:
    """The model began a tool_use block (its input follows; the finished input is in MessageDone)."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ServerToolBlock:
    """A server tool's block is complete: a `server_tool_use` (the API runs the call: web search,
    web fetch) or its result block (`web_search_tool_result`, ...). The reply keeps both; the
    agent only shows them. Output, like text: a request that yielded one is never retried."""

    index: int
    block: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of this request so far (cumulative within the request, as the API reports)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    """The part of `cache_creation_input_tokens` written with the 1-hour TTL (billed 2x)."""
    web_search_requests: int = 0
    """Web searches the API ran for this request (`usage.server_tool_use`; billed per search)."""
    web_fetch_requests: int = 0
    """Web fetches the API ran for this request (their content is billed as input tokens)."""

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt: uncached input + cache read + cache write."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @property
    def context_tokens(self) -> int:
        """The size of the context this request used: input + cache + output."""
        return (
            self.input_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
            + self.output_tokens
        )


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """An attempt failed before any output; the client waits `delay` seconds and tries again.

    Not output: the runner counts it as a retry and may tell the user. `quiet`: a re-send of the
    client's own making, at once (the API refused a field it can do without): counted, not told.
    """

    attempt: int
    delay: float
    reason: str
    quiet: bool = False


@dataclass(frozen=True, slots=True)
class MessageDone:
    """The reply is complete: the assistant content blocks as they go into history, and why it stopped.

    `stop_reason` is the API's own string (end_turn, tool_use, max_tokens, pause_turn, refusal, ...),
    never None: a reply without one raises StreamBroken instead.
    """

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage
    message_id: str | None = None
    cache_miss: dict[str, Any] | None = None
    """The API's `diagnostics.cache_miss_reason`, when it gave one."""


ModelEvent = (
    TextDelta | ThinkingDelta | ToolUseStarted | ServerToolBlock | Usage | RetryScheduled | MessageDone
)


class ModelClient(Protocol):
    """Anything that answers a ModelRequest with a stream of ModelEvents.

    Raises (out of the iterator):
        ModelUnavailable: the API failed and the retry policy gave up (or the error is not retryable).
        StreamBroken: the reply broke off after output, or ended with no stop_reason; carries the partial
            content blocks.
        AuthRequired: no credentials, or 401/403.
    Cancellation propagates unchanged.
    """

    streaming: bool

    def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
