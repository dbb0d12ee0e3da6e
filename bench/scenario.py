"""What the loopback Messages API answers during the benches, decided from the request alone.

The prompt text is a small command (`bench:deltas 20000`, `bench:loop 200`, ...), so the agent and
the baseline get byte-for-byte the same replies without any per-process script, and a reply never
depends on which process asked or in what order.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.recorded import RecordedRequest
from bench.common import AGENT, Scratch, spawn

__all__ = [
    "HELLO",
    "NODELAY",
    "Arrivals",
    "deltas",
    "ensure_extras",
    "fake_api",
    "loop",
    "route",
    "slow",
    "stall",
]

HELLO = "bench:hello"
"""A one-line prompt answered with a one-line text in a few deltas."""

_HELLO_TEXT = "Hello! I'm ready to help with your code."
_PIECE = "tok "


def deltas(n: int) -> str:
    """N small text deltas (streaming), or N small text blocks in one message (non-streaming)."""
    return f"bench:deltas {n}"


def loop(k: int) -> str:
    """K model requests: K-1 trivial `list_files` tool_use replies, then a short text."""
    return f"bench:loop {k}"


def slow(n: int, delay: float) -> str:
    """A stream of N deltas with `delay` seconds between events (something to cancel)."""
    return f"bench:slow {n} {delay}"


def stall() -> str:
    """Streaming: a slow stream; non-streaming: no answer at all (until the fake stops)."""
    return "bench:stall"


def _last_user_text(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The last user text in the history, and how many assistant messages came after it."""
    after = 0
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "assistant":
            after += 1
            continue
        if isinstance(content, str):
            return content, after
        texts = [b.get("text", "") for b in content or () if b.get("type") == "text"]
        if texts:
            return texts[-1], after
    return "", after


def route(body: dict[str, Any], attempt: int) -> replies.Reply:
    """The fake's reply to any request of the benches."""
    command, answered = _last_user_text(body.get("messages") or [])
    words = command.split()
    streaming = body.get("stream") is True
    kind = words[0] if words else ""
    if kind == "bench:deltas":
        n = int(words[1])
        if streaming:
            return replies.text(_PIECE * n, chunks=n)
        return replies.message([replies.text_block(_PIECE)] * n)
    if kind == "bench:loop":
        k = int(words[1])
        if answered < k - 1:
            # The input varies so no repeat detector sees the same call twice.
            return replies.tool_use("list_files", {"pattern": f"*.{answered}"})
        return replies.text("done.")
    if kind == "bench:slow":
        n, delay = int(words[1]), float(words[2])
        return replies.text(_PIECE * n, chunks=n, chunk_delay=delay)
    if kind == "bench:stall":
        if streaming:
            return replies.text(_PIECE * 500, chunks=500, chunk_delay=0.02)
        return replies.stall()
    return replies.text(_HELLO_TEXT, chunks=6)


def _no_delay(api: FakeMessagesAPI) -> bool:
    """Set TCP_NODELAY on every connection the fake accepts, as real API servers do.

    Without it each reply is two small writes (headers, then body): Nagle holds the second until
    the client ACKs the first, and the client delays that ACK by up to 40 ms, so every request
    took ~45 ms of idle wall time for agent and baseline alike. The fake has no hook for this,
    hence the handler subclass; False (and the stall) when its internals have changed.
    """
    server = getattr(api, "_server", None)
    handler = getattr(server, "RequestHandlerClass", None)
    if server is None or handler is None:
        return False

    class NoDelayHandler(handler):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            with contextlib.suppress(OSError):
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().setup()

    server.RequestHandlerClass = NoDelayHandler
    return True


NODELAY: list[bool] = []
"""Whether each fake of this run got TCP_NODELAY (reported in the JSON)."""


@contextlib.contextmanager
def fake_api(hang_seconds: float = 15.0) -> Iterator[FakeMessagesAPI]:
    """A fresh loopback Messages API on 127.0.0.1 that answers with `route`."""
    api = FakeMessagesAPI(hang_seconds=hang_seconds)
    api.set_fallback(route)
    with api:
        NODELAY.append(_no_delay(api))
        yield api


def ensure_extras(scratch: Scratch) -> None:
    """Before a baseline's first prompt: make sure the agent's request extras are on disk (a
    probe turn of the agent when no bench has captured them yet)."""
    if scratch.extras.exists():
        return
    with fake_api() as api, spawn(AGENT, scratch, scratch.env(api.base_url), "probe") as peer:
        peer.initialize()
        _, sid = peer.new_session(scratch.workspace)
        peer.prompt(sid, HELLO, timeout=60)
        scratch.note_agent_request(api.requests[-1].body)


class Arrivals:
    """When each request reached the fake (`time.perf_counter()`, the clock `Peer` stamps lines
    with), taken in the fake's server thread as the request is read."""

    def __init__(self, api: FakeMessagesAPI) -> None:
        self.seen: list[tuple[float, str, str]] = []
        receive = api.receive

        def stamped(request: RecordedRequest) -> Any:
            self.seen.append((time.perf_counter(), request.method, request.path.split("?", 1)[0]))
            return receive(request)

        api.receive = stamped  # type: ignore[method-assign]

    def clear(self) -> None:
        self.seen.clear()

    def first_message_request(self) -> float | None:
        """When the first `POST /v1/messages` since `clear()` arrived."""
        return next((t for t, method, path in self.seen if path == "/v1/messages"), None)
