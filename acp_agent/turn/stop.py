"""How a turn ends, in the loop's own terms, and the map from the model's stop_reason."""

from __future__ import annotations

from enum import Enum, auto

__all__ = ["TurnStop", "map_model_stop"]


class TurnStop(Enum):
    """The loop's stop value; the turn record spells it as ACP's StopReason (`turn/record.py`)."""

    END_TURN = auto()
    MAX_TOKENS = auto()
    REFUSAL = auto()
    LIMIT = auto()
    """A budget ran out (`Limit` says which)."""
    CANCELLED = auto()


_MODEL_STOPS = {
    "end_turn": TurnStop.END_TURN,
    "stop_sequence": TurnStop.END_TURN,
    "max_tokens": TurnStop.MAX_TOKENS,
    "model_context_window_exceeded": TurnStop.MAX_TOKENS,
    "context_window_exceeded": TurnStop.MAX_TOKENS,  # the API refused the prompt as too long (D1)
    "refusal": TurnStop.REFUSAL,
}


def map_model_stop(stop_reason: str) -> TurnStop | None:
    """The turn's stop for a model stop_reason; None means the loop goes on (tool_use, pause_turn).

    An unknown future stop_reason ends the turn as end_turn rather than looping on it.
    """
    if stop_reason in {"tool_use", "pause_turn"}:
        return None
    return _MODEL_STOPS.get(stop_reason, TurnStop.END_TURN)
