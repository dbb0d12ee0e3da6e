"""Which loop a session runs, checked without building it: what the handshake needs of strategies.

`session/new` must refuse a bad `_meta` loop setting with -32602 before it answers, but the
strategies themselves (and the runner they drive) are built on the session's first prompt
(`turn/strategies/select.py`), so checking a choice here imports none of them; those that verify
are imported by `verifying_strategies`, off the event loop, when a session first chooses one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from acp_agent.config import Config, how_to_set
from acp_agent.errors import LimitsError
from acp_agent.lazy import deferred

if TYPE_CHECKING:
    from acp_agent.turn.strategies.judge import JudgeEvaluator
    from acp_agent.turn.strategies.phased import PhasedStrategy
    from acp_agent.turn.strategies.verify import CommandEvaluator, VerifyStrategy

__all__ = [
    "DEFAULT_MAX_TRIALS",
    "DEFAULT_THRESHOLD",
    "LOOPS",
    "LoopChoice",
    "LoopProblem",
    "Verifying",
    "choose_loop",
    "import_strategy",
    "verifying_strategies",
]

DEFAULT_MAX_TRIALS: int = Config.model_fields["max_trials"].default
DEFAULT_THRESHOLD: float = Config.model_fields["verify_threshold"].default

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


def _needs_evaluator() -> str:
    """What to set when loop `verify` has nothing to check the work with."""
    return (
        f"loop 'verify' needs something to check the work with: set a command ({how_to_set('verify_cmd')} "
        'or session/new _meta["acp-agent"]["verifyCommand"], e.g. "pytest -q") or a rubric for a model '
        f'judge ({how_to_set("verify_rubric")} or _meta["acp-agent"]["verifyRubric"])'
    )


@dataclass(frozen=True, slots=True)
class LoopProblem:
    """Why a loop choice cannot run, and the `_meta["acp-agent"]` field to blame."""

    field: str
    message: str


@dataclass(frozen=True, slots=True)
class LoopChoice:
    """A loop and its verify settings, known to be runnable (see `check`)."""

    loop: str = "tools"
    verify_cmd: str | None = None
    verify_rubric: str | None = None
    verify_threshold: float = DEFAULT_THRESHOLD
    max_trials: int = DEFAULT_MAX_TRIALS

    def problem(self) -> LoopProblem | None:
        """What stops this choice from running (an unknown loop, `verify` with neither command nor
        rubric, a bad number), or None when it can run."""
        if self.loop not in LOOPS:
            return LoopProblem("loop", f"unknown loop {self.loop!r}: one of {', '.join(LOOPS)}")
        if not 0.0 <= self.verify_threshold <= 1.0:
            return LoopProblem(
                "verifyThreshold", f"the verify threshold must be within 0..1, not {self.verify_threshold!r}"
            )
        if self.max_trials < 1:
            return LoopProblem("maxTrials", f"maxTrials must be at least 1, not {self.max_trials!r}")
        if self.loop == "verify" and self.command is None and self.rubric is None:
            return LoopProblem("loop", _needs_evaluator())
        return None

    def check(self) -> LoopChoice:
        """Returns self when the choice can run.

        Raises:
            ValueError: the choice cannot run (see `problem`); the message says what to set.
        """
        if (found := self.problem()) is not None:
            raise ValueError(found.message)
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


def choose_loop(config: Config, overrides: Mapping[str, Any]) -> LoopChoice:
    """The loop of a session: the agent's `config`, overridden by `_meta["acp-agent"]`.

    Reads `loop`, `verifyCommand`, `verifyRubric`, `verifyThreshold` and `maxTrials` from
    `overrides`, each optional.

    Raises:
        LimitsError: a `_meta` value is invalid, or the combination cannot run (names the field).
    """
    choice = LoopChoice(
        loop=_text(overrides, "loop", config.loop) or "tools",
        verify_cmd=_text(overrides, "verifyCommand", config.verify_cmd),
        verify_rubric=_text(overrides, "verifyRubric", config.verify_rubric),
        verify_threshold=_number(overrides, "verifyThreshold", config.verify_threshold, float),
        max_trials=_number(overrides, "maxTrials", config.max_trials, int),
    )
    if (found := choice.problem()) is not None:
        raise LimitsError(found.field, found.message)
    return choice


class Verifying(NamedTuple):
    """The strategies that verify and their evaluators."""

    verify: type[VerifyStrategy]
    phased: type[PhasedStrategy]
    command: type[CommandEvaluator]
    judge: type[JudgeEvaluator]


@deferred
def verifying_strategies() -> Verifying:
    """The strategies that verify, imported when a session first chooses one (awaited off the event
    loop by the runtime's build and by a loop change) or by the warm-up's last step."""
    from acp_agent.turn.strategies.judge import JudgeEvaluator
    from acp_agent.turn.strategies.phased import PhasedStrategy
    from acp_agent.turn.strategies.verify import CommandEvaluator, VerifyStrategy

    return Verifying(VerifyStrategy, PhasedStrategy, CommandEvaluator, JudgeEvaluator)


async def import_strategy(choice: LoopChoice) -> None:
    """What `select.py:build_strategy` needs for `choice`, imported in a worker (the deferred-import
    lock may be held by the warm-up for a while): called before a runtime is built for a loop that
    verifies, never on the event loop by the build itself. Nothing for `tools`."""
    if choice.loop != "tools":
        await verifying_strategies()
