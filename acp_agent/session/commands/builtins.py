"""Slash commands: the built-ins `/status` (answered without a model request), `/compact` (one
counted request) and `/fork [N]` (a new session with a copy of this one's conversation, whole or
through prompt N: no request), and how a prompt names any command (`slash_of`; the custom commands, skills and
MCP prompts a session offers are in `conventions.py`).

Announced with `available_commands_update` after session/new, session/load and session/resume
(docs/decisions.md D7); run by `session/engine.py`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BUILT_IN_NAMES", "COMMANDS", "command_of", "slash_of"]

COMMANDS: list[dict[str, Any]] = [
    {
        "name": "status",
        "description": "Show the model, the mode, the limits in force, the context used and the "
        "commands and skills loaded (no model request).",
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
]


def command_of(prompt: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The built-in command a prompt is (its text starts `/status`, `/compact` or `/fork`), and the
    rest of its text (the arguments: only /fork reads them)."""
    texts = [b.get("text", "") for b in prompt if b.get("type") == "text"]
    if len(texts) != 1 or len(prompt) != 1:
        return None
    word, *rest = texts[0].split(maxsplit=1) or [""]
    name = word[1:] if word.startswith("/") else ""
    return (name, rest[0].strip() if rest else "") if name in BUILT_IN_NAMES else None


_SLASH = re.compile(r"\s*/([^\s/][^\s]*)(?:\s+(.*))?\Z", re.S)
BUILT_IN_NAMES = frozenset(c["name"] for c in COMMANDS)


def slash_of(blocks: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(name, the rest of the text) when the prompt's first block is text that starts `/name`."""
    if not blocks or blocks[0].get("type") != "text":
        return None
    match = _SLASH.match(str(blocks[0].get("text", "")))
    return (match.group(1), (match.group(2) or "").strip()) if match else None
