"""Which strategy a session runs: built from a `LoopChoice` on the session's first prompt.

The choice is made and checked by `turn/strategies/loops.py` (light, at `session/new`: a bad
`_meta` value is a `LimitsError` naming the field, answered -32602); the strategy and its evaluator
are built here.
"""

from __future__ import annotations

from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.judge import JudgeEvaluator
from acp_agent.turn.strategies.loops import LoopChoice
from acp_agent.turn.strategies.phased import PhasedStrategy
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluator, VerifyStrategy

__all__ = ["build_strategy"]


def build_strategy(choice: LoopChoice) -> Strategy:
    """A new strategy for one session, from a choice that `LoopChoice.check` accepts."""
    choice.check()
    if choice.loop == "tools":
        return ToolsStrategy()
    evaluator: Evaluator | None = None
    if choice.command is not None:
        evaluator = CommandEvaluator(choice.command)
    elif choice.rubric is not None:
        evaluator = JudgeEvaluator(choice.rubric, choice.verify_threshold)
    if choice.loop == "phased":
        return PhasedStrategy(evaluator, choice.max_trials)
    assert evaluator is not None  # check() refuses verify without one
    return VerifyStrategy(evaluator, choice.max_trials)
