"""Slash commands: `/status` (answered without a model request) and `/compact` (one counted request).

Announced with `available_commands_update` after session/new and session/load (docs/decisions.md D7);
run by `session/engine.py`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMMANDS", "command_of"]

COMMANDS = [
    {
        "name": "status",
        "description": "Show the model, the mode, the limits in force and the "
        "context used (no model request).",
    },
    {
        "name": "compact",
        "description": "Summarise the earlier conversation now to free context (one model request).",
    },
]


def command_of(prompt: list[dict[str, Any]]) -> str | None:
    """The slash command a prompt is, if its text is exactly `/status` or `/compact`."""
    texts = [b.get("text", "") for b in prompt if b.get("type") == "text"]
    if len(texts) != 1 or len(prompt) != 1:
        return None
    word = texts[0].strip().split(maxsplit=1)[0] if texts[0].strip() else ""
    return word[1:] if word in {"/status", "/compact"} else None
