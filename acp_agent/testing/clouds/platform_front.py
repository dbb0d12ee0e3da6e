"""What a cloud platform or a gateway does differently from the Anthropic API, in front of the one
loopback fake (`FakeMessagesAPI(front=...)`): its paths, how it checks credentials, its error
shapes and its stream framing. The fake's replies, rules and records stay the same; a front only
translates a request into the Messages request the fake answers, and the answer back.

    api = FakeMessagesAPI(front=GatewayFront(keys={"k1"}))      # ANTHROPIC_BASE_URL=api.base_url
    api = FakeMessagesAPI(front=FoundryFront(api_key="fk"))      # base URL: api.base_url + "/anthropic"

Bedrock (SigV4 and AWS event-stream) is `bedrock.py`, Vertex (its paths and a token endpoint)
`vertex.py`. Every front keeps what it refused in `refused` (the reason), for tests to read.
"""

from __future__ import annotations

import threading
from typing import Any

from acp_agent.testing.replies import Error, error_event

__all__ = ["FoundryFront", "GatewayFront", "PlatformFront", "Special"]

Special = tuple[int, dict[str, Any], dict[str, str]]
"""An answer a front gives itself (status, JSON body, headers), such as a token endpoint's."""


class PlatformFront:
    """The Anthropic API's own behaviour; a platform overrides what differs."""

    content_type = "text/event-stream"
    models_api = True
    """Whether `GET /v1/models` is there (else a 404, and the request is in `other_requests`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.refused: list[str] = []
        """Why each refused request was refused (oldest first)."""

    def special(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Special | None:
        """An answer to a request that is not a Messages call (a token endpoint); None: none."""
        return None

    def route(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> dict[str, Any] | Error | None:
        """The Messages body this request stands for, an `Error` to answer (a bad credential),
        or None when the path is not a Messages call here."""
        return body if method == "POST" and path.split("?", 1)[0] == "/v1/messages" else None

    def error(self, reply: Error, request_id: str) -> Special:
        """An error reply in the platform's shape."""
        return reply.status, reply.body(request_id), reply.response_headers()

    def frames(self, events: list[bytes]) -> list[bytes]:
        """The stream's events (SSE, one per item) in the platform's framing."""
        return events

    def error_frame(self) -> bytes:
        """A mid-stream error in the platform's framing."""
        return error_event()

    def refuse(self, status: int, error_type: str, reason: str) -> Error:
        with self._lock:
            self.refused.append(reason)
        return Error(status, error_type, f"fake platform: {reason}", headers={"x-should-retry": "false"})


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value.removeprefix("Bearer ").strip() if value.startswith("Bearer ") else None


class GatewayFront(PlatformFront):
    """An LLM gateway on `ANTHROPIC_BASE_URL`: the Messages API behind a key it checks.

    A key is taken from `Authorization: Bearer` or `x-api-key` (an `apiKeyHelper`'s output comes
    as both, and then both must agree); `keys` may change while it serves (`rotate`), so a
    helper's key can expire.
    """

    def __init__(self, keys: set[str] | None = None) -> None:
        super().__init__()
        self.keys = set(keys or ())
        self.seen_keys: list[str] = []

    def rotate(self, *keys: str) -> None:
        with self._lock:
            self.keys = set(keys)

    def route(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> dict[str, Any] | Error | None:
        routed = super().route(method, path, headers, body, raw)
        if routed is None:
            return None
        bearer, api_key = _bearer(headers), headers.get("x-api-key")
        if bearer and api_key and bearer != api_key:
            return self.refuse(401, "authentication_error", "x-api-key and Authorization disagree")
        key = bearer or api_key
        with self._lock:
            if key is not None:
                self.seen_keys.append(key)
            known = key in self.keys
        if not known:
            return self.refuse(401, "authentication_error", "unknown key" if key else "no key")
        return routed


class FoundryFront(PlatformFront):
    """Microsoft Foundry: the Messages API under `/anthropic/v1/messages`, authenticated by a key
    in both `x-api-key` and `api-key`, or an Entra ID token as Bearer. Point the client's base
    URL at `base_url + "/anthropic"`."""

    models_api = False

    def __init__(self, api_key: str | None = None, token: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.token = token

    def route(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> dict[str, Any] | Error | None:
        if method != "POST" or path.split("?", 1)[0] != "/anthropic/v1/messages":
            return None
        bearer = _bearer(headers)
        if self.token is not None and bearer == self.token:
            return body
        key, legacy = headers.get("x-api-key"), headers.get("api-key")
        if self.api_key is not None and key == self.api_key and legacy == self.api_key:
            return body
        if key is not None and key != legacy:
            return self.refuse(401, "authentication_error", "x-api-key and api-key differ")
        return self.refuse(401, "authentication_error", "no valid Foundry key or token")
