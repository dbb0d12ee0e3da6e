"""Custom subagents as Claude Code defines them: a markdown file in `.claude/agents/`.

The frontmatter names the agent (`name`: any one line without `:`, as Claude Code takes it:
`powershell-5.1-expert` is a name), says when to use
it (`description`: the model reads it to choose one), may narrow its tools (`tools`, and
`disallowedTools`: Claude Code's names or this agent's, a comma list or a YAML list) and pick its
model (`model`: `sonnet`, `opus`, `haiku`, `inherit` or a model id); the body is its system
prompt. `convention_files.py` finds the files (where, which wins, the caps); the session's `task`
tool offers each as a subagent type (`session/subagents/tool.py`).

A file is left out, with why, when it has no name or no description, a frontmatter outside the
subset `frontmatter.py` reads, or an empty body. A tool it names that means nothing here, or
names with a pattern (`Bash(git *)`, which a subagent's tool list does not enforce), is ignored,
and said: an agent's tools only ever narrow what the session's subagents get.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from acp_agent.claude_code.conventions.allowed_tools import tool_entries
from acp_agent.claude_code.settings.frontmatter import split_frontmatter
from acp_agent.permissions.tool_names import own_tool

__all__ = ["INHERIT", "MAX_NAME", "MAX_TOOL_ENTRIES", "CustomAgent", "read_agent"]

INHERIT = "inherit"
"""The `model` of an agent that runs on the session's model (also when the key is absent)."""
MAX_TOOL_ENTRIES = 100
MAX_NAME = 128
"""Characters of an agent's name: it is listed in the task tool's description and in /agents."""
_ENTRY = re.compile(r"^([A-Za-z0-9_*-]+)(\(.*\))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CustomAgent:
    """One agent file: a subagent type the `task` tool offers by `name`."""

    name: str
    description: str
    path: Path
    prompt: str
    """The file's body: the subagent's system prompt."""
    source: str = "project"
    tools: tuple[str, ...] | None = None
    """The tools it may use, by this agent's names (and MCP names); None: every subagent tool."""
    disallowed: tuple[str, ...] = ()
    """Tools it may not use, by the same names."""
    model: str = INHERIT
    """As written: an alias (`sonnet`, `opus`, `haiku`), a model id, or `inherit`."""
    ignored: tuple[str, ...] = ()
    """The tool entries that mean nothing here, each with why."""


def read_agent(path: Path, text: str, source: str) -> CustomAgent | str:
    """The agent a file defines, or why the file is left out."""
    fields, body, problem = split_frontmatter(text)
    name, description = fields.get("name", "").strip(), " ".join(fields.get("description", "").split())
    if problem:
        return problem
    if not name:
        return "`name` is missing from its frontmatter"
    if ":" in name:  # Claude Code's one refusal: `:` joins a plugin's name to its agents'
        return f"`name` {name[:80]!r} holds a `:`, which joins a plugin's name to its agents' names"
    if not name.isprintable() or len(name) > MAX_NAME:
        return f"`name` {name[:80]!r} is not one printable line of at most {MAX_NAME} characters"
    if not description:
        return "`description` is missing from its frontmatter"
    if not body.strip():
        return "its body (the subagent's system prompt) is empty"
    ignored: list[str] = []
    tools = _tools(fields["tools"], ignored) if "tools" in fields else None
    disallowed = _tools(fields.get("disallowedtools", ""), ignored)
    return CustomAgent(
        name,
        description,
        path,
        body.strip(),
        source,
        tools,
        disallowed,
        fields.get("model", "").strip() or INHERIT,
        tuple(ignored),
    )


def _tools(value: str, ignored: list[str]) -> tuple[str, ...]:
    """The tools a `tools` value names, by this agent's names; what it cannot use goes to `ignored`."""
    names: dict[str, None] = {}
    entries = tool_entries(value)
    if len(entries) > MAX_TOOL_ENTRIES:
        ignored.append(f"{len(entries) - MAX_TOOL_ENTRIES} entries past the first {MAX_TOOL_ENTRIES}")
    for entry in entries[:MAX_TOOL_ENTRIES]:
        match = _ENTRY.match(entry)
        own = own_tool(match.group(1)) if match else None
        if match is None or own is None:
            ignored.append(f"{entry[:60]} (no such tool here)")
        elif match.group(2) is not None:
            ignored.append(f"{entry[:60]} (a pattern is not honoured in an agent's tools: left out)")
        else:
            names[own] = None
    return tuple(names)
