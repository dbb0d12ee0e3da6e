"""Which strategy a session runs: from the process's settings, overridden by `session/new` `_meta`.

The choice is checked by `turn/loops.py` (light, at `session/new`); the strategy is built here, on
the session's first prompt. `strategy_from_settings` is for the CLI and for Python callers (a bad
combination is a `ValueError` saying what to set); `choose_strategy` is for the session (a bad
`_meta` value is a `LimitsError` naming the field, which the handler answers with -32602).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_agent.turn.loops import DEFAULT_MAX_TRIALS, DEFAULT_THRESHOLD, LoopChoice, choose_loop
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.judge import JudgeEvaluator
from acp_agent.turn.strategies.phased import PhasedStrategy
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluator, VerifyStrategy

__all__ = ["build_strategy", "choose_strategy", "strategy_from_settings"]


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


def strategy_from_settings(
    loop: str,
    *,
    verify_cmd: str | None,
    verify_rubric: str | None,
    verify_threshold: float = DEFAULT_THRESHOLD,
    max_trials: int = DEFAULT_MAX_TRIALS,
) -> Strategy:
    """A new strategy for one session. A command wins over a rubric when both are set.

    Raises:
        ValueError: an unknown loop, `verify` with neither command nor rubric, or a bad number;
            the message says what to set.
    """
    return build_strategy(LoopChoice(loop, verify_cmd, verify_rubric, verify_threshold, max_trials))


def choose_strategy(config: Any, overrides: Mapping[str, Any]) -> Strategy:
    """The strategy of a new session (see `turn.loops.choose_loop` for what is read).

    Raises:
        LimitsError: a `_meta` value is invalid, or the combination cannot run (names the field).
    """
    return build_strategy(choose_loop(config, overrides))
