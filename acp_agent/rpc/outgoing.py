"""Our side's calls to the peer: notifications, and requests whose answers are matched by id.

Its own object, built before anything that calls the client, so the session layer gets it at
construction (it is the session's `Requester`) and the `Endpoint` that reads the answers gets
it too: the app wires them in dependency order, with no field patched afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import anyio
import structlog

from acp_agent.errors import ConnectionClosed, RpcError
from acp_agent.rpc.messages import Response, SplicedNotification, encode_notification, encode_request

__all__ = ["CANCEL_REQUEST", "LineSink", "Outgoing"]

log = structlog.get_logger(__name__)

CANCEL_REQUEST = "$/cancel_request"
CANCEL_SEND_TIMEOUT = 0.25
"""Bound on the shielded sends made while being cancelled."""


class LineSink(Protocol):
    async def send(self, data: bytes) -> None: ...


class _Pending:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: RpcError | None = None


class Outgoing:
    """Sends our notifications and requests through `writer`; `answered` delivers the replies."""

    def __init__(self, writer: LineSink) -> None:
        self.writer = writer
        """The one line sink of the connection; the endpoint writes its answers through it too."""
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed = False

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification (dropped quietly if the client is gone)."""
        await self.writer.send(encode_notification(method, params))

    def notifier(
        self, method: str, params: dict[str, Any], path: Sequence[str]
    ) -> Callable[[str], Awaitable[None]]:
        """A sender of notifications that differ only in the string value at `path` of `params`
        (text chunks): the rest is encoded once (`SplicedNotification`)."""
        line = SplicedNotification(method, params, path).line
        send = self.writer.send

        async def notify(value: str) -> None:
            await send(line(value))

        return notify

    async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any:
        """Call the peer and return its result.

        Raises:
            RpcError: the peer answered with an error (its code, message and data).
            ConnectionClosed: the peer's input ended before it answered.
            TimeoutError: no answer within `timeout` seconds.
        """
        if self._closed:
            raise ConnectionClosed()
        request_id = self._next_id
        self._next_id += 1
        pending = _Pending()
        self._pending[request_id] = pending
        try:
            await self.writer.send(encode_request(request_id, method, params))
            with anyio.fail_after(timeout):
                await pending.done.wait()
        except (anyio.get_cancelled_exc_class(), TimeoutError):
            if self._pending.pop(request_id, None) is not None and not self._closed:
                # We no longer want the answer: tell the peer so it can stop working on it.
                with anyio.move_on_after(CANCEL_SEND_TIMEOUT, shield=True):
                    await self.writer.send(encode_notification(CANCEL_REQUEST, {"requestId": request_id}))
            raise
        if pending.error is not None:
            raise pending.error
        return pending.result

    def answered(self, msg: Response) -> None:
        """The peer's response to one of our requests (an unknown id is logged and dropped)."""
        pending = self._pending.pop(msg.id, None) if type(msg.id) is int else None
        if pending is None:
            log.debug("rpc.unmatched_response", id=msg.id)
            return
        if msg.error is not None:
            pending.error = msg.error.to_exception()
        else:
            pending.result = msg.result
        pending.done.set()

    def close(self) -> None:
        """The peer's input ended: pending requests fail with `ConnectionClosed`, new ones at once."""
        self._closed = True
        for pending in self._pending.values():
            pending.error = ConnectionClosed()
            pending.done.set()
        self._pending.clear()
