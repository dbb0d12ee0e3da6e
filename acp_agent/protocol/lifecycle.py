"""initialize and authenticate: capabilities and version negotiation."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from acp_agent.protocol.base import AcpModel

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "AuthenticateRequest",
    "ClientCapabilities",
    "FileSystemCapability",
    "InitializeRequest",
    "negotiate_version",
]

LATEST_PROTOCOL_VERSION = 1
SUPPORTED_PROTOCOL_VERSIONS = frozenset({1})


class FileSystemCapability(AcpModel):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(AcpModel):
    """What the client can do; anything omitted is unsupported."""

    fs: FileSystemCapability = Field(default_factory=FileSystemCapability)
    terminal: bool = False
    auth: dict[str, Any] | None = None
    elicitation: dict[str, Any] | None = None
    session: dict[str, Any] | None = None
    """`notices`, `compaction`, `configOptions.boolean` (each `{}` when supported)."""
    subagents: dict[str, Any] | None = None
    """ACP's unstable `subagents` (`{}`): the client shows subagents as child sessions."""

    @field_validator("elicitation", "session", "subagents", mode="before")
    @classmethod
    def _object_or_nothing(cls, value: Any) -> Any:
        """The schema deserialises a bad value as "not advertised" rather than refusing `initialize`."""
        return value if isinstance(value, dict) else None

    def _session_has(self, *path: str) -> bool:
        found: Any = self.session or {}
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        return isinstance(found, dict)

    @property
    def notices(self) -> bool:
        """`session.notices`: the client shows `notice` updates."""
        return self._session_has("notices")

    @property
    def compaction(self) -> bool:
        """`session.compaction`: the client shows `compaction_update` and summary chunks."""
        return self._session_has("compaction")

    @property
    def boolean_config_options(self) -> bool:
        """`session.configOptions.boolean` advertised: `type: "boolean"` options may be offered."""
        return self._session_has("configOptions", "boolean")

    @property
    def subagent_sessions(self) -> bool:
        """`subagents` advertised: each subagent may be shown as a child session (`subagent_update`)."""
        return self.subagents is not None

    @property
    def elicitation_modes(self) -> frozenset[str]:
        """The elicitation modes the client advertised (`form`, `url`): `{}` means supported."""
        caps = self.elicitation or {}
        return frozenset(mode for mode in ("form", "url") if isinstance(caps.get(mode), dict))


class InitializeRequest(AcpModel):
    protocol_version: int | str
    client_capabilities: ClientCapabilities = Field(default_factory=ClientCapabilities)
    client_info: dict[str, Any] | None = None

    @field_validator("protocol_version", mode="before")
    @classmethod
    def _check_version(cls, value: Any) -> int | str:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError("must be an integer 0 to 65535")
        if isinstance(value, int) and not 0 <= value <= 65535:
            raise ValueError("must be an integer 0 to 65535")
        return value

    @field_validator("client_capabilities", mode="before")
    @classmethod
    def _null_means_nothing(cls, value: Any) -> Any:
        return {} if value is None else value


def negotiate_version(requested: int | str) -> int:
    """The client's version when we support it, else our latest (never the minimum).

    A string comes from a legacy client: "1" means 1, any other string is an old version (D3).
    """
    if isinstance(requested, str):
        return 1 if requested.strip() == "1" else LATEST_PROTOCOL_VERSION
    return requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION


class AuthenticateRequest(AcpModel):
    method_id: str
