"""Turn strategies: each drives the one runner under the one meter (docs/decisions.md D9).

`tools` is the plain loop, `verify` evaluates each attempt and feeds failures back, `phased` runs
plan → act → verify. A new strategy is a new module: a class with `name` and `run()`, and, for
fields of its own in the turn record, a `TurnRecord` subclass (`record_type`, `record_fields()`).
"""

from acp_agent.turn.strategies.base import Strategy, record_of
from acp_agent.turn.strategies.judge import JudgeEvaluator
from acp_agent.turn.strategies.phased import (
    ModeSwitcher,
    PhasedStrategy,
    PlanApprover,
    PlanQuestion,
)
from acp_agent.turn.strategies.results import (
    LoopResult,
    PhasedResult,
    ToolsResult,
    Transition,
    Trial,
    VerifyResult,
)
from acp_agent.turn.strategies.select import build_strategy
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluation, Evaluator, VerifyStrategy

__all__ = [
    "CommandEvaluator",
    "Evaluation",
    "Evaluator",
    "JudgeEvaluator",
    "LoopResult",
    "ModeSwitcher",
    "PhasedResult",
    "PhasedStrategy",
    "PlanApprover",
    "PlanQuestion",
    "Strategy",
    "ToolsResult",
    "ToolsStrategy",
    "Transition",
    "Trial",
    "VerifyResult",
    "VerifyStrategy",
    "build_strategy",
    "record_of",
]
