"""JSON-RPC errors as exceptions, so a handler can `raise` its way to an error response.

The codes are JSON-RPC 2.0's plus ACP's (`-32800` cancelled, `-32000` auth required,
`-32002` resource not found). Named constructors keep the codes in one place.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "ConnectionClosed",
    "RpcError",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


class RpcError(Exception):
    """An error with a JSON-RPC code; becomes the `error` object of a response.

    `request_id` is set by the line classifier when the offending message had a readable id,
    so the error answer can echo it (None means the answer carries `"id": null`).
    """

    def __init__(self, code: int, message: str, data: Any | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id: Any = None

    def __repr__(self) -> str:
        return f"RpcError(code={self.code}, message={self.message!r}, data={self.data!r})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC `error` object; `data` only when there is some."""
        if self.data is None:
            return {"code": self.code, "message": self.message}
        return {"code": self.code, "message": self.message, "data": self.data}

    @classmethod
    def parse_error(cls, detail: str) -> RpcError:
        return cls(PARSE_ERROR, f"Parse error: {detail}")

    @classmethod
    def invalid_request(cls, detail: str) -> RpcError:
        return cls(INVALID_REQUEST, f"Invalid request: {detail}")

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        return cls(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(INVALID_PARAMS, message, data)

    @classmethod
    def internal_error(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(INTERNAL_ERROR, message, data)

    @classmethod
    def request_cancelled(cls) -> RpcError:
        return cls(REQUEST_CANCELLED, "Request cancelled")

    @classmethod
    def auth_required(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(AUTH_REQUIRED, message, data)

    @classmethod
    def resource_not_found(cls, message: str) -> RpcError:
        return cls(RESOURCE_NOT_FOUND, message)


class ConnectionClosed(RpcError):
    """The client went away (stdin EOF) before answering one of our requests.

    A subclass of `RpcError` so code that treats "the client call failed" one way needs a
    single `except RpcError`; catch this class to tell the two apart.
    """

    def __init__(self, message: str = "the client closed the connection") -> None:
        super().__init__(INTERNAL_ERROR, message)
