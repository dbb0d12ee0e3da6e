"""Which strategy a session runs: from the process's settings, overridden by `session/new` `_meta`.

`strategy_from_settings` is for the CLI (a bad combination is a `ValueError` saying what to set);
`choose_strategy` is for the session (a bad `_meta` value is a `LimitsError` naming the field, which
the handler answers with -32602).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_agent.config import LimitsError
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.judge import JudgeEvaluator
from acp_agent.turn.strategies.phased import PhasedStrategy
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluator, VerifyStrategy

__all__ = ["DEFAULT_MAX_TRIALS", "DEFAULT_THRESHOLD", "LOOPS", "choose_strategy",
           "strategy_from_settings"]

DEFAULT_MAX_TRIALS = 3
DEFAULT_THRESHOLD = 0.8

LOOPS: dict[str, tuple[str, str]] = {
    "tools": ("Tools", "The plain tool loop: the turn ends when the model ends its reply."),
    "verify": ("Verify", "After each reply, a command or a judge checks the work; a fail is fed "
                         "back and the model tries again, up to maxTrials."),
    "phased": ("Plan, act, verify", "Plan read-only, ask the user to approve the plan, then act "
                                    "(and verify, when a command or rubric is set)."),
}
"""Loop id → (name, description): the values of the `loop` config option."""

NEEDS_EVALUATOR = (
    "loop 'verify' needs something to check the work with: set a command (--verify-cmd, "
    "ACP_AGENT_VERIFY_CMD or session/new _meta[\"acp-agent\"][\"verifyCommand\"], e.g. \"pytest -q\") "
    "or a rubric for a model judge (--verify-rubric, ACP_AGENT_VERIFY_RUBRIC or "
    "_meta[\"acp-agent\"][\"verifyRubric\"])")


def strategy_from_settings(loop: str, *, verify_cmd: str | None, verify_rubric: str | None,
                           verify_threshold: float = DEFAULT_THRESHOLD,
                           max_trials: int = DEFAULT_MAX_TRIALS) -> Strategy:
    """A new strategy for one session. A command wins over a rubric when both are set.

    Raises:
        ValueError: an unknown loop, `verify` with neither command nor rubric, or a bad number;
            the message says what to set.
    """
    if loop not in LOOPS:
        raise ValueError(f"unknown loop {loop!r}: one of {', '.join(LOOPS)}")
    if not 0.0 <= verify_threshold <= 1.0:
        raise ValueError(f"the verify threshold must be within 0..1, not {verify_threshold!r}")
    if max_trials < 1:
        raise ValueError(f"maxTrials must be at least 1, not {max_trials!r}")
    if loop == "tools":
        return ToolsStrategy()
    evaluator: Evaluator | None = None
    if verify_cmd and verify_cmd.strip():
        evaluator = CommandEvaluator(verify_cmd)
    elif verify_rubric and verify_rubric.strip():
        evaluator = JudgeEvaluator(verify_rubric, verify_threshold)
    if loop == "phased":
        return PhasedStrategy(evaluator, max_trials)
    if evaluator is None:
        raise ValueError(NEEDS_EVALUATOR)
    return VerifyStrategy(evaluator, max_trials)


def _text(overrides: Mapping[str, Any], key: str, default: str | None) -> str | None:
    if key not in overrides:
        return default
    value = overrides[key]
    if value is not None and not isinstance(value, str):
        raise LimitsError(key, "must be a string")
    return value


def _number(overrides: Mapping[str, Any], key: str, default: Any, kind: type) -> Any:
    if key not in overrides:
        return default
    value = overrides[key]
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or (kind is int and not float(value).is_integer()):
        raise LimitsError(key, "must be an integer" if kind is int else "must be a number")
    return kind(value)


def choose_strategy(config: Any, overrides: Mapping[str, Any]) -> Strategy:
    """The strategy of a new session: `config` attributes, overridden by `_meta["acp-agent"]`.

    Reads `loop`, `verify_cmd`, `verify_rubric`, `verify_threshold` and `max_trials` from `config`
    (each optional), and `loop`, `verifyCommand`, `verifyRubric`, `verifyThreshold` and
    `maxTrials` from `overrides`.

    Raises:
        LimitsError: a `_meta` value is invalid, or the combination cannot run (names the field).
    """
    limits = getattr(config, "limits", None)
    max_trials = getattr(limits, "max_trials", None) or getattr(config, "max_trials", None)
    threshold = getattr(config, "verify_threshold", None)
    loop = _text(overrides, "loop", getattr(config, "loop", None) or "tools") or "tools"
    settings = {
        "verify_cmd": _text(overrides, "verifyCommand", getattr(config, "verify_cmd", None)),
        "verify_rubric": _text(overrides, "verifyRubric", getattr(config, "verify_rubric", None)),
        "verify_threshold": _number(overrides, "verifyThreshold",
                                    DEFAULT_THRESHOLD if threshold is None else threshold, float),
        "max_trials": _number(overrides, "maxTrials", max_trials or DEFAULT_MAX_TRIALS, int),
    }
    try:
        return strategy_from_settings(loop, **settings)
    except ValueError as exc:
        message = str(exc)
        field = ("maxTrials" if "maxTrials" in message
                 else "verifyThreshold" if "threshold" in message else "loop")
        raise LimitsError(field, message) from None
