"""Model choice as a session config option (category `model`); `session/set_model` no longer exists."""

from __future__ import annotations

from typing import Any

from acp_agent.config import BUILTIN_MODELS
from acp_agent.model.profiles import EFFORTS, ModelProfile
from acp_agent.turn.loops import LOOPS

__all__ = ["DEFAULT_EFFORT", "available_models", "effort_config_option", "loop_config_option",
           "model_config_option"]

DEFAULT_EFFORT = "default"
"""The effort option's value for "the model's own default" (no `output_config.effort` sent)."""


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


def effort_config_option(current: str | None, profile: ModelProfile) -> dict[str, Any]:
    """The effort level as a config option (id `effort`): the levels the model accepts."""
    levels = profile.efforts if profile.known else EFFORTS
    default = f"Model default ({profile.effort_default})" if profile.effort_default \
        else "Model default"
    return {"id": "effort", "name": "Effort", "type": "select",
            "currentValue": current or DEFAULT_EFFORT,
            "description": "How much effort the model spends on each reply (output_config.effort).",
            "options": [{"value": DEFAULT_EFFORT, "name": default},
                        *({"value": level, "name": level} for level in levels)]}
