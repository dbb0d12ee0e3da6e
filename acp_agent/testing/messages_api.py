"""A loopback fake of the Anthropic Messages API that the real SDK talks to over HTTP.

Tests and benches point `base_url` at it (the agent may run as a subprocess), script replies in
order, and read back every attempt the SDK made. It is a real server on 127.0.0.1, so the SDK's own
HTTP, SSE and error handling run unchanged: nothing of the SDK is mocked. This module holds the
fake's configuration, its script and what it received, and decides each reply; the HTTP server
that writes it is `http_server.py`, the records tests read back are `recorded.py`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any

from acp_agent.testing.clouds.platform_front import PlatformFront
from acp_agent.testing.http_server import FakeServer
from acp_agent.testing.models_listing import ModelsListing
from acp_agent.testing.prompt_cache import PromptCache, breakpoint_errors, miss_reason
from acp_agent.testing.recorded import MESSAGES_PATH, RecordedRequest, Served
from acp_agent.testing.replies import (
    Error,
    Message,
    Reply,
    ReplyFactory,
    ServerBlock,
    ThinkingBlock,
    content_json,
)
from acp_agent.testing.routes import RequestMatch, Route
from acp_agent.testing.rules.document_rules import document_error
from acp_agent.testing.rules.image_rules import image_error
from acp_agent.testing.rules.model_rules import RULES, check_request, thinking_output, thinking_signature
from acp_agent.testing.rules.server_rules import script_error, server_usage

__all__ = ["FakeMessagesAPI", "ModelsListing", "RecordedRequest", "Served"]


class FakeMessagesAPI:
    """Serve scripted replies to `POST /v1/messages` (JSON or SSE) and `GET /v1/models`.

    Use as `with FakeMessagesAPI() as api:` or `start()`/`stop()`. Replies are served in the order
    given to `script()`; when none is left the fallback is served (by default a 500 `api_error`).
    Requests of conversations that interleave (subagents) get theirs from `route()`, by content.
    Hanging replies are released by `stop()` and never last longer than `hang_seconds`.

    As strict as the real API: a request a current model refuses gets that model's 400
    (`model_rules.py`) before any scripted reply is used, and too many or misplaced cache
    breakpoints get the API's 400 on every model. Thinking blocks are shaped as the model returns
    them (dropped when thinking is off, empty at display "omitted") and signed to their prefix.
    Server tools (`server_rules.py`): a version the model lacks is its 400, and a script that
    searches past the request's `max_uses` is a 500 that fails the test.
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
        models_listing: ModelsListing | None = None,
        front: PlatformFront | None = None,
    ) -> None:
        self.hang_seconds = hang_seconds
        self.front = front
        """A cloud platform or gateway in front of the fake (`platform_front.py`, `bedrock.py`,
        `vertex.py`): its paths, credentials, error shapes and stream framing; None: the API's."""
        self.models = tuple(models) if models is not None else ("claude-test-1", *RULES)
        """What `GET /v1/models` lists (by default the test model and every model with rules)."""
        self.model_info = {k: dict(v) for k, v in (model_info or {}).items()}
        """Fields that replace the listed `ModelInfo` of a model (e.g. its `max_input_tokens`)."""
        self.models_listing = models_listing or ModelsListing()
        """How `GET /v1/models` pages (endless, padded) and what it sent."""
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
        self._routes: list[Route] = []
        self._fallback: Reply | ReplyFactory = Error(500, "api_error", "fake: no scripted reply left")
        self._requests: list[RecordedRequest] = []
        self._others: list[RecordedRequest] = []
        self._arrived = threading.Condition(self._lock)
        self._server: FakeServer | None = None
        self._thread: threading.Thread | None = None

    # ── lifecycle ──────────────────────────────────────────────────────────────────────────
    def start(self) -> FakeMessagesAPI:
        """Bind and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = FakeServer(self._address, self)
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
        server.release()
        server.shutdown()
        server.server_close()
        server.close_connections()
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

    def route(
        self,
        when: RequestMatch,
        *replies: Reply | ReplyFactory,
        otherwise: Reply | ReplyFactory | None = None,
    ) -> Route:
        """Serve `replies`, in order, to the requests `when(body)` matches (then `otherwise`, to
        every further match), before the plain script; routes are tried in the order added.

        For conversations whose requests interleave: `when` tells them apart by content
        (`routes.system_has`, `routes.first_prompt_has`). A predicate that raises answers 500.
        """
        route = Route(when, deque(replies), otherwise)
        with self._lock:
            self._routes.append(route)
        return route

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

    # ── used by the server ─────────────────────────────────────────────────────────────────
    def receive(self, request: RecordedRequest) -> Error | Served | None:
        """Record a request; for a messages attempt return the reply it gets (the server calls it)."""
        with self._lock:
            if request.path.split("?", 1)[0] != MESSAGES_PATH:
                self._others.append(request)
                return None
            self._requests.append(request)
            n = len(self._requests)
            self._arrived.notify_all()
            refused = self._refusal(request)
            if refused is not None:  # the real API refuses before any reply is made
                return refused
            try:
                planned = next((p for r in self._routes if (p := r.take(request.body)) is not None), None)
            except Exception as exc:  # a broken predicate: say so instead of guessing
                return Error(500, "api_error", f"fake: a route's predicate raised {exc!r}")
            if planned is None:
                planned = self._queue.popleft() if self._queue else self._fallback
        if callable(planned):
            try:
                planned = planned(request.body, n)
            except Exception as exc:  # a broken test helper: say so instead of dropping the line
                return Error(500, "api_error", f"fake: the reply factory raised {exc!r}")
        if isinstance(planned, Error):
            return planned
        server = [content_json(b) for b in planned.blocks if isinstance(b, ServerBlock)]
        if (broken := script_error(request.body.get("tools"), server)) is not None:
            return Error(500, "api_error", broken)  # the test's script, not the agent, is wrong
        return self._serve(request.body, planned, n)

    def _refusal(self, request: RecordedRequest) -> Error | None:
        """The 400 (or 413) the API gives this request, if any."""
        body = request.body
        size = int(request.headers.get("content-length") or 0)
        if (images := image_error(body, size)) is not None:  # size and images: checked first
            return Error(*images)
        problem = breakpoint_errors(body) or document_error(body)
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
                server = server_usage([content_json(b) for b in reply.blocks if isinstance(b, ServerBlock)])
                if server is not None:
                    usage["server_tool_use"] = server
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
