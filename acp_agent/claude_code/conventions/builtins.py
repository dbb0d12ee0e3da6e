"""Slash commands: the built-ins `/status`, `/permissions`, `/hooks`, `/agents`, `/tasks`, `/mcp`,
`/context` and `/cost` (answered without a model request), `/compact` (one counted request),
`/rewind` (`session/commands/rewinding.py`), `/fork [N]` (a new session with a copy of this one's
conversation, whole or through prompt N: no request), `/init` and `/review` (prompts, run as a
command's turn: `prompt_commands.py`), and how a prompt names any command (`slash_of`; the custom
commands, skills and MCP prompts a session offers are in `conventions.py`).

`/status`, `/compact`, `/rewind` and `/fork` always win over a custom command of their name. Those
named after Claude Code's everyday commands (`CLAUDE_CODE_NAMES`) give way to one: a project's
command of that name runs instead.

Announced with `available_commands_update` after session/new, session/load and session/resume
(docs/decisions.md D7); run by `session/machinery/engine.py`, answered by
`session/commands/command_answers.py`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BUILT_IN_NAMES", "CLAUDE_CODE_NAMES", "COMMANDS", "PROMPT_NAMES", "command_of", "slash_of"]

COMMANDS: list[dict[str, Any]] = [
    {
        "name": "status",
        "description": "Show the model, the mode, the limits in force, the context used and the "
        "commands and skills loaded (no model request).",
    },
    {
        "name": "permissions",
        "description": "List the permission rules in force, each with the settings file it came "
        "from, and what waits for the project's trust (no model request).",
    },
    {
        "name": "hooks",
        "description": "List the hooks in force (event, matcher, command, settings file) and those "
        "waiting for the project's trust (no model request).",
    },
    {
        "name": "compact",
        "description": "Summarise the earlier conversation now to free context (one model request).",
    },
    {
        "name": "fork",
        "description": "Copy this session into a new one, whole or through prompt N, and name it "
        "(no model request).",
        "input": {"hint": "[N]: the last prompt to copy (all of them when left out)"},
    },
    {
        "name": "rewind",
        "description": "Go back to before a prompt: its files and the conversation (--chat: the "
        "conversation only, --files: the files only). Alone, it lists the prompts.",
        "input": {"hint": "prompt number [--chat | --files]"},
    },
    {
        "name": "agents",
        "description": "List the custom agents (.claude/agents) the task tool offers: their "
        "descriptions, models, tools and files (no model request).",
    },
    {
        "name": "tasks",
        "description": "List the background commands: id, state, runtime and command (no model request).",
    },
    {
        "name": "mcp",
        "description": "List the MCP servers (the editor's, .mcp.json's, ~/.claude.json's) with "
        "their state and tool counts (no model request).",
    },
    {
        "name": "context",
        "description": "Show what fills the context window, by part: system prompt, memory, tools, "
        "messages, tool results (estimated; no model request).",
    },
    {
        "name": "cost",
        "description": "Show the session's spend so far: cost, requests and tokens, summed from its "
        "turn records (no model request).",
    },
    {
        "name": "init",
        "description": "Write (or improve) CLAUDE.md for this code base (one model turn).",
        "input": {"hint": "[what to stress]"},
    },
    {
        "name": "review",
        "description": "Review the working tree's uncommitted diff (one model turn).",
        "input": {"hint": "[what to focus on]"},
    },
]
PROMPT_NAMES = frozenset({"init", "review"})
"""The built-ins that are prompts: they run as a command's turn, with model requests."""
CLAUDE_CODE_NAMES = frozenset(
    {"permissions", "hooks", "agents", "tasks", "mcp", "context", "cost", "init", "review"}
)
"""Built-ins named after Claude Code's everyday commands: a custom command or skill of the same
name replaces them (in the menu too)."""
BUILT_IN_NAMES = frozenset(c["name"] for c in COMMANDS) - CLAUDE_CODE_NAMES
"""The built-ins no custom command may shadow."""
_ANSWERED = frozenset(c["name"] for c in COMMANDS) - PROMPT_NAMES


def command_of(prompt: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The built-in answered by the agent a prompt is (its text starts `/status`, `/rewind`...:
    not the prompts `/init` and `/review`), and the rest of its text (the arguments: /rewind and
    /fork read them)."""
    texts = [b.get("text", "") for b in prompt if b.get("type") == "text"]
    if len(texts) != 1 or len(prompt) != 1:
        return None
    word, *rest = texts[0].split(maxsplit=1) or [""]
    name = word[1:] if word.startswith("/") else ""
    return (name, rest[0].strip() if rest else "") if name in _ANSWERED else None


_SLASH = re.compile(r"\s*/([^\s/][^\s]*)(?:\s+(.*))?\Z", re.S)


def slash_of(blocks: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(name, the rest of the text) when the prompt's first block is text that starts `/name`."""
    if not blocks or blocks[0].get("type") != "text":
        return None
    match = _SLASH.match(str(blocks[0].get("text", "")))
    return (match.group(1), (match.group(2) or "").strip()) if match else None
