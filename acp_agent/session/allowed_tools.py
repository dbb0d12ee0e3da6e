"""A command's `allowed-tools`: the calls of the turn it starts that need not ask, as in Claude Code.

Claude Code's rule (its docs, "allowed-tools"): the listed tools run without a permission question
while the command (or skill) runs; every other tool is asked as usual. It is a grant, never a
restriction. Here:

- The value is a list (`- Read`) or a string of entries separated by commas or spaces
  (`Bash(git status:*), Read, Edit`). Claude Code's names map to this agent's (`CLAUDE_TOOLS`:
  Read → read_file, Edit and MultiEdit → edit_file, Write → write_file, Bash → run_command, Grep →
  search_text, Glob and LS → list_files...); this agent's own names and MCP names
  (`mcp__server__tool`, `mcp__server` or `mcp__server__*` for all of a server's) are taken as
  they are. Anything else is ignored, and said (`ToolGrants.ignored`: /status and the log).
- `Bash(pattern)` grants the commands it matches: `git status:*` is `git status` and anything after
  it past a space; `*` is any text (`npm run *` also matches `npm run`); no `*` is that exact
  command line. A command line that chains, pipes, redirects or substitutes (`;`, `&`, `|`, `<`,
  `>`, a backquote, `$(`, a newline) is never matched: it is asked as usual. A pattern on another
  tool (`Read(src/**)`, `Edit(docs/*)`) is ignored: only paths this agent's confinement already
  allows could be read or edited, but the pattern would not be enforced.

What a grant never does (`SessionPermissions.ask`): outlive the turn the command starts (the
turn's asker carries it, `permissions.GrantedPermissions`); lift plan mode's refusal, an "always reject"
answer, or the question before an edit of a sensitive file; reach outside the sandbox or the
workspace (the tools' own refusals stand). A subagent of that turn asks through the turn's asker,
so it gets the turn's grants and nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from acp_agent.session.client_options import CLAUDE_TOOLS, OWN_TOOLS

__all__ = ["ToolGrants", "command_matches", "read_allowed_tools"]

_BY_CASE = {name.lower(): own for name, own in CLAUDE_TOOLS.items()}
_ENTRY = re.compile(r"^([A-Za-z0-9_*-]+)(?:\((.*)\))?$", re.DOTALL)
_MCP = re.compile(r"mcp__[A-Za-z0-9_-]+(?:__\*)?")
_CHAINED = re.compile(r"[;&|<>`\n\r]|\$\(")
"""What makes one command line run more than one command, or write where the pattern does not say."""
MAX_ENTRIES = 50


@dataclass(frozen=True, slots=True)
class ToolGrants:
    """The calls a command's turn makes without asking."""

    tools: frozenset[str] = frozenset()
    """Every call of these tools (this agent's names; `mcp__server` for all of a server's)."""
    commands: tuple[str, ...] = ()
    """`run_command` lines matching these patterns (`command_matches`)."""
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
            and isinstance(command, str)
            and any(command_matches(pattern, command) for pattern in self.commands)
        )

    def describe(self) -> str:
        """One line for /status: what is granted, and what was ignored."""
        granted = [*sorted(self.tools), *(f"run_command `{p}`" for p in self.commands)]
        text = f"allowed-tools: {', '.join(granted) or 'none'}"
        return f"{text}; ignored: {'; '.join(self.ignored)}" if self.ignored else text


def read_allowed_tools(value: str) -> ToolGrants:
    """An `allowed-tools` value (the frontmatter's string: a list's items joined with ", ")."""
    tools: set[str] = set()
    commands: list[str] = []
    ignored: list[str] = []
    for entry in _entries(value)[:MAX_ENTRIES]:
        match = _ENTRY.match(entry)
        if match is None:
            ignored.append(f"{entry[:60]} (not a tool name)")
            continue
        name, pattern = match.group(1), match.group(2)
        own = name if name in OWN_TOOLS or _MCP.fullmatch(name) else _BY_CASE.get(name.lower())
        if own is None:
            ignored.append(f"{name[:60]} (no such tool here)")
        elif pattern is None or pattern.strip() in ("", "*"):
            tools.add(own.removesuffix("__*"))
        elif own == "run_command":
            commands.append(pattern.strip())
        else:
            ignored.append(f"{entry[:60]} (a pattern is honoured on Bash only)")
    return ToolGrants(frozenset(tools), tuple(dict.fromkeys(commands)), tuple(ignored))


def _entries(value: str) -> list[str]:
    """The entries of a value, split at commas and spaces outside parentheses."""
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
    """Whether the command line `command` is one `Bash(pattern)` grants (see the module's docstring)."""
    line = command.strip()
    if not line or _CHAINED.search(line):
        return False
    if pattern.endswith(":*"):
        prefix = pattern[:-2].strip()
        return bool(prefix) and (line == prefix or line.startswith(prefix + " "))
    if pattern.endswith(" *"):  # `git *`: git with any arguments, or none
        bare = pattern[:-2].strip()
        if line == bare:
            return True
    regex = ".*".join(re.escape(part) for part in pattern.strip().split("*"))
    return re.fullmatch(regex, line, re.DOTALL) is not None
