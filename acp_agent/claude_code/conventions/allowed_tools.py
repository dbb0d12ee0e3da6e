"""A command's `allowed-tools`: the calls of the turn it starts that need not ask, as in Claude Code.

Claude Code's rule (its docs, "allowed-tools"): the listed tools run without a permission question
while the command (or skill) runs; every other tool is asked as usual. It is a grant, never a
restriction. Here:

- The value is a list (`- Read`) or a string of entries separated by commas or spaces
  (`Bash(git status:*), Read, Edit`). Claude Code's names map to this agent's by the one table,
  `permissions/tool_names.py` (Read → read_file, Edit and MultiEdit → edit_file, Write → write_file,
  Bash → run_command, Grep → search_text, Glob and LS → list_files...); this agent's own names
  and MCP names (`mcp__server__tool`, `mcp__server` or `mcp__server__*` for all of a server's)
  are taken as they are. Anything else is ignored, and said (`ToolGrants.ignored`: /status and
  the log).
- `Bash(pattern)` grants the commands it matches (`tools/shell/command_line.py`): `git status:*` is the
  words `git status` and any arguments after them; `*` is any text (`npm run *` also matches `npm
  run`); no `*` is that exact command. The line is matched as bash would run it, not as text: it
  is split at `;`, `&&`, `||`, `|` and newlines, each simple command must be granted on its own,
  and a line with anything bash would expand or treat specially (any `$` or backquote, a `!`,
  a redirection, a glob, a subshell, an assignment before the command...) is never matched: it
  is asked as usual. A pattern that is not one simple command is ignored and said. A pattern on
  another tool (`Read(src/**)`, `Edit(docs/*)`) is ignored: only paths this agent's confinement
  already allows could be read or edited, but the pattern would not be enforced.

What a grant never does (the rule engine, `permissions/engine.py`, weighs it with the allow
rules, after the deny rules, plan mode, the ask rules and the sensitive-path guard): outlive the
turn the command starts (the turn's asker carries it, `permissions.GrantedPermissions`); lift plan
mode's refusal, an "always reject" answer, or the question before an edit of a sensitive file;
reach outside the sandbox or the workspace (the tools' own refusals stand). A subagent of that
turn asks through the turn's asker, so it gets the turn's grants and nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from acp_agent.permissions.tool_names import own_tool
from acp_agent.tools.shell.command_patterns import CommandPattern, line_matches, read_pattern

__all__ = ["ToolGrants", "command_matches", "read_allowed_tools", "tool_entries"]

_ENTRY = re.compile(r"^([A-Za-z0-9_*-]+)(?:\((.*)\))?$", re.DOTALL)
MAX_ENTRIES = 50


@dataclass(frozen=True, slots=True)
class ToolGrants:
    """The calls a command's turn makes without asking."""

    tools: frozenset[str] = frozenset()
    """Every call of these tools (this agent's names; `mcp__server` for all of a server's)."""
    commands: tuple[CommandPattern, ...] = ()
    """`run_command` lines whose every simple command matches one of these."""
    ignored: tuple[str, ...] = ()
    """Entries not honoured, each with why."""

    def __bool__(self) -> bool:
        return bool(self.tools or self.commands)

    def covers(self, tool_name: str, raw_input: dict[str, Any]) -> bool:
        """Whether this call is granted (the caller still applies the mode and the refusals)."""
        if tool_name in self.tools:
            return True
        if tool_name.startswith("mcp__"):
            server = "__".join(tool_name.split("__")[:2])
            return server in self.tools
        command = raw_input.get("command")
        return (
            tool_name == "run_command"
            and bool(self.commands)
            and isinstance(command, str)
            and line_matches(self.commands, command)
        )

    def describe(self) -> str:
        """One line for /status: what is granted, and what was ignored."""
        granted = [*sorted(self.tools), *(f"run_command `{p}`" for p in self.commands)]
        text = f"allowed-tools: {', '.join(granted) or 'none'}"
        return f"{text}; ignored: {'; '.join(self.ignored)}" if self.ignored else text


def read_allowed_tools(value: str) -> ToolGrants:
    """An `allowed-tools` value (the frontmatter's string: a list's items joined with ", ")."""
    tools: set[str] = set()
    commands: dict[str, CommandPattern] = {}
    ignored: list[str] = []
    for entry in tool_entries(value)[:MAX_ENTRIES]:
        match = _ENTRY.match(entry)
        if match is None:
            ignored.append(f"{entry[:60]} (not a tool name)")
            continue
        name, pattern = match.group(1), match.group(2)
        own = own_tool(name)
        if own is None:
            ignored.append(f"{name[:60]} (no such tool here)")
        elif pattern is None or pattern.strip() in ("", "*"):
            tools.add(own.removesuffix("__*"))
        elif own == "run_command":
            read = read_pattern(pattern)
            if isinstance(read, str):
                ignored.append(f"{entry[:60]} (not one simple command: {read})")
            else:
                commands.setdefault(read.text, read)
        else:
            ignored.append(f"{entry[:60]} (a pattern is honoured on Bash only)")
    return ToolGrants(frozenset(tools), tuple(commands.values()), tuple(ignored))


def tool_entries(value: str) -> list[str]:
    """The entries of a tool list (`Read, Bash(git status:*)`), split at commas and spaces outside
    parentheses."""
    entries, depth, current = [], 0, ""
    for char in value:
        if char in ", \t\n" and depth == 0:
            if current:
                entries.append(current)
            current = ""
            continue
        depth += (char == "(") - (char == ")" and depth > 0)
        current += char
    if current:
        entries.append(current)
    return entries


def command_matches(pattern: str, command: str) -> bool:
    """Whether `Bash(pattern)` alone grants the command line `command` (see the module's docstring)."""
    read = read_pattern(pattern)
    return not isinstance(read, str) and line_matches((read,), command)
