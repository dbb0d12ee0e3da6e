"""Claude Code's tool names on this agent's tools: the one table, for settings rules, a command's
`allowed-tools` and a client's `allowedTools`.

A rule names a tool as Claude Code does (`Read`, `Bash(npm test)`, `Task(reviewer)`). Without a
specifier it names the tools of `CLAUDE_TOOLS`, and every tool its family covers (a bare `Read` is
`Read(*)`, which Claude Code applies to Grep and Glob too); with one, the tools whose calls that
family's specifier reads (`RULE_FAMILY`: `Read(path)` for read_file, list_files and search_text).
This agent's own names (`edit_file`) are taken as they are, and MCP names (`mcp__server__tool`,
`mcp__server`, `mcp__server__*`) too: `own_tool` is the one mapper (rules, `allowed-tools`, a
client's `allowedTools`, an agent file's `tools`).
"""

from __future__ import annotations

import re

__all__ = [
    "CLAUDE_TOOLS",
    "FAMILY_ALIASES",
    "OWN_TOOLS",
    "RULE_FAMILY",
    "SERVER_TOOLS",
    "UNCONSULTED",
    "WITH_COMMANDS",
    "canonical",
    "claude_name",
    "own_tool",
    "tools_named",
]

OWN_TOOLS = frozenset(
    {
        "read_file",
        "list_files",
        "search_text",
        "write_file",
        "edit_file",
        "run_command",
        "command_output",
        "stop_command",
        "update_plan",
        "ask_user",
        "skill",
        "task",
    }
)
"""This agent's built-in tools (a unit test keeps the set equal to the registry's, `ask_user`,
which is offered when the client has elicitation forms, `skill`, offered when the session has
Agent Skills, and `task`, the subagents, unless `--subagent-tools off`)."""
SERVER_TOOLS = frozenset({"web_search", "web_fetch"})
"""The API's web tools the agent offers (`model/server_tools.py`): a client's tool set names them too."""
CLAUDE_TOOLS: dict[str, str] = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Bash": "run_command",
    "BashOutput": "command_output",
    "KillShell": "stop_command",
    "KillBash": "stop_command",
    "Grep": "search_text",
    "Glob": "list_files",
    "LS": "list_files",
    "TodoWrite": "update_plan",
    "AskUserQuestion": "ask_user",
    "Skill": "skill",
    "WebSearch": "web_search",
    "WebFetch": "web_fetch",
    "Agent": "task",
    "Task": "task",
}
"""Claude Code's tool names (any case) → this agent's tool that does the same."""
FAMILY_ALIASES = {"Task": "Agent", "KillBash": "KillShell"}
"""Old names of a rule's tool (`Task` was renamed `Agent` in Claude Code 2.1.63)."""
WITH_COMMANDS = frozenset({"command_output", "stop_command"})
"""The background commands' tools, which go with run_command: offered with it (a client's tool
set), off the model's list with it (a bare `Bash` deny)."""
RULE_FAMILY: dict[str, str] = {
    "read_file": "Read",
    "list_files": "Read",
    "search_text": "Read",
    "edit_file": "Edit",
    "write_file": "Edit",
    "run_command": "Bash",
    "command_output": "BashOutput",
    "stop_command": "KillShell",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "task": "Agent",
    "skill": "Skill",
    "update_plan": "TodoWrite",
    "ask_user": "AskUserQuestion",
}
"""This agent's tool → the rule whose specifier its calls are matched by (`Read(path)` for every
tool that reads files, as Claude Code applies Read rules to Grep and Glob)."""
UNCONSULTED = frozenset({"Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
"""Names whose path specifier Claude Code accepts but never consults (Read and Edit rules cover
those tools): such a rule is warned about and never matches; a bare one still names its tool."""

_PREFERRED = {"list_files": "Glob", "edit_file": "Edit", "task": "Agent"}
"""Where several Claude Code names map to one tool of this agent, the one hooks are told."""
_CLAUDE_NAME = {own: name for name, own in reversed(CLAUDE_TOOLS.items())} | _PREFERRED


def claude_name(own: str) -> str:
    """The Claude Code name of this agent's tool (`run_command` is `Bash`), as hook matchers and
    a hook's input name it; an MCP tool's or an unknown name as it is."""
    return _CLAUDE_NAME.get(own, own)


_BY_CASE = {name.lower(): own for name, own in CLAUDE_TOOLS.items()}
_MCP_NAME = re.compile(r"mcp__[A-Za-z0-9_-]+(?:__\*)?")
_CANONICAL = {name.lower(): FAMILY_ALIASES.get(name, name) for name in CLAUDE_TOOLS}


def canonical(name: str) -> str:
    """A Claude Code tool name as rules are matched (any case; `Task` is `Agent`); other names as
    they are."""
    return _CANONICAL.get(name.lower(), name)


def own_tool(name: str) -> str | None:
    """The tool here that a name means: this agent's own names, the web tools' and MCP names
    (`mcp__server__tool`, `mcp__server`, `mcp__server__*`) as they are, and Claude Code's names
    (`CLAUDE_TOOLS`, any case); None for a name with no counterpart here."""
    if name in OWN_TOOLS or name in SERVER_TOOLS or _MCP_NAME.fullmatch(name):
        return name
    return _BY_CASE.get(name.lower())


def tools_named(name: str) -> frozenset[str]:
    """This agent's tools a bare rule on `name` covers: the one it maps to, and every tool of its
    family (a bare `Read` covers list_files and search_text; a bare `Edit`, write_file)."""
    own = own_tool(name)
    family = canonical(name)
    found = {tool for tool, rule in RULE_FAMILY.items() if rule == family}
    return frozenset(found | ({own} if own is not None else set()))
