"""Which loop a session runs, checked without building it: what the handshake needs of strategies.

`session/new` must refuse a bad `_meta` loop setting with -32602 before it answers, but the
strategies themselves (and the runner they drive) are built on the session's first prompt
(`turn/strategies/select.py`), so checking a choice here imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acp_agent.config import LimitsError

__all__ = ["DEFAULT_MAX_TRIALS", "DEFAULT_THRESHOLD", "LOOPS", "NEEDS_EVALUATOR", "LoopChoice", "choose_loop"]

DEFAULT_MAX_TRIALS = 3
DEFAULT_THRESHOLD = 0.8

LOOPS: dict[str, tuple[str, str]] = {
    "tools": ("Tools", "The plain tool loop: the turn ends when the model ends its reply."),
    "verify": (
        "Verify",
        "After each reply, a command or a judge checks the work; a fail is fed "
        "back and the model tries again, up to maxTrials.",
    ),
    "phased": (
        "Plan, act, verify",
        "Plan read-only, ask the user to approve the plan, then act "
        "(and verify, when a command or rubric is set).",
    ),
}
"""Loop id → (name, description): the values of the `loop` config option."""

NEEDS_EVALUATOR = (
    "loop 'verify' needs something to check the work with: set a command (--verify-cmd, "
    'ACP_AGENT_VERIFY_CMD or session/new _meta["acp-agent"]["verifyCommand"], e.g. "pytest -q") '
    "or a rubric for a model judge (--verify-rubric, ACP_AGENT_VERIFY_RUBRIC or "
    '_meta["acp-agent"]["verifyRubric"])'
)


@dataclass(frozen=True, slots=True)
class LoopChoice:
    """A loop and its verify settings, known to be runnable (see `check`)."""

    loop: str = "tools"
    verify_cmd: str | None = None
    verify_rubric: str | None = None
    verify_threshold: float = DEFAULT_THRESHOLD
    max_trials: int = DEFAULT_MAX_TRIALS

    def check(self) -> LoopChoice:
        """Returns self when the choice can run.

        Raises:
            ValueError: an unknown loop, `verify` with neither command nor rubric, or a bad
                number; the message says what to set.
        """
        if self.loop not in LOOPS:
            raise ValueError(f"unknown loop {self.loop!r}: one of {', '.join(LOOPS)}")
        if not 0.0 <= self.verify_threshold <= 1.0:
            raise ValueError(f"the verify threshold must be within 0..1, not {self.verify_threshold!r}")
        if self.max_trials < 1:
            raise ValueError(f"maxTrials must be at least 1, not {self.max_trials!r}")
        if self.loop == "verify" and self.command is None and self.rubric is None:
            raise ValueError(NEEDS_EVALUATOR)
        return self

    @property
    def command(self) -> str | None:
        """The verify command, when set (it wins over a rubric)."""
        return self.verify_cmd if self.verify_cmd and self.verify_cmd.strip() else None

    @property
    def rubric(self) -> str | None:
        """The judge's rubric, when set and no command is."""
        if self.command is not None:
            return None
        return self.verify_rubric if self.verify_rubric and self.verify_rubric.strip() else None


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
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (kind is int and not float(value).is_integer())
    ):
        raise LimitsError(key, "must be an integer" if kind is int else "must be a number")
    return kind(value)


def choose_loop(config: Any, overrides: Mapping[str, Any]) -> LoopChoice:
    """The loop of a session: `config` attributes, overridden by `_meta["acp-agent"]`.

    Reads `loop`, `verify_cmd`, `verify_rubric`, `verify_threshold` and `max_trials` from `config`
    (each optional), and `loop`, `verifyCommand`, `verifyRubric`, `verifyThreshold` and
    `maxTrials` from `overrides`.

    Raises:
        LimitsError: a `_meta` value is invalid, or the combination cannot run (names the field).
    """
    limits = getattr(config, "limits", None)
    max_trials = getattr(limits, "max_trials", None) or getattr(config, "max_trials", None)
    threshold = getattr(config, "verify_threshold", None)
    choice = LoopChoice(
        loop=_text(overrides, "loop", getattr(config, "loop", None) or "tools") or "tools",
        verify_cmd=_text(overrides, "verifyCommand", getattr(config, "verify_cmd", None)),
        verify_rubric=_text(overrides, "verifyRubric", getattr(config, "verify_rubric", None)),
        verify_threshold=_number(
            overrides, "verifyThreshold", DEFAULT_THRESHOLD if threshold is None else threshold, float
        ),
        max_trials=_number(overrides, "maxTrials", max_trials or DEFAULT_MAX_TRIALS, int),
    )
    try:
        return choice.check()
    except ValueError as exc:
        message = str(exc)
        field = (
            "maxTrials" if "maxTrials" in message else "verifyThreshold" if "threshold" in message else "loop"
        )
        raise LimitsError(field, message) from None
