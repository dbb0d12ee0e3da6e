"""ACP's error answers, as values the session layer raises without knowing about JSON-RPC framing.

The app turns a `ProtocolError` into the JSON-RPC error object with the same code, message and data.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JOURNAL_ERROR", "ProtocolError"]

JOURNAL_ERROR = -32010


class ProtocolError(Exception):
    """An error answer to a client request (or an error the client answered us with)."""

    def __init__(self, code: int, message: str, data: Any | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def invalid_request(cls, message: str, data: Any | None = None) -> ProtocolError:
        return cls(-32600, message, data)

    @classmethod
    def method_not_found(cls, method: str) -> ProtocolError:
        return cls(-32601, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, message: str, data: Any | None = None) -> ProtocolError:
        return cls(-32602, message, data)

    @classmethod
    def internal_error(cls, message: str, data: Any | None = None) -> ProtocolError:
        return cls(-32603, message, data)

    @classmethod
    def auth_required(cls, message: str, data: Any | None = None) -> ProtocolError:
        return cls(-32000, message, data)

    @classmethod
    def journal_error(cls, message: str, data: Any | None = None) -> ProtocolError:
        """A session journal that cannot be read or written (-32010: a server error of ours)."""
        return cls(JOURNAL_ERROR, message, data)

    @classmethod
    def unknown_session(cls, session_id: str) -> ProtocolError:
        return cls(
            -32602, f"Invalid params: sessionId: unknown session {session_id!r}", {"sessionId": session_id}
        )
