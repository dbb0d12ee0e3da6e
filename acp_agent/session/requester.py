"""How the session layer talks to the client: a small seam the app wires to the JSON-RPC endpoint."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

__all__ = ["Requester"]


class Requester(Protocol):
    """Sends notifications and requests to the client.

    `request` raises `ProtocolError` when the client answers with an error, and `TimeoutError`
    when it does not answer in time.
    """

    async def notify(self, method: str, params: dict[str, Any]) -> None: ...

    def notifier(
        self, method: str, params: dict[str, Any], path: Sequence[str]
    ) -> Callable[[str], Awaitable[None]]:
        """A sender of notifications like `params` with another string at `path` (text chunks):
        the same lines as `notify`, with the unchanging part encoded once."""
        ...

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any: ...
