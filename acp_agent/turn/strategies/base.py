"""The strategy seam: how a prompt turn uses the runner (once, or until a check passes, or in phases).

A strategy drives the one runner under the one meter (docs/decisions.md D9): it never sends a model
request of its own except through `meter.start_request()`, which checks and counts it. A budget
that runs out raises `LimitReached` through the strategy to the driver; a strategy lets it pass. One
instance serves one session, one turn at a time; what it adds to the turn record it keeps until
the driver asks for it with `record_fields()`, after the turn, however the turn ended.
"""

from __future__ import annotations

from typing import Any, Protocol

from acp_agent.turn.context.history import History
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.runner import AttemptOutcome, TurnRunner

__all__ = ["Strategy", "record_of"]


class Strategy(Protocol):
    """Drives `runner` within one turn; every model request goes through `meter`."""

    name: str

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome: ...


def record_of(strategy: Strategy) -> tuple[type[TurnRecord], dict[str, Any]]:
    """The record type to build for `strategy`'s turn, and the fields it adds (with `loop`).

    A strategy with fields of its own has a `record_type` (a `TurnRecord` subclass) and a
    `record_fields()` returning them (snake_case), read once the turn is over, even if cancelled.
    """
    fields: dict[str, Any] = {"loop": strategy.name}
    record_fields = getattr(strategy, "record_fields", None)
    if record_fields is not None:
        fields.update(record_fields())
    return getattr(strategy, "record_type", TurnRecord), fields
