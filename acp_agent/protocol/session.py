"""session/new, session/prompt, session/cancel and the prompt's content blocks."""

from __future__ import annotations

import base64
import binascii
from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from acp_agent.protocol.base import AcpModel

__all__ = [
    "AudioContent",
    "BlobResource",
    "CancelNotification",
    "ContentBlock",
    "EmbeddedResource",
    "ForkSessionRequest",
    "ImageContent",
    "ListSessionsRequest",
    "LoadSessionRequest",
    "NewSessionRequest",
    "PromptRequest",
    "ResourceLink",
    "ResumeSessionRequest",
    "SessionRef",
    "SetConfigOptionRequest",
    "SetModeRequest",
    "SetTitleRequest",
    "SteeringRequest",
    "TextContent",
    "TextResource",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _absolute(value: str) -> str:
    if not (PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute()):
        raise ValueError("must be an absolute path")
    return value


class NewSessionRequest(AcpModel):
    cwd: str
    mcp_servers: list[dict[str, Any]]
    additional_directories: list[str] | None = None
    system_prompt: Any = None
    """ACP's unstable `{mode, content}`; checked by `session/client_options.py`."""

    @field_validator("cwd")
    @classmethod
    def _cwd_absolute(cls, value: str) -> str:
        return _absolute(value)

    @field_validator("additional_directories")
    @classmethod
    def _dirs_absolute(cls, value: list[str] | None) -> list[str] | None:
        return [_absolute(v) for v in value] if value else value


SESSION_ID_CHARS = 255


class SessionRef(AcpModel):
    """Any request or notification that names a session and nothing more we need.

    A session id is letters, digits, `-` and `_`, at most 255 characters (the agent's own ids are
    `sess_` and 32 hex digits): anything else is refused here, never rewritten into a file name.
    """

    session_id: str

    @field_validator("session_id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not value or len(value) > SESSION_ID_CHARS:
            raise ValueError(f"must be 1 to {SESSION_ID_CHARS} characters long (got {len(value):,})")
        if not (value.isascii() and value.replace("-", "").replace("_", "").isalnum()):
            raise ValueError("must hold only letters, digits, '-' and '_'")
        return value


class CancelNotification(SessionRef):
    pass


class LoadSessionRequest(NewSessionRequest, SessionRef):
    """session/load: a session id plus what session/new takes."""


class ResumeSessionRequest(LoadSessionRequest):
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)


class ForkSessionRequest(ResumeSessionRequest):
    """ACP's unstable `session/fork`: `sessionId` names the source; the rest is the new session's,
    as session/new takes it. The schema has no fork point: `_meta["acp-agent"]["promptIndex"]`
    (1-based, as `/fork` and `/rewind` number prompts) forks through the end of that prompt's turn."""

    @property
    def prompt_index(self) -> Any:
        """The fork point as the client sent it (None: fork the whole history); checked by the
        handler, which names the field."""
        ours = (self.meta or {}).get("acp-agent")
        return ours.get("promptIndex") if isinstance(ours, dict) else None


class ListSessionsRequest(AcpModel):
    cwd: str | None = None
    cursor: str | None = None


class SetModeRequest(SessionRef):
    mode_id: str


class SetTitleRequest(SessionRef):
    """ACP's unstable `session/set_title`."""

    title: str


class SetConfigOptionRequest(SessionRef):
    config_id: str
    value: str | bool


class TextContent(AcpModel):
    type: Literal["text"]
    text: str


class ImageContent(AcpModel):
    type: Literal["image"]
    data: str
    mime_type: str
    uri: str | None = None

    @field_validator("mime_type")
    @classmethod
    def _known_image(cls, value: str) -> str:
        if value not in IMAGE_TYPES:
            raise ValueError(f"unsupported image type {value!r} (png, jpeg, gif or webp)")
        return value

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("must be base64") from None
        return value


class AudioContent(AcpModel):
    type: Literal["audio"]
    data: str
    mime_type: str


class ResourceLink(AcpModel):
    type: Literal["resource_link"]
    uri: str
    name: str
    mime_type: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None


class TextResource(AcpModel):
    uri: str
    text: str
    mime_type: str | None = None


class BlobResource(AcpModel):
    uri: str
    blob: str
    mime_type: str | None = None


class EmbeddedResource(AcpModel):
    type: Literal["resource"]
    resource: TextResource | BlobResource


ContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]


class PromptRequest(SessionRef):
    prompt: list[ContentBlock]


class SteeringRequest(PromptRequest):
    """`_session/steering`, the extension method claude-agent-acp and codex-acp share: a message
    for the running turn. `_meta.steering.idleBehavior: "promptRequired"` asks that it not start a
    turn of its own when none runs."""

    @property
    def prompt_required(self) -> bool:
        steering = (self.meta or {}).get("steering")
        return isinstance(steering, dict) and steering.get("idleBehavior") == "promptRequired"
