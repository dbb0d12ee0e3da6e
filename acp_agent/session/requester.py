"""How the session layer talks to the client: a small seam the app fills with `rpc.Outgoing`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

__all__ = ["Requester"]


class Requester(Protocol):
    """Sends notifications and requests to the client.

    `request` raises `RpcError` when the client answers with an error (`ConnectionClosed`, a
    subclass, when the client went away first), and `TimeoutError` when it does not answer in time.
    """

    async def notify(self, method: str, params: dict[str, Any]) -> None: ...

    def notifier(
        self, method: str, params: dict[str, Any], path: Sequence[str]
    ) -> Callable[[str], Awaitable[None]]:
        """A sender of notifications like `params` with another string at `path` (text chunks):
        the same lines as `notify`, with the unchanging part encoded once."""
        ...

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any: ...
