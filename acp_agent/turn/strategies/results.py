"""One result contract for every strategy: a common protocol, and one frozen type per strategy.

The common result is the turn record (`TurnRecord`, the `tools` strategy's type). A strategy with
fields of its own subclasses it here, so its `_meta` record carries them beside the common ones
and a new strategy is a new module and a new type, with no change to the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from acp_agent.turn.record import TurnRecord

__all__ = [
    "FEEDBACK_CHARS",
    "LoopResult",
    "Phase",
    "PhasedResult",
    "ToolsResult",
    "Transition",
    "Trial",
    "VerifyResult",
    "best_trial",
    "clip_feedback",
]

FEEDBACK_CHARS = 500
"""A trial's feedback in the record is cut to this many characters (the model saw all of it)."""

Phase = Literal["plan", "act", "verify", "done"]


@runtime_checkable
class LoopResult(Protocol):
    """What every strategy's result offers: the core record fields, `loop`, and its `_meta` form."""

    @property
    def loop(self) -> str: ...

    @property
    def turn_id(self) -> str: ...

    @property
    def stop_reason(self) -> str: ...

    @property
    def limit(self) -> str | None: ...

    @property
    def model_requests(self) -> int: ...

    @property
    def tool_calls(self) -> int: ...

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    @property
    def duration_ms(self) -> int: ...

    def to_meta(self) -> dict[str, Any]: ...


ToolsResult = TurnRecord
"""The plain tool loop adds nothing to the common record."""


class _Part(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)


class Trial(_Part):
    """One evaluated attempt: the model's work up to its `end_turn`, then the evaluator's verdict."""

    trial: int = Field(ge=1)
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    evaluator: Literal["command", "judge"]
    feedback: str = Field(max_length=FEEDBACK_CHARS)
    model_requests: int = Field(ge=0)
    """Requests of this trial: the attempt's, plus the judge's."""
    duration_ms: int = Field(ge=0)


class Transition(_Part):
    """One phase change of a `phased` turn, at the turn's request count when it happened."""

    from_: Phase = Field(alias="from")
    to: Phase
    reason: str
    at_request: int = Field(ge=0)


class VerifyResult(TurnRecord):
    """The record of a `verify` turn: every trial, and the best one."""

    loop: Literal["verify"] = "verify"
    trials: tuple[Trial, ...] = ()
    best_trial: int | None = None
    best_score: float | None = None
    max_trials: int = Field(3, ge=1)


class PhasedResult(TurnRecord):
    """The record of a `phased` turn: its phase changes, where it ended, and its trials if any."""

    loop: Literal["phased"] = "phased"
    transitions: tuple[Transition, ...] = ()
    final_state: Phase = "plan"
    trials: tuple[Trial, ...] | None = None
    """Present when the turn verified (a command or rubric is configured)."""
    max_trials: int | None = None


def best_trial(trials: Iterable[Trial]) -> tuple[int | None, float | None]:
    """(bestTrial, bestScore): the highest score, the latest trial among equals."""
    best = max(trials, key=lambda t: (t.score, t.trial), default=None)
    return (None, None) if best is None else (best.trial, best.score)


def clip_feedback(text: str, limit: int = FEEDBACK_CHARS) -> str:
    """Feedback for the record: whole if short, else its head and (more of) its tail."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head - 3
    return f"{text[:head]} … {text[-tail:]}"
