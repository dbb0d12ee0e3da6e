"""HTTP transports handed to the SDK's client: one tees exchanges to a cassette, one replays them.

Both sit *under* the `anthropic` SDK, so a recorded or replayed run goes through the same
parsing, streaming and turn-loop code as a run against the real API. They follow httpx2's
transport interface (`handle_async_request`, `aclose`) without subclassing it, so importing this
module stays cheap: `httpx2` is imported when the first request is made.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import structlog
from anyio.lowlevel import checkpoint

from acp_agent.model.cassette import Cassette, CassetteWriter, Exchange, RecordedResponse
from acp_agent.model.sse import events_to_message, message_to_events, parse_sse, render_sse

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "ClientTransport",
    "RecordingTransport",
    "ReplayTransport",
    "first_difference",
    "is_messages_request",
]

log = structlog.get_logger(__name__)

KEPT_HEADERS = ("content-type", "request-id", "retry-after", "retry-after-ms", "x-should-retry")
"""Response headers a cassette keeps: what the SDK and the retry policy read. Never credentials."""


def is_messages_request(request: httpx2.Request) -> bool:
    """Whether this is a Messages API call (`POST …/v1/messages`), the only thing recorded."""
    return request.method == "POST" and request.url.path.rstrip("/").endswith("/v1/messages")


async def _request_body(request: httpx2.Request) -> dict[str, Any]:
    import httpx2

    try:
        raw = request.content
    except httpx2.RequestNotRead:
        raw = await request.aread()
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


class _Transport:
    """The async-context-manager half of httpx2's transport interface."""

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to release by default."""


class ClientTransport(_Transport):
    """A whole httpx2 client as a transport, so env proxies and keep-alive still apply.

    httpx2 ignores `HTTPS_PROXY` and friends once a client is given its own transport; wrapping
    the SDK's default client keeps them for the recorder's real requests.
    """

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        import httpx2

        response = await self._client.send(request, stream=True)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_tee_class()(response, None),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._client.aclose()


class RecordingTransport(_Transport):
    """Pass every request to `inner`, and write each Messages exchange to the cassette.

    The body reaches the SDK chunk by chunk as it arrives; the exchange is written when the body
    ends, or when the reader stops early (then marked incomplete). Other requests pass untouched.
    """

    def __init__(self, inner: Any, cassette_writer: CassetteWriter) -> None:
        self._inner = inner
        self._writer = cassette_writer

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        import httpx2

        if not is_messages_request(request):
            response: httpx2.Response = await self._inner.handle_async_request(request)
            return response
        body = await _request_body(request)
        response = await self._inner.handle_async_request(request)
        headers = response.headers

        def record(raw: bytes, complete: bool) -> None:
            recorded = _recorded(
                response.status_code, headers, raw, complete, is_stream=body.get("stream") is True
            )
            try:
                self._writer.append(Exchange(request=body, response=recorded))
            except OSError as exc:
                log.error("model.record_failed", path=str(self._writer.path), error=str(exc))
            else:
                log.debug("model.recorded", exchange=self._writer.count, status=response.status_code)

        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_tee_class()(response, record),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _recorded(
    status: int, headers: httpx2.Headers, raw: bytes, complete: bool, *, is_stream: bool
) -> RecordedResponse:
    """A response as the cassette stores it: SSE events, a JSON body, or (else) its text."""
    import httpx2

    kept = {name: headers[name] for name in KEPT_HEADERS if name in headers}
    try:  # undo any content-encoding: the cassette holds what the SDK parsed
        text = httpx2.Response(status, headers=headers, content=raw).text
    except httpx2.DecodingError:
        text = raw.decode("utf-8", "replace")
    if is_stream and status == 200:
        return RecordedResponse(status=status, headers=kept, sse=parse_sse(text), complete=complete)
    try:
        return RecordedResponse(status=status, headers=kept, json_body=json.loads(text), complete=complete)
    except ValueError:
        return RecordedResponse(status=status, headers=kept, text=text, complete=complete)


@cache
def _tee_class() -> type[Any]:
    """httpx2 insists on its own stream base class; defined on first use to keep imports lazy."""
    import httpx2

    class TeeStream(httpx2.AsyncByteStream):
        """Yield the inner response's raw chunks as they come, keeping a copy for `on_end`."""

        def __init__(self, response: httpx2.Response, on_end: Callable[[bytes, bool], None] | None) -> None:
            self._response = response
            self._on_end = on_end
            self._chunks: list[bytes] = []

        async def __aiter__(self) -> AsyncIterator[bytes]:
            complete = False
            try:
                async for chunk in self._response.stream:  # type: ignore[union-attr]
                    if self._on_end is not None:
                        self._chunks.append(chunk)
                    yield chunk
                complete = True
            finally:
                self._end(complete)

        def _end(self, complete: bool) -> None:
            on_end, self._on_end = self._on_end, None
            if on_end is not None:
                on_end(b"".join(self._chunks), complete)

        async def aclose(self) -> None:
            self._end(False)
            await self._response.aclose()

    return TeeStream


class ReplayTransport(_Transport):
    """Answer each Messages request with the next recorded exchange, on either API path.

    Requests are matched by order. With `strict`, the model, the tool names and the last user
    message must equal the recording's, else a 400 names the first difference. Past the end, a 500
    `api_error` says the cassette is exhausted (with `x-should-retry: false`).
    """

    def __init__(self, cassette: Cassette, strict: bool = False) -> None:
        self.cassette = cassette
        self.strict = strict
        self.served = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if not is_messages_request(request):
            return self._other(request)
        body = await _request_body(request)
        exchanges = self.cassette.exchanges
        if self.served >= len(exchanges):
            n = len(exchanges)
            return _error(
                500,
                "api_error",
                f"replay cassette exhausted after {n} exchange{'' if n == 1 else 's'} ({self.cassette.path})",
                {"x-should-retry": "false"},
            )
        exchange = exchanges[self.served]
        if self.strict and (difference := first_difference(exchange.request, body)):
            return _error(
                400,
                "invalid_request_error",
                f"replay mismatch at exchange {self.served + 1} of {self.cassette.path}: {difference}",
            )
        self.served += 1
        log.debug("model.replayed", exchange=self.served, stream=body.get("stream") is True)
        return _answer(exchange.response, wants_stream=body.get("stream") is True)

    def _other(self, request: httpx2.Request) -> httpx2.Response:
        import httpx2

        if request.method == "GET" and request.url.path.rstrip("/").endswith("/v1/models"):
            model = self.cassette.header.model
            data = [
                {"type": "model", "id": model, "display_name": model, "created_at": "2025-01-01T00:00:00Z"}
            ]
            return httpx2.Response(
                200, json={"data": data, "has_more": False, "first_id": model, "last_id": model}
            )
        return _error(404, "not_found_error", f"replay: no route for {request.method} {request.url.path}")


def _error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> httpx2.Response:
    import httpx2

    body = {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_replay"}
    return httpx2.Response(status, headers={"request-id": "req_replay", **(headers or {})}, json=body)


def _answer(recorded: RecordedResponse, *, wants_stream: bool) -> httpx2.Response:
    """The recorded response, converted to the form this request asked for."""
    import httpx2

    headers = {k: v for k, v in recorded.headers.items() if k != "content-type"}
    if recorded.sse is not None and wants_stream and recorded.status == 200:
        return _event_stream(recorded.sse, headers, recorded.complete)
    if recorded.sse is not None:
        status, body = events_to_message(recorded.sse)
        return httpx2.Response(status, headers=headers, json=body)
    if recorded.json_body is None:  # a body that was not JSON: serve it as it came
        return httpx2.Response(
            recorded.status, headers=recorded.headers, content=(recorded.text or "").encode()
        )
    if wants_stream and recorded.status == 200 and isinstance(recorded.json_body, dict):
        return _event_stream(message_to_events(recorded.json_body), headers, True)
    return httpx2.Response(recorded.status, headers=headers, json=recorded.json_body)


def _event_stream(events: Any, headers: dict[str, str], complete: bool) -> httpx2.Response:
    import httpx2

    async def body() -> AsyncIterator[bytes]:
        for event in events:
            await checkpoint()  # a long reply stays cancellable
            yield render_sse(event)
        if not complete:
            raise httpx2.RemoteProtocolError("the recorded stream broke off here")

    return httpx2.Response(200, headers={**headers, "content-type": "text/event-stream"}, content=body())


def first_difference(recorded: dict[str, Any], sent: dict[str, Any]) -> str | None:
    """What `--replay-strict` compares, in order: the model, the tool names, the last user message."""
    checks = (
        ("model", lambda b: b.get("model")),
        ("list of tool names", lambda b: [t.get("name") for t in b.get("tools") or ()]),
        ("last user message", _last_user_content),
    )
    for what, view in checks:
        want, got = view(recorded), view(sent)
        if want != got:
            return f"the {what} differs: recorded {_excerpt(want, got)}, sent {_excerpt(got, want)}"
    return None


def _last_user_content(body: dict[str, Any]) -> Any:
    users = [m for m in body.get("messages") or () if m.get("role") == "user"]
    return users[-1].get("content") if users else None


def _excerpt(value: Any, other: Any, width: int = 60) -> str:
    """`value` as JSON, cut to a window around where it first differs from `other`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= 2 * width:
        return text
    against = json.dumps(other, ensure_ascii=False, sort_keys=True)
    at = next(
        (i for i, (a, b) in enumerate(zip(text, against, strict=False)) if a != b),
        min(len(text), len(against)),
    )
    start = max(0, at - width // 2)
    return ("…" if start else "") + text[start : start + width] + ("…" if start + width < len(text) else "")
