"""Model choice as a session config option (category `model`); `session/set_model` no longer exists."""

from __future__ import annotations

from typing import Any

from acp_agent.config import BUILTIN_MODELS
from acp_agent.turn.loops import LOOPS

__all__ = ["available_models", "loop_config_option", "model_config_option"]


def available_models(configured: str) -> list[str]:
    """The built-in list, with the configured model first when it is not one of them."""
    return list(BUILTIN_MODELS) if configured in BUILTIN_MODELS \
        else [configured, *BUILTIN_MODELS]


def model_config_option(current: str, configured: str) -> dict[str, Any]:
    return {"id": "model", "name": "Model", "category": "model", "type": "select",
            "currentValue": current, "description": "The Claude model used for this session.",
            "options": [{"value": m, "name": m} for m in available_models(configured)]}


def loop_config_option(current: str) -> dict[str, Any]:
    """The turn strategy as a config option (id `loop`)."""
    return {"id": "loop", "name": "Loop", "type": "select", "currentValue": current,
            "description": "How a prompt turn runs: the plain tool loop, verify until a check "
                           "passes, or plan → approve → act.",
            "options": [{"value": loop, "name": name, "description": description}
                        for loop, (name, description) in LOOPS.items()]}
