"""Which strategy a session runs: built from a `LoopChoice` on the session's first prompt.

The choice is made and checked by `turn/strategies/loops.py` (light, at `session/new`: a bad
`_meta` value is a `LimitsError` naming the field, answered -32602); the strategy and its evaluator
are built here. The default, `tools`, is all a first prompt usually needs: the strategies that
verify (`verify`, `phased`, their evaluators and result records) are imported when first chosen
(`loops.py:verifying_strategies`, awaited off the event loop before a runtime is built for one),
or by the warm-up's last step once a first request has been answered: never on a first request's
path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.loops import LoopChoice, verifying_strategies
from acp_agent.turn.strategies.tools import ToolsStrategy

if TYPE_CHECKING:
    from acp_agent.turn.strategies.verify import Evaluator

__all__ = ["build_strategy"]


def build_strategy(choice: LoopChoice) -> Strategy:
    """A new strategy for one session, from a choice that `LoopChoice.check` accepts."""
    choice.check()
    if choice.loop == "tools":
        return ToolsStrategy()
    found = verifying_strategies.now()
    evaluator: Evaluator | None = None
    if choice.command is not None:
        evaluator = found.command(choice.command)
    elif choice.rubric is not None:
        evaluator = found.judge(choice.rubric, choice.verify_threshold)
    if choice.loop == "phased":
        return found.phased(evaluator, choice.max_trials)
    assert evaluator is not None  # check() refuses verify without one
    return found.verify(evaluator, choice.max_trials)
