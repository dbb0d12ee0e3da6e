"""Model choice as a session config option (category `model`); `session/set_model` no longer exists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp_agent.config import BUILTIN_MODELS
from acp_agent.model.profiles import EFFORTS, ModelProfile, is_builtin
from acp_agent.turn.loops import LOOPS

__all__ = [
    "DEFAULT_EFFORT",
    "MAX_MODEL_CHOICES",
    "available_models",
    "effort_config_option",
    "loop_config_option",
    "model_config_option",
]

DEFAULT_EFFORT = "default"
"""The effort option's value for "the model's own default" (no `output_config.effort` sent)."""


MAX_MODEL_CHOICES = 50
"""At most this many model choices are shown: a listing of 100,000 models made every
`session/new` answer 6 MB."""


def available_models(configured: str, listed: Sequence[str] = ()) -> list[str]:
    """The model choices: the models the API listed (else the built-in list), the ones this agent
    knows first (each group in the API's order, newest first), at most `MAX_MODEL_CHOICES`, the
    configured one always among them (first, when it is not listed)."""
    models = list(dict.fromkeys(listed)) or list(BUILTIN_MODELS)
    models.sort(key=lambda m: not is_builtin(m))  # stable: keeps the API's order
    return _capped(configured, models)


def _capped(kept: str, models: Sequence[str]) -> list[str]:
    """`models` cut to `MAX_MODEL_CHOICES`, with `kept` among them (first, when it was not)."""
    if kept in models[:MAX_MODEL_CHOICES]:
        return list(models[:MAX_MODEL_CHOICES])
    return [kept, *(m for m in models[: MAX_MODEL_CHOICES - 1] if m != kept)]


def model_config_option(current: str, models: Sequence[str]) -> dict[str, Any]:
    choices = _capped(current, models)
    return {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": current,
        "description": "The Claude model used for this session.",
        "options": [{"value": m, "name": m} for m in choices],
    }


def loop_config_option(current: str) -> dict[str, Any]:
    """The turn strategy as a config option (id `loop`)."""
    return {
        "id": "loop",
        "name": "Loop",
        "type": "select",
        "currentValue": current,
        "description": "How a prompt turn runs: the plain tool loop, verify until a check "
        "passes, or plan → approve → act.",
        "options": [
            {"value": loop, "name": name, "description": description}
            for loop, (name, description) in LOOPS.items()
        ],
    }


def effort_config_option(current: str | None, profile: ModelProfile) -> dict[str, Any]:
    """The effort level as a config option (id `effort`): the levels the model accepts."""
    levels = profile.efforts if profile.known else EFFORTS
    default = f"Model default ({profile.effort_default})" if profile.effort_default else "Model default"
    return {
        "id": "effort",
        "name": "Effort",
        "type": "select",
        "currentValue": current or DEFAULT_EFFORT,
        "description": "How much effort the model spends on each reply (output_config.effort).",
        "options": [
            {"value": DEFAULT_EFFORT, "name": default},
            *({"value": level, "name": level} for level in levels),
        ],
    }
