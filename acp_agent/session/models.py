"""Model choice as a session config option (category `model`); `session/set_model` no longer exists."""

from __future__ import annotations

from typing import Any

from acp_agent.config import BUILTIN_MODELS

__all__ = ["available_models", "model_config_option"]


def available_models(configured: str) -> list[str]:
    """The built-in list, with the configured model first when it is not one of them."""
    return list(BUILTIN_MODELS) if configured in BUILTIN_MODELS \
        else [configured, *BUILTIN_MODELS]


def model_config_option(current: str, configured: str) -> dict[str, Any]:
    return {"id": "model", "name": "Model", "category": "model", "type": "select",
            "currentValue": current, "description": "The Claude model used for this session.",
            "options": [{"value": m, "name": m} for m in available_models(configured)]}
