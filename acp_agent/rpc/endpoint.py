"""One JSON-RPC connection: concurrent dispatch of incoming calls; answers to ours go to `Outgoing`.

Each incoming request runs in its own task, so a long `session/prompt` never blocks an
`initialize` or a `session/cancel`; notifications run inline, in arrival order. Knows nothing
of ACP: methods and params go to a `Handler` as parsed JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol

import anyio
import structlog
from anyio.abc import TaskGroup

from acp_agent.errors import LineTooLong, RpcError
from acp_agent.rpc.messages import Notification, Request, classify, encode_error, encode_response
from acp_agent.rpc.outgoing import CANCEL_REQUEST, CANCEL_SEND_TIMEOUT, Outgoing

__all__ = ["Endpoint", "Handler", "LineSource", "current_request_id"]

log = structlog.get_logger(__name__)

DEFAULT_GRACE = 1.5

_REQUEST_ID: ContextVar[Any] = ContextVar("acp_agent_request_id", default=None)


def current_request_id() -> Any:
    """The id of the incoming request whose handler is running in this task (None outside one):
    a call made on its behalf can name it (ACP's request-scoped elicitation, during `authenticate`)."""
    return _REQUEST_ID.get()


class Handler(Protocol):
    """What the endpoint dispatches to (the app wires ACP's method table here)."""

    async def handle_request(self, method: str, params: Any) -> Any:
        """Return a JSON-able result or raise `RpcError` (-32601 for an unknown method)."""

    async def handle_notification(self, method: str, params: Any) -> None:
        """Handle a notification quickly: the next line is not read until this returns."""

    def cancel_request(self, method: str, params: Any) -> bool:
        """`$/cancel_request` named this pending request: True if the handler answers it itself."""


class LineSource(Protocol):
    async def read_line(self) -> bytes | None: ...


def _key(request_id: Any) -> tuple[type, Any]:
    # Ids match by value *and* JSON type: 1, "1" and true are three different ids.
    return (type(request_id), request_id)


class _Incoming:
    __slots__ = ("method", "params", "scope")

    def __init__(self, method: str, params: Any) -> None:
        self.method = method
        self.params = params
        self.scope = anyio.CancelScope()


def _unwrap(exc: BaseException) -> BaseException:
    """A handler's task group wraps a lone RpcError in an ExceptionGroup: look inside."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class Endpoint:
    """Serves one client: `serve(reader)` until EOF, answering through `outgoing`'s writer.

    Our own calls to the client go through `outgoing` (built first, and handed to whoever calls
    the client); the endpoint hands it the client's answers and closes it at EOF.
    """

    def __init__(self, handler: Handler, outgoing: Outgoing) -> None:
        self._handler = handler
        self._outgoing = outgoing
        self._writer = outgoing.writer
        self._incoming: dict[tuple[type, Any], _Incoming] = {}
        self._in_flight = 0
        self._idle: anyio.Event | None = None

    async def serve(
        self,
        reader: LineSource,
        *,
        on_eof: Callable[[], Awaitable[None]] | None = None,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        """Read and dispatch lines until EOF, then wind down within `grace` seconds.

        At EOF, pending outgoing requests fail with `ConnectionClosed`, `on_eof` runs (the
        app cancels running turns there), in-flight requests get up to `grace` seconds to
        answer, and whatever is left is cancelled (and answered -32800).
        """
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    line = await reader.read_line()
                except LineTooLong as exc:
                    log.warning("rpc.line_too_long", size=exc.size, limit=exc.limit)
                    await self._writer.send(
                        encode_error(
                            None,
                            RpcError.invalid_request(f"Invalid request: {exc}"),
                        )
                    )
                    continue
                except OSError as exc:
                    log.warning("rpc.read_failed", error=str(exc))
                    line = None
                if line is None:
                    break
                await self._dispatch(line, tg)
            await self._wind_down(on_eof, grace)
            tg.cancel_scope.cancel()

    async def _dispatch(self, line: bytes, tg: TaskGroup) -> None:
        if not line or line.isspace():  # isspace, not strip: no copy of a 1 MiB line
            return  # a blank line carries no message, so nothing to answer
        try:
            msg = classify(line)
        except RpcError as err:
            log.info("rpc.bad_message", code=err.code, detail=err.message)
            await self._writer.send(encode_error(err.request_id, err))
            return
        if isinstance(msg, Request):
            # Registered before the task starts: a $/cancel_request on the next line finds it.
            entry = _Incoming(msg.method, msg.params)
            self._incoming[_key(msg.id)] = entry
            self._in_flight += 1
            tg.start_soon(self._run_request, msg, entry)
        elif isinstance(msg, Notification):
            await self._run_notification(msg)
        else:
            self._outgoing.answered(msg)

    async def _run_notification(self, msg: Notification) -> None:
        if msg.method == CANCEL_REQUEST:
            self._cancel_incoming(msg.params)
            return
        try:
            await self._handler.handle_notification(msg.method, msg.params)
        except Exception:
            log.exception("rpc.notification_failed", method=msg.method)

    def _cancel_incoming(self, params: Any) -> None:
        # An open request's id is a string or a number: anything else (null, an object, a list,
        # which is not even hashable) names no request, and must not end the agent.
        request_id = params.get("requestId") if type(params) is dict else None
        if not isinstance(request_id, str | int | float):
            log.debug("rpc.bad_cancel_request", params=params)
            return
        entry = self._incoming.get(_key(request_id))
        if entry is None:
            return  # already answered, or never seen: nothing to do
        try:
            answers_itself = self._handler.cancel_request(entry.method, entry.params)
        except Exception:
            log.exception("rpc.cancel_hook_failed", method=entry.method)
            answers_itself = False
        if not answers_itself:
            entry.scope.cancel()

    async def _run_request(self, req: Request, entry: _Incoming) -> None:
        key = _key(req.id)
        try:
            data = await self._answer(req, entry)
            await self._writer.send(data)
        except anyio.get_cancelled_exc_class():
            # Shutdown after the grace period: still one answer per request while we can.
            with anyio.move_on_after(CANCEL_SEND_TIMEOUT, shield=True):
                await self._writer.send(encode_error(req.id, RpcError.request_cancelled()))
            raise
        finally:
            if self._incoming.get(key) is entry:
                del self._incoming[key]
            self._in_flight -= 1
            if self._in_flight == 0 and self._idle is not None:
                self._idle.set()

    async def _answer(self, req: Request, entry: _Incoming) -> bytes:
        _REQUEST_ID.set(req.id)  # this request's own task: its context ends with it
        with entry.scope:
            try:
                result = await self._handler.handle_request(req.method, req.params)
            except Exception as exc:  # every failure becomes one error answer
                return self._error_line(req, exc)
            try:
                return encode_response(req.id, result)
            except (TypeError, ValueError, RecursionError) as exc:
                return self._error_line(req, exc)
        # Only reached when $/cancel_request cancelled the scope.
        return encode_error(req.id, RpcError.request_cancelled())

    def _error_line(self, req: Request, exc: BaseException) -> bytes:
        err = _unwrap(exc)
        if not isinstance(err, RpcError):
            log.error("rpc.handler_failed", method=req.method, exc_info=exc)
            err = RpcError.internal_error(
                f"Internal error while handling {req.method}",
                {"exception": type(err).__name__},
            )
        return encode_error(req.id, err)

    async def _wind_down(self, on_eof: Callable[[], Awaitable[None]] | None, grace: float) -> None:
        self._outgoing.close()
        with anyio.move_on_after(grace):
            if on_eof is not None:
                try:
                    await on_eof()
                except Exception:
                    log.exception("rpc.on_eof_failed")
            while self._in_flight:
                self._idle = anyio.Event()
                await self._idle.wait()
        if self._in_flight:
            log.info("rpc.cancelling_requests", count=self._in_flight)
