"""ToolRegistry: find a tool by name, list tools for the API, and check the model's arguments.

The check is a small JSON-schema subset, enough for our own schemas, so a bad argument comes
back to the model as one readable sentence naming the field instead of a stack trace.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from typing import Any

from acp_agent.errors import InvalidToolInput
from acp_agent.tools.base import Tool
from acp_agent.tools.files.edit import EditFile, WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.plan import UpdatePlan
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.tools.shell.task_tools import ReadCommandOutput, StopCommand

__all__ = ["ToolRegistry", "coding_tools", "default_registry", "read_only_tools"]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _has_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    raise ValueError(f"unsupported schema type {kind!r}")


def _check(tool: str, where: str, value: Any, schema: dict[str, Any]) -> Any:
    """Check `value` against `schema`; return it, with integral floats made ints."""
    types = schema.get("type")
    if types is not None:
        kinds = [types] if isinstance(types, str) else list(types)
        if not any(_has_type(value, k) for k in kinds):
            wanted = " or ".join(_TYPE_NAMES.get(k, k) for k in kinds)
            raise InvalidToolInput(f"{tool}: {where} must be {wanted}")
        if isinstance(value, float) and "integer" in kinds and "number" not in kinds:
            value = int(value)
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        raise InvalidToolInput(f"{tool}: {where} must be one of {allowed}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidToolInput(f"{tool}: {where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidToolInput(f"{tool}: {where} must be at most {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        raise InvalidToolInput(f"{tool}: {where} must be at least {schema['minLength']} character(s) long")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        base = where.strip("'")
        value = [_check(tool, f"'{base}[{i}]'", item, schema["items"]) for i, item in enumerate(value)]
    if isinstance(value, dict) and ("properties" in schema or "required" in schema):
        value = _check_object(tool, where.strip("'") + ".", value, schema)
    return value


def _check_object(tool: str, prefix: str, value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            raise InvalidToolInput(f"{tool}: '{prefix}{key}' is required")
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(props))
        if unknown:
            expected = ", ".join(props) or "none"
            raise InvalidToolInput(f"{tool}: unknown argument '{prefix}{unknown[0]}' (expected: {expected})")
    return {
        key: _check(tool, f"'{prefix}{key}'", item, props[key]) if key in props else item
        for key, item in value.items()
    }


class ToolRegistry:
    """The tools of a session, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._api_tools: list[dict[str, Any]] | None = None
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Register `tool`; a second tool with the same name is a programming error."""
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name {tool.name!r}")
        self._tools[tool.name] = tool
        self._api_tools = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in registration order."""
        return tuple(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def api_tools(self) -> list[dict[str, Any]]:
        """The Messages API `tools` parameter, built once (a stable prefix keeps the cache warm).

        Its entries are shared by every registry of the process that offers the same tool (see
        `_shared_entry`): read-only, like the whole list."""
        if self._api_tools is None:
            self._api_tools = [_shared_entry(tool) for tool in self._tools.values()]
        return self._api_tools

    def validate(self, tool: Tool, args: Any) -> dict[str, Any]:
        """Check `args` against the tool's input schema; return them (integral floats as ints).
        Checked before anything is asked or done.

        Defaults are not filled in: tools handle their missing optionals.

        Raises:
            InvalidToolInput: naming the field and what is wrong with it (a lone surrogate too).
        """
        if not isinstance(args, dict):
            raise InvalidToolInput(f"{tool.name}: arguments must be a JSON object")
        checked = _check_object(tool.name, "", args, tool.input_schema)
        return {key: _unicode(tool.name, key, value) for key, value in checked.items()}


_ENTRIES: dict[str, dict[str, Any]] = {}
"""The API entries built so far, by their JSON text: one object per distinct tool definition."""
_MAX_ENTRIES = 1024
"""Beyond this many distinct definitions (MCP servers that change theirs), the oldest go."""


def _shared_entry(tool: Tool) -> dict[str, Any]:
    """`tool`'s entry in the API's `tools`: its name, description and a copy of its input schema.

    Every session offers the same built-in tools, so the entry is shared by content rather than
    copied per session (a session used to keep ~12 KB of schema copies). Equal JSON text means
    the same bytes on the wire, so a shared entry changes no request. Never mutated: a request
    that marks the last tool for the cache copies that entry first (`model/caching.py`).
    """
    try:
        key = json.dumps([tool.name, tool.description, tool.input_schema], ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: its own copy, as before
        return _own_entry(tool)
    entry = _ENTRIES.get(key)
    if entry is None:
        if len(_ENTRIES) >= _MAX_ENTRIES:
            del _ENTRIES[next(iter(_ENTRIES))]
        entry = _ENTRIES[key] = _own_entry(tool)
    return entry


def _own_entry(tool: Tool) -> dict[str, Any]:
    """A new entry for `tool`, with its own copy of the input schema."""
    schema = copy.deepcopy(tool.input_schema)
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(tool: str, where: str, value: Any) -> Any:
    """`value` with every string valid Unicode text.

    A lone surrogate (`"\\ud800"` in the model's JSON) cannot be encoded as UTF-8: written as
    it is, the editor would get invalid text (or the disk write fail after the user allowed it).
    It is refused, so the model can write the text again, rather than replaced with U+FFFD in
    the user's file without a word.
    """
    if isinstance(value, str):
        lone = _SURROGATE.search(value)  # JSON joins a pair's escapes: any one left is lone
        if lone is None:
            return value
        raise InvalidToolInput(
            f"{tool}: '{where}' holds a lone surrogate (U+{ord(lone.group()):04X}) at character "
            f"{lone.start():,}, which is not valid Unicode text; nothing was done. Send the text "
            "again without it (a character beyond U+FFFF is one character, not two halves)"
        )
    if isinstance(value, list):
        return [_unicode(tool, f"{where}[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {
            _unicode(tool, f"{where} (a key)", key): _unicode(tool, f"{where}.{key}", item)
            for key, item in value.items()
        }
    return value


def read_only_tools() -> list[Tool]:
    """The tools that only look: safe to run without asking."""
    return [ReadFile(), ListFiles(), SearchText()]


def coding_tools() -> list[Tool]:
    """Every built-in tool: the read-only ones, then those that edit files and run commands (with
    the two that read and stop the commands run in the background)."""
    return [
        *read_only_tools(),
        WriteFile(),
        EditFile(),
        RunCommand(),
        ReadCommandOutput(),
        StopCommand(),
        UpdatePlan(),
    ]


def default_registry() -> ToolRegistry:
    """A registry with every built-in tool; the session asks before those with a `permission`."""
    return ToolRegistry(coding_tools())
