"""The tests' schema validator (`support/schema.py`) writes bounded failure messages, and judges every
instance exactly as jsonschema's own Draft 2020-12 validator does: the same errors, at the same
places, from the same keywords."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tests.support.schema import AcpSchema, BoundedValidator

BIG = "A" * 100_000
"""A long string, as a screenshot's base64 is (that is 5 MB: a message repeating it whole per failed
union branch took seconds)."""

CASES: list[tuple[str, Any]] = [
    (
        "SessionNotification",
        {
            "sessionId": "s",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        },
    ),
    ("SessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "notice", "text": "x"}}),
    (
        "SessionNotification",
        {
            "sessionId": "s",
            "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "cancelled"},
        },
    ),
    (
        "SessionNotification",
        {"sessionId": 7, "update": {"sessionUpdate": "current_mode_update", "modeId": "ask"}},
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t",
                "content": [
                    {"type": "content", "content": {"type": "image", "data": BIG, "mimeType": "image/png"}}
                ],
            },
        },
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t",
                "content": [{"type": "content", "content": {"type": "image", "data": 5, "mimeType": BIG}}],
            },
        },
    ),
    ("PromptResponse", {"stopReason": "done"}),
    ("PromptResponse", {"stopReason": "end_turn", "_meta": {"x": BIG}}),
    ("LoadSessionResponse", None),
    (
        "RequestPermissionRequest",
        {
            "sessionId": "s",
            "toolCall": {"toolCallId": "t"},
            "options": [{"optionId": "a", "name": "Allow", "kind": "sometimes"}],
        },
    ),
]


def errors(validator: Any, instance: Any) -> list[tuple[str, str, str]]:
    """Each error, nested union branches included, as (where, keyword, schema path)."""
    out = []
    stack = list(validator.iter_errors(instance))
    while stack:
        error = stack.pop()
        out.append((error.json_path, error.validator, "/".join(map(str, error.relative_schema_path))))
        stack.extend(error.context or ())
    return sorted(out)


@pytest.mark.parametrize(("definition", "instance"), CASES)
def test_the_verdicts_are_jsonschemas_own(acp_schema: AcpSchema, definition: str, instance: Any) -> None:
    schema = {"$ref": f"#/$defs/{definition}", "$defs": acp_schema.defs}
    ours, theirs = BoundedValidator(schema), jsonschema.Draft202012Validator(schema)
    assert ours.is_valid(instance) == theirs.is_valid(instance)
    assert errors(ours, instance) == errors(theirs, instance)


def test_a_failure_inside_a_huge_update_is_reported_briefly(acp_schema: AcpSchema) -> None:
    definition, instance = CASES[5]
    validator = BoundedValidator({"$ref": f"#/$defs/{definition}", "$defs": acp_schema.defs})
    stack = list(validator.iter_errors(instance))
    assert stack
    while stack:
        error = stack.pop()
        assert len(error.message) < 1_000, error.message[:300]
        stack.extend(error.context or ())
    problems = acp_schema.validate(definition, instance)
    assert any("$.update" in problem for problem in problems), problems
