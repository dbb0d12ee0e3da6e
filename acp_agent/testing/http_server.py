"""The loopback fake's HTTP side: a threading server on 127.0.0.1 that reads each request, asks the
fake (`messages_api.FakeMessagesAPI`, seen here as a `Backend`) what to answer, and writes it as JSON
or as SSE, with the scripted faults (stalls, dropped connections, truncated or failing streams).
It also lists the models for `GET /v1/models`, and keeps the open connections so `stop()` can cut
them.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from acp_agent.testing.clouds.platform_front import PlatformFront
from acp_agent.testing.models_listing import ModelsListing
from acp_agent.testing.recorded import MESSAGES_PATH, RecordedRequest, Served
from acp_agent.testing.replies import Error, Message, error_event, render_events, render_json

__all__ = ["Backend", "FakeServer"]

_PIECE = 65_536
"""Bytes per write of a `/v1/models` page, so what a client took can be counted."""
_SLICE = 777
"""Bytes per write of a platform's stream: odd-sized pieces, so the client must reassemble frames."""


class Backend(Protocol):
    """What the server asks of the fake."""

    hang_seconds: float
    models: tuple[str, ...]
    model_info: dict[str, dict[str, Any]]
    models_listing: ModelsListing
    front: PlatformFront | None
    """A cloud platform or gateway in front of the fake (`platform_front.py`); None: the API's own."""

    @property
    def attempts(self) -> int: ...

    def receive(self, request: RecordedRequest) -> Error | Served | None:
        """Record a request; for a messages attempt return the reply it gets."""
        ...


class FakeServer(ThreadingHTTPServer):
    """Serve `backend` on `address`; `release()` ends every hang and pause, `close_connections()`
    cuts what is still open."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], backend: Backend) -> None:
        self.backend = backend
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._released = threading.Event()
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections the client or a fault closed are expected; stay quiet about them."""

    def track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)

    def release(self) -> None:
        """Release hanging replies (the fake is stopping)."""
        self._released.set()

    def close_connections(self) -> None:
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _hard_close(conn)

    def hang(self) -> None:
        self._released.wait(self.backend.hang_seconds)

    def pause(self, seconds: float) -> bool:
        """Sleep between events; True when the fake is stopping."""
        return self._released.wait(seconds)


def _hard_close(conn: socket.socket) -> None:
    """Shut the socket down both ways and close it, whatever state it is in."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        conn.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeServer
    timeout = 60  # an idle keep-alive connection frees its thread after this

    def setup(self) -> None:
        super().setup()
        # Without it every reply waits ~40 ms for the client's delayed ACK (Nagle).
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection)

    def finish(self) -> None:
        self.server.untrack(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """No access log: stderr belongs to whoever runs the fake."""

    def do_GET(self) -> None:
        self._read_and_record(b"")
        path, _, query = self.path.partition("?")
        front = self.server.backend.front
        if path == "/v1/models" and (front is None or front.models_api):
            backend = self.server.backend
            listing = backend.models_listing
            page = listing.page(query, backend.models, backend.model_info)
            self._send_json(200, page, sent=listing.sent)
        else:
            self._send_error(Error(404, "not_found_error", f"fake: no route for GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        front = self.server.backend.front
        if front is not None:  # a token endpoint, say: answered by the front itself
            special = front.special(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw
            )
            if special is not None:
                self._send_json(*special)
                return
        try:
            reply = self._read_and_record(raw)
        except ValueError:
            self._send_error(
                Error(
                    400, "invalid_request_error", "fake: body is not valid JSON (or holds a lone surrogate)"
                )
            )
            return
        if reply is None:
            self._send_error(Error(404, "not_found_error", f"fake: no route for POST {self.path}"))
        elif isinstance(reply, Error):
            self._send_error(reply)
        else:
            self._send_message(reply, self._body)

    # ── helpers ────────────────────────────────────────────────────────────────────────────
    def _read_and_record(self, raw: bytes) -> Error | Served | None:
        body = json.loads(raw) if raw else {}
        if not isinstance(body, dict):
            raise ValueError("body is not an object")
        # Like the real API: a lone surrogate (raw or as a \\u escape) is not valid JSON text.
        json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {k.lower(): v for k, v in self.headers.items()}
        path, platform_path = self.path, None
        front = self.server.backend.front
        if front is not None and self.command == "POST":
            routed = front.route(self.command, self.path, dict(headers), body, raw)
            if routed is None or isinstance(routed, Error):
                return routed  # not a Messages call here, or refused: the fake never sees it
            body, path, platform_path = routed, MESSAGES_PATH, self.path
        self._body: dict[str, Any] = body
        return self.server.backend.receive(RecordedRequest(self.command, path, headers, body, platform_path))

    @property
    def _request_id(self) -> str:
        return f"req_fake_{self.server.backend.attempts:06d}"

    def _send_json(
        self,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
        sent: Callable[[int], None] | None = None,
    ) -> None:
        """Write a JSON answer; `sent` is told how many body bytes the client took, piece by piece."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", self._request_id)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if sent is None:
            self.wfile.write(data)
            return
        for start in range(0, len(data), _PIECE):
            piece = data[start : start + _PIECE]
            self.wfile.write(piece)
            sent(len(piece))

    def _send_error(self, reply: Error) -> None:
        front = self.server.backend.front
        if front is not None:
            self._send_json(*front.error(reply, self._request_id))
            return
        self._send_json(reply.status, reply.body(self._request_id), reply.response_headers())

    def _abort(self) -> None:
        """Drop the connection with no further bytes (what a dying proxy does)."""
        self.close_connection = True
        _hard_close(self.connection)

    def _send_message(self, served: Served, body: dict[str, Any]) -> None:
        reply = served.reply
        if reply.stall:
            self.server.hang()
            self._abort()
            return
        if reply.drop:
            self._abort()
            return
        if reply.delay and self.server.pause(reply.delay):  # the fake is stopping
            self._abort()
            return
        shape: dict[str, Any] = {
            "model": str(body.get("model") or reply.model or "claude-test-1"),
            "message_id": served.message_id,
            "usage": served.usage,
            "diagnostics": served.diagnostics,
            "with_diagnostics": "diagnostics" in body,
        }
        if body.get("stream") is not True:
            self._send_json(200, render_json(reply, **shape))
            return
        events = render_events(reply, **shape)
        front = self.server.backend.front
        if front is not None:
            events = front.frames(events)
        self.send_response(200)
        self.send_header("content-type", front.content_type if front is not None else "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self._request_id)
        if not reply.has_stream_faults:
            data = b"".join(events)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            if front is None:
                self.wfile.write(data)
                return
            for start in range(0, len(data), _SLICE):
                self.wfile.write(data[start : start + _SLICE])
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._send_chunked(reply, events, front.error_frame() if front is not None else error_event())

    def _send_chunked(self, reply: Message, events: list[bytes], failure: bytes) -> None:
        write = self.wfile.write
        cut, fault = _first_fault(reply, len(events))
        for sent, event in enumerate(events[:cut]):
            if sent and reply.chunk_delay and self.server.pause(reply.chunk_delay):
                self._abort()
                return
            write(b"%x\r\n%s\r\n" % (len(event), event))
        if fault == "stall":
            self.server.hang()
            self._abort()
        elif fault == "drop":
            self._abort()
        elif fault == "error":
            write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(failure), failure))
        else:  # complete, or truncated: the body ends cleanly either way
            write(b"0\r\n\r\n")


def _first_fault(reply: Message, total: int) -> tuple[int, str | None]:
    """Where the stream is cut (events sent before it) and how; `(total, None)` when it is not."""
    faults = [
        (k, name)
        for k, name in (
            (reply.stall_after, "stall"),
            (reply.drop_after, "drop"),
            (reply.truncate_after, "truncate"),
            (reply.error_event_after, "error"),
        )
        if k is not None and k < total
    ]
    return min(faults) if faults else (total, None)
