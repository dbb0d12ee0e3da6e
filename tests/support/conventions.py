"""A repository that holds what a Claude user brings: command files, skills, a user-level command.

`claude_repo(tmp_path)` writes it into `tmp_path/workspace` (a git repository) and the user's home
the agent sees (`tmp_path/home`, as `base_env` sets HOME), and returns the workspace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["EXPECTED_COMMANDS", "MCP_SERVER", "SKILL_BODY", "claude_repo", "mcp_server", "write_file"]

MCP_SERVER = Path(__file__).resolve().parent / "mcp_server.py"
SKILL_BODY = "SKILL BODY: before writing, read references/format.md"
EXPECTED_COMMANDS = {
    "status",
    "hooks",
    "compact",
    "fork",
    "permissions",  # Claude Code's, answered by the agent (no project command replaces it here)
    "agents",  # the same
    "tasks",  # the same
    "mcp",  # the same
    "context",  # the same
    "cost",  # the same
    "init",  # the built-in prompt
    "rewind",
    "review",  # the project's, with an argument (the user's and the built-in /review are shadowed)
    "component",  # namespaced: .claude/commands/frontend/component.md
    "greet",  # the user's own
    "changelog",  # a skill
    "mcp__tests__review_code",  # an MCP prompt
}


def write_file(path: Path, text: str) -> Path:
    """Write `text` to `path`, making its directories; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def claude_repo(tmp_path: Path) -> Path:
    """The workspace (with `src/app.py`, `README.md`), its `.claude` and the home's `.claude`."""
    root = tmp_path / "workspace"
    (root / ".git").mkdir(parents=True)
    write_file(root / "src" / "app.py", 'def greet(name):\n    return f"hello, {name}"\n')
    write_file(root / "README.md", "# demo\n\nREADME TEXT for tests.\n")
    commands = root / ".claude" / "commands"
    write_file(
        commands / "review.md",
        "---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\n"
        "Review $ARGUMENTS carefully, starting with $1. Context: @README.md\n",
    )
    write_file(
        commands / "frontend" / "component.md",
        "---\ndescription: Create a UI component\n---\nCreate the component $ARGUMENTS.\n",
    )
    skills = root / ".claude" / "skills"
    write_file(
        skills / "changelog" / "SKILL.md",
        "---\nname: changelog\ndescription: Write CHANGELOG entries in the Keep a Changelog style.\n---\n"
        f"{SKILL_BODY}\n",
    )
    write_file(
        skills / "changelog" / "references" / "format.md", "FORMAT REFERENCE: Added, Changed, Fixed.\n"
    )
    write_file(  # a frontmatter outside the subset read: skipped (no frontmatter at all is fine)
        skills / "broken" / "SKILL.md",
        "---\nname: broken\nnot yaml at all\n---\nA skill that does not parse.\n",
    )
    home = tmp_path / "home" / ".claude"
    write_file(home / "commands" / "review.md", "USER REVIEW BODY: never sent, the project's wins.\n")
    write_file(home / "commands" / "greet.md", "Say hello to $ARGUMENTS.\n")
    return root


def mcp_server(name: str = "tests") -> dict[str, Any]:
    """The test MCP server (it offers the `review_code` prompt), as session/new names it."""
    return {"name": name, "command": sys.executable, "args": [str(MCP_SERVER)], "env": []}
