"""Session modes: how much the agent may do without asking.

Offered both as ACP `modes` and as a `configOptions` select of category `mode`, kept in sync
(docs/decisions.md D6).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_MODE", "MODES", "mode_config_option", "modes_state"]

DEFAULT_MODE = "default"

MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before every file edit and every command."),
    "acceptEdits": ("Accept edits", "Edit files without asking; ask before commands."),
    "plan": ("Plan", "Read-only: look around and plan; edits and commands are refused."),
    "bypassPermissions": ("Bypass permissions", "Never ask: edits and commands run at once."),
}


def modes_state(current: str) -> dict[str, Any]:
    """The `modes` object of session/new."""
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description}
            for mode_id, (name, description) in MODES.items()
        ],
    }


def mode_config_option(current: str) -> dict[str, Any]:
    """The same modes as a config option (category `mode`)."""
    return {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "description": "How much the agent may do without asking.",
        "options": [
            {"value": mode_id, "name": name, "description": description}
            for mode_id, (name, description) in MODES.items()
        ],
    }
