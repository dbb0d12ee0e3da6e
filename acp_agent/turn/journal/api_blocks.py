"""The Messages API's blocks and messages, as a journal entry carries them.

Checked only as far as the history relies on them, and kept as plain dicts: they go back to the
API unchanged. Their JSON schema (for `schemas/journal-entry.schema.json`) says as much, no more.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

__all__ = ["Block", "Message", "ResultBlock"]


def _block(block: dict[str, Any]) -> dict[str, Any]:
    """A Messages API content block, checked only as far as the history relies on it."""
    kind = block.get("type")
    if not isinstance(kind, str):
        raise ValueError("a block without a type")
    if kind == "tool_use" and not (isinstance(block.get("id"), str) and isinstance(block.get("name"), str)):
        raise ValueError("a tool_use without an id and a name")
    if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
        raise ValueError("a tool_result without a tool_use_id")
    if kind in {"text", "thinking"} and not isinstance(block.get(kind), str):
        raise ValueError(f"a {kind} block without its text")
    return block


Block = Annotated[
    dict[str, Any],
    AfterValidator(_block),
    WithJsonSchema({"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}),
]
"""A content block as the Messages API takes it (kept as a plain dict: it goes back unchanged)."""


def _message(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") not in {"user", "assistant"}:
        raise ValueError("a message whose role is not user or assistant")
    content = message.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise ValueError("a message whose content is not a list of blocks")
    for block in content:
        _block(block)
    return message


Message = Annotated[
    dict[str, Any],
    AfterValidator(_message),
    WithJsonSchema(
        {
            "type": "object",
            "required": ["role", "content"],
            "properties": {"role": {"enum": ["user", "assistant"]}, "content": {"type": "array"}},
        }
    ),
]


def _result_block(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") != "tool_result":
        raise ValueError("not a tool_result block")
    return block


ResultBlock = Annotated[Block, AfterValidator(_result_block)]
"""A `tool_result` block."""
