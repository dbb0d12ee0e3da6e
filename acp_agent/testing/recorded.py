"""What the loopback fake received and what it served, as tests read them back
(`FakeMessagesAPI.requests`, `.served`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from acp_agent.testing.prompt_cache import strip_cache_control
from acp_agent.testing.replies import Message

__all__ = ["MESSAGES_PATH", "RecordedRequest", "Served"]

MESSAGES_PATH = "/v1/messages"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One HTTP attempt as the fake received it (headers lower-cased, body parsed from JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    platform_path: str | None = None
    """The path as a platform's client sent it (Bedrock's `/model/…/invoke`), when a front
    translated the request (`platform_front.py`); `path` and `body` are then the Messages call's."""

    @property
    def is_stream(self) -> bool:
        """Whether the SDK asked for an SSE stream."""
        return self.body.get("stream") is True

    @property
    def plain_body(self) -> dict[str, Any]:
        """The body without its `cache_control` markers: what the request says, not how to cache it."""
        plain: dict[str, Any] = strip_cache_control(self.body)
        return plain

    def breakpoints(self) -> int:
        """How many `cache_control` markers the request carries (the top-level one included)."""
        return json.dumps(self.body).count('"cache_control"')


@dataclass(frozen=True, slots=True)
class Served:
    """A reply as the fake sends it: the scripted message shaped by the model's rules."""

    reply: Message
    message_id: str
    usage: dict[str, Any] | None = None
    """The billed usage when the prompt cache is simulated; None: the script's own figures."""
    diagnostics: dict[str, Any] | None = None
    """The response's `diagnostics` when the request asked for them."""
