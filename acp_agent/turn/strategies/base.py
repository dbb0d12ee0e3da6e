"""The strategy seam: how a prompt turn uses the runner (once, or until a check passes, or in phases).

A strategy drives the one runner under the one meter (docs/decisions.md D9): it never sends a model
request of its own except through `meter.start_request()`, which checks and counts it. A budget
that runs out raises `LimitReached` through the strategy to the driver; a strategy lets it pass. One
instance serves one session, one turn at a time; what it adds to the turn record it keeps until
the driver asks for it with `record_fields()`, after the turn, however the turn ended.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from acp_agent.turn.context.history import History
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.runner import AttemptOutcome, TurnRunner

__all__ = ["RecordingStrategy", "Strategy", "record_of"]


class Strategy(Protocol):
    """Drives `runner` within one turn; every model request goes through `meter`."""

    name: str

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome: ...


@runtime_checkable
class RecordingStrategy(Protocol):
    """A strategy with fields of its own in the turn record: a `record_type` (a `TurnRecord`
    subclass) and a `record_fields()` returning them (snake_case), read once the turn is over,
    even if cancelled."""

    @property
    def record_type(self) -> type[TurnRecord]: ...

    def record_fields(self) -> dict[str, Any]: ...


def record_of(strategy: Strategy) -> tuple[type[TurnRecord], dict[str, Any]]:
    """The record type to build for `strategy`'s turn, and the fields it adds (with `loop`)."""
    fields: dict[str, Any] = {"loop": strategy.name}
    if not isinstance(strategy, RecordingStrategy):
        return TurnRecord, fields
    return strategy.record_type, {**fields, **strategy.record_fields()}
