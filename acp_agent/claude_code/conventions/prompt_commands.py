"""`/init` and `/review`: Claude Code's everyday commands that are prompts, built in as command
files are (`CustomCommand`), so they run as any command's turn does (`session/commands/command_turn.py`):
one metered turn, the `!` lines run as tool calls of it, the user asked as for any edit.

A project's or the user's command or skill of the same name runs instead (`find_invocation` looks
at the session's own first). The texts are ours, not Claude Code's.
"""

from __future__ import annotations

from pathlib import Path

from acp_agent.claude_code.conventions.conventions import CustomCommand

__all__ = ["PROMPT_COMMANDS"]

_BUILT_IN = Path("(built-in)")

INIT = CustomCommand(
    "init",
    _BUILT_IN,
    "Write a CLAUDE.md at the root of this workspace for the agents that will work here after you "
    "(if one exists, improve it rather than start over).\n\n"
    "First look around: the README, the build and package files, the CI configuration, the test "
    "layout, and any AGENTS.md, .cursorrules or .github/copilot-instructions.md (fold what still "
    "holds into yours). Then write, concisely:\n"
    "- the commands to build, lint, test, and run a single test;\n"
    "- the architecture that takes several files to understand: the main parts, how a request or "
    "a change flows through them, where the entry points are;\n"
    "- the conventions this code base keeps that a newcomer would get wrong.\n"
    "Leave out what any developer knows, what a file listing shows, and advice that is not "
    "specific to this project. Create or edit the file with your file tools.\n\n"
    "$ARGUMENTS\n",
    source="built-in",
    description="Write (or improve) CLAUDE.md for this code base (one model turn; edits asked as usual)",
)

REVIEW = CustomCommand(
    "review",
    _BUILT_IN,
    "Review the uncommitted changes of this working tree as a careful senior reviewer would.\n\n"
    "Status:\n!`git status --short`\n\n"
    "Diff against HEAD:\n!`git diff HEAD`\n\n"
    "$ARGUMENTS\n\n"
    "Look for bugs, unhandled errors and edge cases, security problems, missing or weak tests, "
    "and code that is harder to follow than it needs to be. Read the surrounding code where the "
    "diff alone does not tell. Report your findings ordered by severity, each with the file and "
    "line, what is wrong and a suggested fix; say so plainly if you found nothing that matters. "
    "Do not edit any file.\n",
    source="built-in",
    description="Review the working tree's uncommitted diff (one model turn; git status, diff run unasked)",
    argument_hint="[what to focus on]",
    allowed_tools="Bash(git status:*), Bash(git diff:*)",
)

PROMPT_COMMANDS = {command.name: command for command in (INIT, REVIEW)}
"""The built-in commands that are prompts, by name."""
