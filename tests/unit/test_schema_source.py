"""Where the tests' ACP schema comes from: the official Python SDK's models, as strict as the JSON
schema they were generated from, and the later parts of v1 the agent speaks, written out by hand
(`support/schema_sdk.py`, `support/schema_newer.py`). The shapes of those later parts are checked
here message by message, since no package of the test extra knows them yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import schema as sdk

from tests.support.schema import AcpSchema
from tests.support.schema_newer import FIELDS_ADDED, NEWER_METHODS, NEWER_UPDATES, UNSTABLE_UPDATES
from tests.support.schema_sdk import METHODS, SDK_SCHEMA_REF, sdk_methods

# ---- the SDK, and what is joined to it -------------------------------------------------------------


def test_the_definitions_come_from_the_installed_sdk_of_the_schema_named() -> None:
    """A newer SDK fails here on purpose: what `schema_newer.py` writes out may be in it now."""
    head = Path(sdk.__file__).read_text(encoding="utf-8").splitlines()[:3]
    assert any(SDK_SCHEMA_REF in line for line in head), head


def test_every_method_of_the_sdk_has_its_side_and_definitions_named() -> None:
    assert {m: METHODS[m][0] for m in sdk_methods() if m in METHODS} == sdk_methods()


@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
def test_every_definition_named_for_a_method_exists(unstable: bool) -> None:
    schema = AcpSchema.load(unstable=unstable)
    missing = [n for _, names in METHODS.values() for n in names if n not in schema.defs]
    assert missing == []
    assert schema.def_name("session/update", "Notification") == "SessionNotification"
    assert schema.def_name("elicitation/create", "Request") == "CreateElicitationRequest"
    assert "$/cancel_request" in schema.protocol_methods
    assert "mcp/message" in schema.agent_methods and "mcp/message" in schema.client_methods


def test_what_is_written_out_by_hand_is_not_in_the_sdk_yet() -> None:
    sdk_kinds = {
        variant.model_fields["session_update"].annotation.__args__[0]
        for variant in sdk.SessionNotification.model_fields["update"].annotation.__args__
    }
    assert set(NEWER_UPDATES).isdisjoint(sdk_kinds)
    assert {"plan_update", "plan_removed"} <= sdk_kinds  # the SDK's own unstable kinds
    assert set(NEWER_METHODS).isdisjoint(sdk_methods())
    for name, fields in FIELDS_ADDED.items():
        model = getattr(sdk, name)
        aliases = {info.alias or field for field, info in model.model_fields.items()}
        assert aliases.isdisjoint(fields), name


def test_the_check_is_strict_where_the_sdk_models_are_lenient(acp_schema: AcpSchema) -> None:
    """The models turn a malformed optional field into its default (right for a client); the
    check made from them reports it (right for a test)."""
    read = {"sessionId": "s", "path": "/a", "line": "three"}
    assert sdk.ReadTextFileRequest.model_validate(read).line is None
    assert any("$.line" in p for p in acp_schema.validate("ReadTextFileRequest", read))
    answer = {"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}}
    assert sdk.InitializeResponse.model_validate(answer).agent_capabilities is not None
    assert acp_schema.validate("InitializeResponse", answer)


# ---- the later parts of v1, message by message -----------------------------------------------------

NOTICE = {"sessionUpdate": "notice", "severity": "warning", "title": "The request limit is near"}
COMPACTION = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"}
CHUNK = {
    "sessionUpdate": "compaction_summary_chunk",
    "compactionId": "c1",
    "content": {"type": "text", "text": "s"},
}
CHILD = {
    "sessionUpdate": "subagent_update",
    "sessionId": "child",
    "title": "Find it",
    "state": {"state": "running"},
}
MESSAGE = {
    "sessionUpdate": "session_message",
    "messageId": "m1",
    "senderSessionId": "parent",
    "recipientSessionId": "child",
    "content": [{"type": "text", "text": "find it"}],
}
TOOL_CALL = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read notes.txt", "status": "pending"}


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s", "update": update}


VALID: list[dict[str, Any]] = [
    NOTICE,
    {**NOTICE, "severity": "info", "description": "more\non two lines", "_meta": {"x": 1}},
    {**NOTICE, "severity": "a_later_severity"},  # the protocol keeps the set open
    COMPACTION,
    {**COMPACTION, "status": "completed", "summary": [{"type": "text", "text": "what happened"}]},
    {**COMPACTION, "status": "failed", "error": "the API is down", "summary": None},
    CHUNK,
    {**TOOL_CALL, "name": "read_file"},
    {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": None, "status": "completed"},
]

INVALID: list[tuple[dict[str, Any], str]] = [
    ({**NOTICE, "title": ""}, "$.update.title"),
    ({k: v for k, v in NOTICE.items() if k != "severity"}, "'severity' is a required property"),
    ({**NOTICE, "description": 7}, "$.update.description"),
    ({k: v for k, v in COMPACTION.items() if k != "compactionId"}, "'compactionId' is a required property"),
    ({**COMPACTION, "summary": [{"type": "text"}]}, "$.update.summary"),
    ({**COMPACTION, "error": {"message": "x"}}, "$.update.error"),
    ({**CHUNK, "content": "s"}, "$.update.content"),
    ({**TOOL_CALL, "name": 3}, "$.update.name"),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": ["a"]}, "$.update.name"),
]


@pytest.mark.parametrize("update", VALID, ids=lambda u: u["sessionUpdate"])
def test_the_later_stable_updates_are_accepted_in_both_views(
    acp_schema: AcpSchema, acp_unstable_schema: AcpSchema, update: dict[str, Any]
) -> None:
    assert acp_schema.validate("SessionNotification", _update(update)) == []
    assert acp_unstable_schema.validate("SessionNotification", _update(update)) == []


@pytest.mark.parametrize(
    ("update", "fragment"), INVALID, ids=lambda x: x["sessionUpdate"] if isinstance(x, dict) else ""
)
def test_a_malformed_later_update_is_reported(
    acp_schema: AcpSchema, update: dict[str, Any], fragment: str
) -> None:
    problems = acp_schema.validate("SessionNotification", _update(update))
    assert any(fragment in p for p in problems), problems


CHILD_VALID: list[dict[str, Any]] = [
    CHILD,
    {**CHILD, "capabilities": {"cancel": {}}},
    {**CHILD, "capabilities": None, "state": {"state": "idle", "stopReason": "end_turn"}},
    {**CHILD, "state": {"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "x"}}},
    {**CHILD, "state": {"state": "idle", "stopReason": None}},
    {**CHILD, "state": {"state": "a_later_state"}},
    {**CHILD, "state": None, "cwd": "/w", "additionalDirectories": ["/x"]},
    MESSAGE,
    {"sessionUpdate": "session_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "f"}},
    {"sessionUpdate": "plan_removed", "planId": "p1"},  # an unstable kind the SDK has
]

CHILD_INVALID: list[tuple[dict[str, Any], str]] = [
    ({k: v for k, v in CHILD.items() if k != "sessionId"}, "'sessionId' is a required property"),
    ({**CHILD, "title": 5}, "$.update.title"),
    ({**CHILD, "capabilities": {"cancel": True}}, "$.update.capabilities"),
    ({**CHILD, "state": {"state": "running", "_meta": 3}}, "$.update.state"),
    ({**CHILD, "state": {"state": "idle", "error": {"code": "x", "message": "m"}}}, "$.update.state"),
    ({**CHILD, "state": {"state": "idle", "usage": {"inputTokens": -1}}}, "$.update.state"),
    ({**CHILD, "state": "running"}, "$.update.state"),
    ({k: v for k, v in MESSAGE.items() if k != "messageId"}, "'messageId' is a required property"),
    ({**MESSAGE, "content": [{"type": "text", "text": 1}]}, "$.update.content"),
]


@pytest.mark.parametrize("update", CHILD_VALID, ids=lambda u: u["sessionUpdate"])
def test_the_unstable_updates_are_valid_only_in_the_unstable_view(
    acp_schema: AcpSchema, acp_unstable_schema: AcpSchema, update: dict[str, Any]
) -> None:
    assert update["sessionUpdate"] in UNSTABLE_UPDATES
    assert acp_unstable_schema.validate("SessionNotification", _update(update)) == []
    assert acp_schema.validate("SessionNotification", _update(update))


@pytest.mark.parametrize(
    ("update", "fragment"), CHILD_INVALID, ids=lambda x: x["sessionUpdate"] if isinstance(x, dict) else ""
)
def test_a_malformed_unstable_update_is_reported(
    acp_unstable_schema: AcpSchema, update: dict[str, Any], fragment: str
) -> None:
    problems = acp_unstable_schema.validate("SessionNotification", _update(update))
    assert any(fragment in p for p in problems), problems


def test_set_title_is_answered_with_the_title_stored(acp_schema: AcpSchema) -> None:
    assert "session/set_title" in acp_schema.agent_methods
    name = acp_schema.def_name("session/set_title", "Response")
    assert name and acp_schema.validate(name, {"title": "Refactor the parser"}) == []
    assert any("'title' is a required property" in p for p in acp_schema.validate(name, {}))
    assert acp_schema.validate(name, {"title": None})


def test_the_later_capabilities_of_initialize_have_their_shape(acp_schema: AcpSchema) -> None:
    caps = {"sessionCapabilities": {"title": {}, "systemPrompt": {}, "list": {}}, "auth": {"logout": {}}}
    assert acp_schema.validate("InitializeResponse", {"protocolVersion": 1, "agentCapabilities": caps}) == []
    for bad in ({"title": True}, {"systemPrompt": {"mode": "override"}}, {"archive": []}):
        answer = {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": bad}}
        assert acp_schema.validate("InitializeResponse", answer), bad


def test_a_permission_question_checks_the_tool_calls_name(acp_schema: AcpSchema) -> None:
    ask = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "name": "bash"},
        "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
    }
    assert acp_schema.validate("RequestPermissionRequest", ask) == []
    problems = acp_schema.validate(
        "RequestPermissionRequest", {**ask, "toolCall": {"toolCallId": "t", "name": 1}}
    )
    assert any("$.toolCall.name" in p for p in problems), problems
