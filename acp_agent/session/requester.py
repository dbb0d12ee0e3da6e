"""How the session layer talks to the client: a two-method seam the app wires to the JSON-RPC endpoint."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Requester"]


class Requester(Protocol):
    """Sends notifications and requests to the client.

    `request` raises `ProtocolError` when the client answers with an error, and `TimeoutError`
    when it does not answer in time.
    """

    async def notify(self, method: str, params: dict[str, Any]) -> None: ...

    async def request(self, method: str, params: dict[str, Any], *,
                      timeout: float | None = None) -> Any: ...
