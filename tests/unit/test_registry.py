"""ToolRegistry: lookup, the API tool list, and argument checks that name the field."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from acp_agent.errors import InvalidToolInput
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.registry import ToolRegistry, default_registry


@dataclass
class Echo:
    """A tool with every schema feature the checker supports."""

    name: str = "echo"
    description: str = "Echo the arguments back."
    kind: str = "other"
    input_schema: Any = None

    def __post_init__(self) -> None:
        if self.input_schema is None:
            self.input_schema = {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "mode": {"type": "string", "enum": ["loud", "quiet"]},
                    "times": {"type": "integer", "minimum": 1, "maximum": 5},
                    "ratio": {"type": "number"},
                    "dry_run": {"type": "boolean"},
                    "note": {"type": ["string", "null"]},
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                            "required": ["old", "new"],
                            "additionalProperties": False,
                        },
                    },
                    "meta": {"type": "object"},
                },
                "required": ["text"],
                "additionalProperties": False,
            }

    def title(self, args: dict[str, Any]) -> str:
        return "Echo"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(text=repr(args))


def test_default_registry_holds_every_built_in_tool() -> None:
    registry = default_registry()
    assert registry.names == (
        "read_file",
        "list_files",
        "search_text",
        "write_file",
        "edit_file",
        "run_command",
        "command_output",
        "stop_command",
        "update_plan",
    )
    read = registry.get("read_file")
    assert read is not None and read.kind == "read" and read.permission is None
    write = registry.get("write_file")
    assert write is not None and write.permission == "edit"
    command = registry.get("run_command")
    assert command is not None and command.permission == "execute"


def test_each_session_gets_its_own_plan() -> None:
    assert default_registry().get("update_plan") is not default_registry().get("update_plan")


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate tool name 'echo'"):
        ToolRegistry([Echo(), Echo()])


def test_api_tools_is_built_once_and_rebuilt_after_add() -> None:
    registry = default_registry()
    first = registry.api_tools()
    assert registry.api_tools() is first
    assert [set(t) for t in first] == [{"name", "description", "input_schema"}] * len(first)
    registry.add(Echo())
    second = registry.api_tools()
    assert second is not first and second[-1]["name"] == "echo"


def test_api_tools_schemas_are_copies() -> None:
    registry = default_registry()
    read = registry.get("read_file")
    entry = registry.api_tools()[0]
    assert read is not None and entry["name"] == "read_file"
    assert entry["input_schema"] == read.input_schema and entry["input_schema"] is not read.input_schema


def test_registries_offering_the_same_tools_share_their_api_entries() -> None:
    """Every session offers the same built-in tools: one entry per tool for the whole process,
    not a copy of every schema per session, with the very same JSON as a copy of its own."""
    first, second = default_registry().api_tools(), default_registry().api_tools()
    assert first is not second  # each registry has its own list (a session may add tools)
    assert all(a is b for a, b in zip(first, second, strict=True))
    tools = default_registry()
    own = [
        {"name": t.name, "description": t.description, "input_schema": copy.deepcopy(t.input_schema)}
        for name in tools.names
        if (t := tools.get(name)) is not None
    ]
    assert json.dumps(first) == json.dumps(own)


def test_a_tool_with_another_definition_gets_its_own_entry() -> None:
    plain, other_text = ToolRegistry([Echo()]), ToolRegistry([Echo(description="Echo louder.")])
    schema = Echo().input_schema
    schema["properties"]["extra"] = {"type": "string"}
    other_schema = ToolRegistry([Echo(input_schema=schema)])
    same = ToolRegistry([Echo()])
    entries = [r.api_tools()[0] for r in (plain, other_text, other_schema, same)]
    assert entries[3] is entries[0]
    assert entries[1] is not entries[0] and entries[1]["description"] == "Echo louder."
    assert entries[2] is not entries[0] and "extra" in entries[2]["input_schema"]["properties"]
    assert "extra" not in entries[0]["input_schema"]["properties"]


def test_a_schema_that_is_not_json_gets_its_own_copy() -> None:
    odd = {"type": "object", "properties": {}, "x-sentinel": object()}
    first, second = ToolRegistry([Echo(input_schema=odd)]), ToolRegistry([Echo(input_schema=odd)])
    a, b = first.api_tools()[0], second.api_tools()[0]
    assert a is not b and a["input_schema"] is not odd and set(a["input_schema"]) == set(odd)


def test_every_default_schema_is_valid_json_schema() -> None:
    for tool in default_registry().api_tools():
        jsonschema.Draft202012Validator.check_schema(tool["input_schema"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "read_file: 'path' is required"),
        ({"path": "a", "limit": "10"}, "read_file: 'limit' must be an integer"),
        ({"path": "a", "limit": True}, "read_file: 'limit' must be an integer"),
        ({"path": "a", "limit": 2.5}, "read_file: 'limit' must be an integer"),
        ({"path": "a", "offset": 0}, "read_file: 'offset' must be at least 1"),
        ({"path": 7}, "read_file: 'path' must be a string"),
        ({"path": "a", "lines": 3}, "read_file: unknown argument 'lines' (expected: path, offset, limit)"),
    ],
)
def test_read_file_argument_errors_name_the_field(args: dict[str, Any], message: str) -> None:
    registry = default_registry()
    tool = registry.get("read_file")
    assert tool is not None
    with pytest.raises(InvalidToolInput) as info:
        registry.validate(tool, args)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"text": ""}, "echo: 'text' must be at least 1 character(s) long"),
        ({"text": "a", "mode": "shout"}, "echo: 'mode' must be one of 'loud', 'quiet'"),
        ({"text": "a", "times": 6}, "echo: 'times' must be at most 5"),
        ({"text": "a", "ratio": "1"}, "echo: 'ratio' must be a number"),
        ({"text": "a", "dry_run": 1}, "echo: 'dry_run' must be a boolean"),
        ({"text": "a", "note": 3}, "echo: 'note' must be a string or null"),
        ({"text": "a", "edits": {}}, "echo: 'edits' must be an array"),
        ({"text": "a", "edits": [{"old": "x"}]}, "echo: 'edits[0].new' is required"),
        ({"text": "a", "edits": [{"old": "x", "new": 1}]}, "echo: 'edits[0].new' must be a string"),
        (
            {"text": "a", "edits": [{"old": "", "new": "", "x": 1}]},
            "echo: unknown argument 'edits[0].x' (expected: old, new)",
        ),
        ({"text": "a", "meta": []}, "echo: 'meta' must be an object"),
    ],
)
def test_schema_features_produce_field_named_errors(args: dict[str, Any], message: str) -> None:
    tool = Echo()
    with pytest.raises(InvalidToolInput) as info:
        ToolRegistry([tool]).validate(tool, args)
    assert str(info.value) == message


def test_arguments_that_are_not_an_object_are_refused() -> None:
    tool = Echo()
    with pytest.raises(InvalidToolInput, match="echo: arguments must be a JSON object"):
        ToolRegistry([tool]).validate(tool, ["text"])


def test_valid_arguments_come_back_without_injected_defaults() -> None:
    registry = default_registry()
    tool = registry.get("list_files")
    assert tool is not None
    assert registry.validate(tool, {}) == {}
    echo = Echo()
    args = {
        "text": "a",
        "times": 2.0,
        "ratio": 1,
        "note": None,
        "meta": {"any": [1]},
        "edits": [{"old": "x", "new": "y"}],
    }
    checked = ToolRegistry([echo]).validate(echo, args)
    assert checked == args and type(checked["times"]) is int  # JSON 2.0 is an integer


@pytest.mark.parametrize(
    "args",
    [
        {"text": "a"},
        {},
        {"text": 1},
        {"text": "a", "times": 0},
        {"text": "a", "times": 3.0},
        {"text": "a", "times": 3.5},
        {"text": "a", "ratio": True},
        {"text": "a", "ratio": 0.5},
        {"text": "a", "mode": "loud"},
        {"text": "a", "mode": None},
        {"text": "a", "note": None},
        {"text": "a", "edits": []},
        {"text": "a", "edits": [{"old": "a", "new": "b", "c": 1}]},
        {"text": "a", "extra": 1},
        {"text": "", "dry_run": False},
        {"text": "a", "meta": {"k": 1}},
    ],
)
def test_checker_agrees_with_jsonschema_on_our_subset(args: dict[str, Any]) -> None:
    tool = Echo()
    expected = jsonschema.Draft202012Validator(tool.input_schema).is_valid(args)
    try:
        ToolRegistry([tool]).validate(tool, args)
    except InvalidToolInput:
        accepted = False
    else:
        accepted = True
    assert accepted is expected


def test_a_lone_surrogate_anywhere_in_the_arguments_is_refused_naming_the_field() -> None:
    registry = ToolRegistry([Echo()])
    tool = registry.get("echo")
    assert tool is not None
    assert registry.validate(tool, {"text": "caf\u00e9 \U0001f600"})["text"] == "caf\u00e9 \U0001f600"
    for args, field in (
        ({"text": "a\udc80b"}, "'text'"),
        ({"text": "ok", "edits": [{"old": "x", "new": "\ud800"}]}, "'edits[0].new'"),
        ({"text": "ok", "meta": {"\udfff": 1}}, "'meta (a key)'"),
    ):
        with pytest.raises(InvalidToolInput, match=f"echo: {re.escape(field)} holds a lone surrogate"):
            registry.validate(tool, args)
