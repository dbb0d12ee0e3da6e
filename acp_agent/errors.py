"""The agent's exception tree, so callers learn what to catch from one place.

    AgentError
      ├─ ToolError            recoverable: becomes an is_error tool_result, the turn goes on
      │    ├─ PathOutsideCwd      a path that resolves outside the session's roots
      │    ├─ InvalidToolInput    arguments that fail the tool's input schema
      │    └─ ToolTimeout         the tool ran past its time allowance
      └─ TurnFailed           terminal for the turn: JSON-RPC error with the turn record
           ├─ ModelUnavailable    the API refused or failed and retrying did not help
           ├─ StreamBroken        the reply broke off after output was relayed, or had no stop_reason
           ├─ AuthRequired        no credentials, or the API said 401/403
           └─ JournalFailed       the session journal could not be written (a full disk)

    CassetteError (a ValueError)  a replay cassette that cannot be read or a record file not written

Protocol errors with a JSON-RPC code live in `acp_agent.rpc.errors.RpcError`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "AuthRequired",
    "CassetteError",
    "InvalidToolInput",
    "JournalFailed",
    "ModelUnavailable",
    "PathOutsideCwd",
    "StreamBroken",
    "ToolError",
    "ToolTimeout",
    "TurnFailed",
]


class AgentError(Exception):
    """Base of every error the agent raises on purpose."""


class ToolError(AgentError):
    """A tool could not do what was asked; the model sees the message and may try again."""


class PathOutsideCwd(ToolError):
    """A path resolved outside the session's working directory."""


class InvalidToolInput(ToolError):
    """The model's arguments do not fit the tool's input schema."""


class ToolTimeout(ToolError):
    """The tool ran past its time allowance; `partial` holds what it produced so far."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


class TurnFailed(AgentError):
    """The turn cannot go on. `kind` names the failure; `retryable` says if trying again may help."""

    kind = "internal"

    def __init__(self, message: str, *, retryable: bool = False, detail: dict[str, Any] | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.detail = detail or {}


class ModelUnavailable(TurnFailed):
    """The Messages API failed, and retrying did not help or was not allowed."""

    kind = "model_unavailable"


class StreamBroken(TurnFailed):
    """The model's reply broke off: after output was relayed, or without a stop_reason.

    `partial` holds the assistant content blocks received before the break.
    """

    kind = "stream_broken"

    def __init__(
        self, message: str, *, partial: list[dict[str, Any]] | None = None, retryable: bool = False
    ) -> None:
        super().__init__(message, retryable=retryable)
        self.partial = partial or []


class AuthRequired(TurnFailed):
    """No usable credentials (none found, or the API answered 401/403)."""

    kind = "auth_required"


class JournalFailed(TurnFailed):
    """An entry could not be written to the session journal; the message names the file."""

    kind = "journal"


class CassetteError(ValueError):
    """A cassette that cannot be read (missing, not JSON lines, not this format), or a record file
    that cannot be written."""
