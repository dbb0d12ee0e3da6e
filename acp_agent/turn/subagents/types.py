"""The subagents a `task` tool offers by name (custom agents), and how its schema lists them.

Each `SubagentType` is a subagent with its own system prompt, tools and model; the session side
makes them (`session/subagents/tool.py`). The tool's description lists them, sorted by name, one
line each (a description cut at DESCRIPTION_CHARS), within LISTED_CHARS in all; its input schema
takes `subagent_type`, one of those names or general-purpose. Both are decided once, when the
session's tools are: the tool list is part of the cached prefix. A type past the cap is not
offered, and the description says how many were left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.settings import RunnerSettings

__all__ = [
    "DESCRIPTION_CHARS",
    "GENERAL",
    "LISTED_CHARS",
    "SubagentType",
    "listed_types",
    "types_schema",
    "types_text",
]

GENERAL = "general-purpose"
"""The subagent a call without `subagent_type` gets (Claude Code's name for it)."""
LISTED_CHARS = 8_000
"""Characters of subagent types (names and descriptions) in the tool's description, all together."""
DESCRIPTION_CHARS = 300
"""Characters of one type's description there (the rest is cut)."""


@dataclass(frozen=True, slots=True)
class SubagentType:
    """A subagent the `task` tool offers by name (a custom agent): its own prompt, tools and model."""

    name: str
    description: str
    tools: ToolRegistry
    system: Callable[[], str]
    """Its system prompt, built on its first call."""
    settings: Callable[[RunnerSettings], RunnerSettings] | None = None
    """Its requests' settings from the parent's (its model, with the thinking and effort that model
    takes, and its web tools); None: the parent's. The system prompt is set after."""
    model: str | None = None
    """The model it runs on (what `settings` gives); None: the parent's."""


def listed_types(types: Sequence[SubagentType]) -> tuple[dict[str, SubagentType], tuple[str, ...]]:
    """The types offered (sorted by name), as far as their lines fit `LISTED_CHARS`, and the rest."""
    listed: dict[str, SubagentType] = {}
    left_out: list[str] = []
    room = LISTED_CHARS
    for kind in sorted(types, key=lambda t: t.name):
        size = len(_line(kind)) + 1
        if size > room:
            left_out.append(kind.name)
            continue
        room -= size
        listed[kind.name] = kind
    return listed, tuple(left_out)


def _line(kind: SubagentType) -> str:
    description = " ".join(kind.description.split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1] + "…"
    return f"- {kind.name}: {description}"


def types_text(types: Mapping[str, SubagentType], left_out: Sequence[str]) -> str:
    lines = [_line(kind) for kind in types.values()]
    if GENERAL not in types:
        lines.insert(0, f"- {GENERAL}: the default helper, with every tool a subagent may have")
    text = (
        "\n\nSubagent types (`subagent_type`; without it, general-purpose). Pick the one whose "
        "description fits the task:\n" + "\n".join(lines)
    )
    if left_out:
        text += f"\n({len(left_out)} more are not offered: the list's cap)"
    return text


def types_schema(schema: dict[str, Any], types: Mapping[str, SubagentType]) -> dict[str, Any]:
    """The input schema with `subagent_type`, one of the types offered (or general-purpose)."""
    names = sorted({GENERAL, *types})
    kind = {
        "type": "string",
        "enum": names,
        "description": "Which subagent runs the task (see the tool's description); default general-purpose.",
    }
    return {**schema, "properties": {**schema["properties"], "subagent_type": kind}}
