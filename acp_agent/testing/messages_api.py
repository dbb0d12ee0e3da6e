"""A loopback fake of the Anthropic Messages API that the real SDK talks to over HTTP.

Tests and benches point `base_url` at it (the agent may run as a subprocess), script replies in
order, and read back every attempt the SDK made. It is a real server on 127.0.0.1, so the SDK's own
HTTP, SSE and error handling run unchanged: nothing of the SDK is mocked.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from acp_agent.testing.model_rules import RULES, check_request, thinking_output, thinking_signature
from acp_agent.testing.prompt_cache import (
    PromptCache,
    breakpoint_errors,
    miss_reason,
    strip_cache_control,
)
from acp_agent.testing.replies import (
    Error,
    Message,
    Reply,
    ReplyFactory,
    ThinkingBlock,
    error_event,
    render_events,
    render_json,
)

__all__ = ["FakeMessagesAPI", "RecordedRequest", "Served"]

MESSAGES_PATH = "/v1/messages"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One HTTP attempt as the fake received it (headers lower-cased, body parsed from JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

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


class FakeMessagesAPI:
    """Serve scripted replies to `POST /v1/messages` (JSON or SSE) and `GET /v1/models`.

    Use as `with FakeMessagesAPI() as api:` or `start()`/`stop()`. Replies are served in the order
    given to `script()`; when none is left the fallback is served (by default a 500 `api_error`).
    Hanging replies are released by `stop()` and never last longer than `hang_seconds`.

    As strict as the real API: a request a current model refuses gets that model's 400
    (`model_rules.py`) before any scripted reply is used, and too many or misplaced cache
    breakpoints get the API's 400 on every model. Thinking blocks are shaped as the model returns
    them (dropped when thinking is off, empty at display "omitted") and signed to their prefix.
    The prompt cache (`prompt_cache.py`) bills the markers it receives: on by default for the
    models with rules, `caching=True` turns it on for every model (`min_cache_tokens` for those
    without rules). `served` lists the usage each reply was billed with.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        hang_seconds: float = 30.0,
        models: Sequence[str] | None = None,
        model_info: Mapping[str, Mapping[str, Any]] | None = None,
        strict: bool = True,
        caching: bool | None = None,
        min_cache_tokens: int = 1024,
        reject_diagnostics: bool = False,
    ) -> None:
        self.hang_seconds = hang_seconds
        self.models = tuple(models) if models is not None else ("claude-test-1", *RULES)
        """What `GET /v1/models` lists (by default the test model and every model with rules)."""
        self.model_info = {k: dict(v) for k, v in (model_info or {}).items()}
        """Fields that replace the listed `ModelInfo` of a model (e.g. its `max_input_tokens`)."""
        self.strict = strict
        self.caching = caching
        self.min_cache_tokens = min_cache_tokens
        self.reject_diagnostics = reject_diagnostics
        """Answer a request carrying `diagnostics` with a 400 (a gateway that refuses it)."""
        self.cache = PromptCache()
        self._served: list[Served] = []
        self._fingerprints: dict[str, Any] = {}
        self._address = (host, port)
        self._lock = threading.Lock()
        self._queue: deque[Reply | ReplyFactory] = deque()
        self._fallback: Reply | ReplyFactory = Error(500, "api_error", "fake: no scripted reply left")
        self._requests: list[RecordedRequest] = []
        self._others: list[RecordedRequest] = []
        self._arrived = threading.Condition(self._lock)
        self._released = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ── lifecycle ──────────────────────────────────────────────────────────────────────────
    def start(self) -> FakeMessagesAPI:
        """Bind and serve in a daemon thread."""
        if self._server is not None:
            return self
        self._released.clear()
        server = _Server(self._address, _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-messages-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging replies, close every connection, and stop serving."""
        server, self._server = self._server, None
        if server is None:
            return
        self._released.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _hard_close(conn)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's `base_url` (no `/v1`)."""
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # ── scripting ──────────────────────────────────────────────────────────────────────────
    def script(self, *replies: Reply | ReplyFactory) -> None:
        """Append replies to the queue, served one per attempt in order."""
        with self._lock:
            self._queue.extend(replies)

    def set_fallback(self, reply: Reply | ReplyFactory) -> None:
        """What to serve once the queue is empty."""
        with self._lock:
            self._fallback = reply

    # ── what was received ──────────────────────────────────────────────────────────────────
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every attempt at `POST /v1/messages`, oldest first (a snapshot)."""
        with self._lock:
            return list(self._requests)

    @property
    def other_requests(self) -> list[RecordedRequest]:
        """Every other request (such as `GET /v1/models`)."""
        with self._lock:
            return list(self._others)

    @property
    def served(self) -> list[Served]:
        """Every 200 reply sent for `/v1/messages`, oldest first (a snapshot)."""
        with self._lock:
            return list(self._served)

    @property
    def attempts(self) -> int:
        """How many HTTP attempts reached `/v1/messages` (retries included)."""
        with self._lock:
            return len(self._requests)

    def wait_for_attempts(self, n: int, timeout: float = 10.0) -> None:
        """Block until at least `n` attempts arrived; raise TimeoutError otherwise."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"fake saw {len(self._requests)} attempts, expected {n}")

    # ── used by the handler ────────────────────────────────────────────────────────────────
    def _record(self, request: RecordedRequest) -> Error | Served | None:
        """Record a request; for a messages attempt return the reply it gets."""
        with self._lock:
            if request.path.split("?", 1)[0] != MESSAGES_PATH:
                self._others.append(request)
                return None
            self._requests.append(request)
            n = len(self._requests)
            self._arrived.notify_all()
            refused = self._refusal(request.body)
            if refused is not None:  # the real API refuses before any reply is made
                return refused
            planned = self._queue.popleft() if self._queue else self._fallback
        if callable(planned):
            try:
                planned = planned(request.body, n)
            except Exception as exc:  # a broken test helper: say so instead of dropping the line
                return Error(500, "api_error", f"fake: the reply factory raised {exc!r}")
        if isinstance(planned, Error):
            return planned
        return self._serve(request.body, planned, n)

    def _refusal(self, body: dict[str, Any]) -> Error | None:
        """The 400 the API gives this request, if any."""
        problem = breakpoint_errors(body)
        if problem is None and self.reject_diagnostics and "diagnostics" in body:
            problem = "diagnostics: Extra inputs are not permitted"
        if problem is None and self.strict:
            found = check_request(body)
            problem = found[2] if found else None
        return None if problem is None else Error(400, "invalid_request_error", problem)

    def _serve(self, body: dict[str, Any], reply: Message, n: int) -> Served:
        """Shape the scripted reply as the model would, and bill it (called off the lock)."""
        message_id = f"msg_fake_{n:06d}"
        reply = self._shape_thinking(body, reply)
        model = str(body.get("model") or "")
        rules = RULES.get(model)
        usage = diagnostics = None
        with self._lock:
            if self.caching or (self.caching is None and rules is not None):
                outcome = self.cache.apply(
                    body, min_tokens=rules.min_cache if rules else self.min_cache_tokens
                )
                usage = outcome.usage(reply.usage[1])
                if "diagnostics" in body:
                    previous = (body.get("diagnostics") or {}).get("previous_message_id")
                    reason = (
                        None if previous is None else miss_reason(self._fingerprints.get(previous), outcome)
                    )
                    diagnostics = {"cache_miss_reason": reason}
                self._fingerprints[message_id] = outcome.fingerprint
            elif "diagnostics" in body:
                diagnostics = {"cache_miss_reason": None}
            served = Served(reply, message_id, usage, diagnostics)
            self._served.append(served)
        return served

    @staticmethod
    def _shape_thinking(body: dict[str, Any], reply: Message) -> Message:
        shape = thinking_output(body)
        if shape is None:
            return reply
        keep, shown = shape
        model = str(body.get("model") or "")
        before = len(body.get("messages") or [])
        blocks = []
        for block in reply.blocks:
            if isinstance(block, ThinkingBlock):
                if not keep:
                    continue
                text = block.thinking if shown else ""
                block = ThinkingBlock(text, thinking_signature(model, body, before, text), block.chunks)
            blocks.append(block)
        return replace(reply, blocks=tuple(blocks))

    def _hang(self) -> None:
        self._released.wait(self.hang_seconds)

    def _pause(self, seconds: float) -> bool:
        """Sleep between events; True when the fake is stopping."""
        return self._released.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeMessagesAPI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections the client or a fault closed are expected; stay quiet about them."""


def _hard_close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        conn.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60  # an idle keep-alive connection frees its thread after this

    def setup(self) -> None:
        super().setup()
        # Without it every reply waits ~40 ms for the client's delayed ACK (Nagle).
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        fake = self.server.fake
        with fake._lock:
            fake._connections.add(self.connection)

    def finish(self) -> None:
        fake = self.server.fake
        with fake._lock:
            fake._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """No access log: stderr belongs to whoever runs the fake."""

    def do_GET(self) -> None:
        self._read_and_record(b"")
        if self.path.split("?", 1)[0] == "/v1/models":
            fake = self.server.fake
            data = [{**_model_info(m), **fake.model_info.get(m, {})} for m in fake.models]
            page = {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
            self._send_json(200, page)
        else:
            self._send_error(Error(404, "not_found_error", f"fake: no route for GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
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
        self._body: dict[str, Any] = body
        headers = {k.lower(): v for k, v in self.headers.items()}
        return self.server.fake._record(RecordedRequest(self.command, self.path, headers, body))

    @property
    def _request_id(self) -> str:
        return f"req_fake_{self.server.fake.attempts:06d}"

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", self._request_id)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, reply: Error) -> None:
        self._send_json(reply.status, reply.body(self._request_id), reply.response_headers())

    def _abort(self) -> None:
        """Drop the connection with no further bytes (what a dying proxy does)."""
        self.close_connection = True
        _hard_close(self.connection)

    def _send_message(self, served: Served, body: dict[str, Any]) -> None:
        reply = served.reply
        fake = self.server.fake
        if reply.stall:
            fake._hang()
            self._abort()
            return
        if reply.drop:
            self._abort()
            return
        model = str(body.get("model") or reply.model or "claude-test-1")
        asked = "diagnostics" in body
        if body.get("stream") is not True:
            self._send_json(
                200,
                render_json(
                    reply,
                    model=model,
                    message_id=served.message_id,
                    usage=served.usage,
                    diagnostics=served.diagnostics,
                    with_diagnostics=asked,
                ),
            )
            return
        events = render_events(
            reply,
            model=model,
            message_id=served.message_id,
            usage=served.usage,
            diagnostics=served.diagnostics,
            with_diagnostics=asked,
        )
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self._request_id)
        if not reply.has_stream_faults:
            data = b"".join(events)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._send_chunked(reply, events)

    def _send_chunked(self, reply: Message, events: list[bytes]) -> None:
        fake = self.server.fake
        write = self.wfile.write
        cut, fault = _first_fault(reply, len(events))
        for sent, event in enumerate(events[:cut]):
            if sent and reply.chunk_delay and fake._pause(reply.chunk_delay):
                self._abort()
                return
            write(b"%x\r\n%s\r\n" % (len(event), event))
        if fault == "stall":
            fake._hang()
            self._abort()
        elif fault == "drop":
            self._abort()
        elif fault == "error":
            event = error_event()
            write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
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


def _model_info(model: str) -> dict[str, Any]:
    """A `ModelInfo` as the Models API lists it; capabilities for the models with rules."""
    rules = RULES.get(model)
    info: dict[str, Any] = {
        "type": "model",
        "id": model,
        "display_name": model,
        "lifecycle": "active",
        "created_at": "2025-01-01T00:00:00Z",
        "max_input_tokens": rules.window if rules else 200_000,
        "max_tokens": rules.max_output if rules else 64_000,
    }
    if rules is not None:

        def support(flag: bool) -> dict[str, bool]:
            return {"supported": flag}

        kinds = ("adaptive", "between_tools", "disabled", "enabled")
        info["capabilities"] = {
            "thinking": {"supported": True, "types": {k: support(k in rules.thinking) for k in kinds}},
            "effort": {
                "supported": bool(rules.efforts),
                **{
                    level: support(level in rules.efforts)
                    for level in ("low", "medium", "high", "xhigh", "max")
                },
            },
            "structured_outputs": support(True),
        }
    return info
