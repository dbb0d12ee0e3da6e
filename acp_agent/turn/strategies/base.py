"""The strategy seam: how a prompt turn uses the runner (once, or until a check passes, or in phases)."""

from __future__ import annotations

from typing import Protocol

from acp_agent.turn.governor import TurnMeter
from acp_agent.turn.history import History
from acp_agent.turn.runner import AttemptOutcome, TurnRunner

__all__ = ["Strategy"]


class Strategy(Protocol):
    """Drives `runner` within one turn; every model request goes through `meter`."""

    name: str

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome: ...
