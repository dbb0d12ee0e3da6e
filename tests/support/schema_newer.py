"""What the agent speaks that the SDK's schema predates, written out here by hand.

The official Python SDK `agent-client-protocol` 0.12 generates its models from ACP schema v1.19;
the agent speaks later additions to v1, each sent only to a client that advertised it (or, for an
agent method, only when asked). Their shapes are written here from the protocol's text, as
pydantic models the validator turns into definitions like the SDK's own (`schema_sdk.py`), so the
tests check them on every message as strictly as the rest; `tests/unit/test_schema_support.py`
checks these shapes message by message. What the agent sends beyond both is listed in
`NOT_COVERED`.

Extra fields pass, as in the official schema (no definition there forbids them); what the
protocol leaves open (a notice's severity, a compaction's status, a child's state) is open here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from acp import schema as sdk
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FIELDS_ADDED",
    "NEWER_METHODS",
    "NEWER_UPDATES",
    "NOT_COVERED",
    "UNSTABLE_UPDATES",
]

Meta = Annotated[dict[str, Any] | None, Field(alias="_meta")]
ContentBlock = sdk.ContentChunk.model_fields["content"].annotation
"""One content block (text, image, audio, resource link, embedded resource), as the SDK has it."""


class _Shape(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# ---- stable v1, after 1.19: for a client with `session.notices` / `session.compaction` --------------


class NoticeUpdate(_Shape):
    """`notice`: a line of information for the user, never part of the conversation."""

    session_update: Annotated[Literal["notice"], Field(alias="sessionUpdate")]
    severity: str  # "info", "warning", "error", or another the client may not know
    title: Annotated[str, Field(min_length=1)]  # plain text that stands alone
    description: str | None = None
    meta: Meta = None


class CompactionUpdate(_Shape):
    """`compaction_update`: a compaction's state; the first fixes its place in the timeline."""

    session_update: Annotated[Literal["compaction_update"], Field(alias="sessionUpdate")]
    compaction_id: Annotated[str, Field(alias="compactionId")]
    status: str  # "in_progress", "completed", "failed", "cancelled", or another
    summary: list[ContentBlock] | None = None
    error: str | None = None
    meta: Meta = None


class CompactionSummaryChunk(_Shape):
    """`compaction_summary_chunk`: one content block appended to a compaction's summary."""

    session_update: Annotated[Literal["compaction_summary_chunk"], Field(alias="sessionUpdate")]
    compaction_id: Annotated[str, Field(alias="compactionId")]
    content: ContentBlock
    meta: Meta = None


# ---- unstable v1, after 1.19: subagents as child sessions, for a client with `subagents` -------------


class _State(_Shape):
    meta: Meta = None


class RunningState(_State):
    state: Literal["running"]


class RequiresActionState(_State):
    state: Literal["requires_action"]


class UnknownState(_State):
    state: Literal["unknown"]


class IdleState(_State):
    """Idle, with how the child's last work ended: one of the prompt's stop reasons, or `error`
    (with the failure as a JSON-RPC error), or another reason, or none."""

    state: Literal["idle"]
    stop_reason: Annotated[str | None, Field(alias="stopReason")] = None
    error: sdk.Error | None = None
    usage: sdk.Usage | None = None


class OtherState(_Shape):
    """A state this schema does not name (the protocol keeps the set open): a known name must
    take its own shape."""

    model_config = ConfigDict(regex_engine="python-re")
    state: Annotated[str, Field(pattern=r"^(?!(running|idle|requires_action|unknown)$)")]


class SubagentCapabilities(_Shape):
    cancel: dict[str, Any] | None = None  # `session/cancel` on the child alone
    meta: Meta = None


class SubagentUpdate(_Shape):
    """`subagent_update`, on the parent session: the child `sessionId` exists (the first one
    announces it) and these fields of it changed; `null` clears one."""

    session_update: Annotated[Literal["subagent_update"], Field(alias="sessionUpdate")]
    session_id: Annotated[str, Field(alias="sessionId")]
    title: str | None = None
    capabilities: SubagentCapabilities | None = None
    state: RunningState | IdleState | RequiresActionState | UnknownState | OtherState | None = None
    cwd: str | None = None
    additional_directories: Annotated[list[str] | None, Field(alias="additionalDirectories")] = None
    meta: Meta = None


class SessionMessageUpdate(_Shape):
    """`session_message`: a whole message between sessions (a parent's task to its child)."""

    session_update: Annotated[Literal["session_message"], Field(alias="sessionUpdate")]
    message_id: Annotated[str, Field(alias="messageId")]
    sender_session_id: Annotated[str | None, Field(alias="senderSessionId")] = None
    recipient_session_id: Annotated[str | None, Field(alias="recipientSessionId")] = None
    sender_message_id: Annotated[str | None, Field(alias="senderMessageId")] = None
    recipient_message_id: Annotated[str | None, Field(alias="recipientMessageId")] = None
    content: list[ContentBlock] | None = None
    meta: Meta = None


class SessionMessageChunkUpdate(_Shape):
    """`session_message_chunk`: a piece of such a message."""

    session_update: Annotated[Literal["session_message_chunk"], Field(alias="sessionUpdate")]
    message_id: Annotated[str, Field(alias="messageId")]
    content: ContentBlock
    meta: Meta = None


# ---- unstable v1, after 1.19: `session/set_title` (advertised as `sessionCapabilities.title`) --------


class SetSessionTitleRequest(_Shape):
    session_id: Annotated[str, Field(alias="sessionId")]
    title: str
    meta: Meta = None


class SetSessionTitleResponse(_Shape):
    """The title as the agent stored it (it may trim or shorten what it was given)."""

    title: str
    meta: Meta = None


class _Capability(_Shape):
    """A capability the agent advertises as an object (`{}`), or leaves out / `null`."""

    meta: Meta = None


class SystemPromptCapabilities(_Shape):
    mode: dict[str, Any] | None = None  # `{"override": {}}` when a client may replace it
    meta: Meta = None


NEWER_UPDATES: dict[str, type[BaseModel]] = {
    "notice": NoticeUpdate,
    "compaction_update": CompactionUpdate,
    "compaction_summary_chunk": CompactionSummaryChunk,
    "subagent_update": SubagentUpdate,
    "session_message": SessionMessageUpdate,
    "session_message_chunk": SessionMessageChunkUpdate,
}
"""The session update kinds after 1.19, by their `sessionUpdate`."""

UNSTABLE_UPDATES = frozenset(
    {"plan_update", "plan_removed", "subagent_update", "session_message", "session_message_chunk"}
)
"""Kinds that are unstable in ACP v1 (the SDK's models come from the unstable schema and do not say
which): the stable view (`acp_schema`) rejects them, the unstable one (`acp_unstable_schema`) not."""

NEWER_METHODS: dict[str, tuple[str, tuple[type[BaseModel], ...]]] = {
    "session/set_title": ("agent", (SetSessionTitleRequest, SetSessionTitleResponse)),
}
"""Methods after 1.19 that the agent handles: the side that handles each, and its definitions."""

FIELDS_ADDED: dict[str, dict[str, Any]] = {
    # an optional programmatic name beside the title, on every form of a tool call
    **{
        name: {"name": str | None}
        for name in ("ToolCall", "ToolCallUpdate", "ToolCallStart", "ToolCallProgress")
    },
    "SessionCapabilities": {
        "title": _Capability | None,
        "systemPrompt": SystemPromptCapabilities | None,
        "archive": _Capability | None,
        "status": _Capability | None,
    },
    "AgentAuthCapabilities": {"status": _Capability | None},
}
"""Fields added after 1.19 to definitions the SDK has: definition → field → its type."""

NOT_COVERED = (
    "a `null` array (`mcpServers`, `args`, `env`, `headers`, `additionalDirectories`) read as empty: "
    "the client sends those, the agent does not",
    "`session/archive`, `session/unarchive`, `session/status`, `auth/status` and "
    "`auth/status_update`: the agent neither handles nor sends them",
    "`systemPrompt` on session/new, load, resume and fork: the client sends it",
)
"""What ACP v1 added after 1.19 and these checks leave out, and why nothing is lost by it."""
