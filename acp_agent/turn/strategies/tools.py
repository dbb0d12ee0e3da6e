"""The default strategy: the plain tool loop, ending when the model ends its reply."""

from __future__ import annotations

from acp_agent.turn.context.history import History
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import AttemptOutcome, TurnRunner

__all__ = ["ToolsStrategy"]


class ToolsStrategy:
    name = "tools"

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome:
        return await runner.run(history, meter)
