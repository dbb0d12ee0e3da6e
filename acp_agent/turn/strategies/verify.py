"""The `verify` strategy (evaluator-optimizer): after each attempt, an evaluator scores the work.

An attempt is one run of the loop up to the model's `end_turn`. A pass ends the turn; a fail sends
the evaluator's feedback to the model as a new user message and the loop goes on, up to
`max_trials` failed attempts (then the `TRIALS` limit ends the turn). An attempt that ends any
other way (max_tokens, refusal, a budget, cancel) ends the turn unevaluated.
The evaluator here runs the user's command; `judge.py` has the model judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import anyio
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.base import Progress, ToolResult
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.tools.truncate import cap_text, clip_line
from acp_agent.turn.context.history import History
from acp_agent.turn.events import ToolCallFinished, ToolCallProgress, ToolCallStarted, ToolCallUpdated
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.runner import AttemptOutcome, TurnRunner
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.results import Trial, VerifyResult, best_trial, clip_feedback

__all__ = [
    "CommandEvaluator",
    "Evaluation",
    "Evaluator",
    "Trials",
    "VerifyStrategy",
    "evaluate_attempt",
    "failure_message",
]

log = structlog.get_logger(__name__)

FEEDBACK_BYTES = 12 * 1024
"""The command output the model sees after a failed check (head and, mostly, tail)."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """An evaluator's verdict on one attempt; `feedback` is what the model reads on a fail."""

    passed: bool
    score: float
    feedback: str


class Evaluator(Protocol):
    """Scores the attempt that just ended; raises `LimitReached` when a budget forbids evaluating."""

    @property
    def kind(self) -> Literal["command", "judge"]: ...

    async def evaluate(
        self, runner: TurnRunner, history: History, meter: TurnMeter, *, trial: int
    ) -> Evaluation: ...


def failure_message(trial: int, max_trials: int, feedback: str) -> str:
    """The user message that tells the model its attempt failed, and why."""
    last = " (no attempts left in this turn)" if trial >= max_trials else ""
    return f"Verification failed, attempt {trial} of {max_trials}{last}: {feedback}"


async def evaluate_attempt(
    evaluator: Evaluator,
    runner: TurnRunner,
    history: History,
    meter: TurnMeter,
    *,
    trial: int,
    max_trials: int,
    since_requests: int,
    since: float,
) -> Trial:
    """Evaluate one attempt and make it a trial; a fail's feedback goes into the history."""
    result = await evaluator.evaluate(runner, history, meter, trial=trial)
    score = min(1.0, max(0.0, result.score))
    log.info(
        "verify.trial", trial=trial, passed=result.passed, score=round(score, 3), evaluator=evaluator.kind
    )
    if not result.passed:
        history.add_user([{"type": "text", "text": failure_message(trial, max_trials, result.feedback)}])
    return Trial(
        trial=trial,
        passed=result.passed,
        score=score,
        evaluator=evaluator.kind,
        feedback=clip_feedback(result.feedback),
        model_requests=meter.model_requests - since_requests,
        duration_ms=max(0, int((meter.clock() - since) * 1000)),
    )


@dataclass(frozen=True, slots=True)
class CommandEvaluator:
    """Runs the user's check (e.g. `pytest -q`) locally in the session's cwd: exit 0 passes.

    The user configured it, so it runs without a permission prompt, under the shell tool's
    timeout, process-group kill and output caps. The editor sees a tool call of kind `execute`.
    """

    command: str
    shell: RunCommand = field(default_factory=RunCommand)
    kind: Literal["command", "judge"] = "command"

    async def evaluate(
        self, runner: TurnRunner, history: History, meter: TurnMeter, *, trial: int
    ) -> Evaluation:
        meter.verifying()
        sink, call_id = runner.sink, f"verify_{runner.new_id()}"
        args: dict[str, Any] = {"command": self.command}
        lines = self.command.strip().splitlines() or [""]
        title = f"Verify: {clip_line(lines[0], 60)}{' …' if len(lines) > 1 else ''}"
        await sink.emit(ToolCallStarted(call_id, title, "execute", args))
        await sink.emit(ToolCallUpdated(call_id))

        async def report(progress: Progress) -> None:
            await sink.emit(ToolCallProgress(call_id, progress.text, progress.terminal_id))

        ctx = replace(runner.ctx, terminal=None, report=report)  # always local, never the editor's
        try:
            result = await self._run(args, ctx)
        except BaseException:
            with anyio.move_on_after(2, shield=True):
                await sink.emit(ToolCallFinished.of(call_id, "failed", "Verification interrupted."))
            raise
        raw = result.raw_output or {}
        passed = not result.is_error and raw.get("exitCode") == 0
        await sink.emit(
            ToolCallFinished.of(call_id, "completed" if passed else "failed", result.text, raw or None)
        )
        output = cap_text(result.text, FEEDBACK_BYTES, head_ratio=0.25)
        return Evaluation(passed, 1.0 if passed else 0.0, f"the check `{self.command}` ended with {output}")

    async def _run(self, args: dict[str, Any], ctx: Any) -> ToolResult:
        seconds = self.shell.time_allowance(args)
        try:
            with anyio.fail_after(seconds):
                return await self.shell.run(args, ctx)
        except TimeoutError:
            return ToolResult(f"timed out after {seconds:g} s", is_error=True)
        except ToolError as exc:
            return ToolResult(f"could not run: {exc}", is_error=True)


@dataclass(slots=True)
class Trials:
    """The evaluated attempts of one turn, for a strategy that verifies (verify, phased): the
    evaluator, how many fails the turn allows, and the trials so far."""

    evaluator: Evaluator
    max_trials: int
    done: list[Trial] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.max_trials < 1:
            raise ValueError("maxTrials must be at least 1")

    async def evaluate(
        self, runner: TurnRunner, history: History, meter: TurnMeter, *, since_requests: int, since: float
    ) -> Trial:
        """Evaluate the attempt that began at `since_requests` / `since`, and keep it as the next
        trial (a fail's feedback goes into the history).

        Raises:
            LimitReached: the evaluation is past a budget.
        """
        trial = await evaluate_attempt(
            self.evaluator,
            runner,
            history,
            meter,
            trial=len(self.done) + 1,
            max_trials=self.max_trials,
            since_requests=since_requests,
            since=since,
        )
        self.done.append(trial)
        return trial

    def used_up(self) -> bool:
        """No fail is left to the turn: the `TRIALS` limit ends it."""
        return len(self.done) >= self.max_trials


class VerifyStrategy:
    """Attempt, evaluate, feed back, repeat: until a pass, a budget, or `max_trials` fails."""

    name = "verify"
    record_type = VerifyResult

    def __init__(self, evaluator: Evaluator, max_trials: int = 3) -> None:
        self.trials = Trials(evaluator, max_trials)

    @property
    def evaluator(self) -> Evaluator:
        return self.trials.evaluator

    @property
    def max_trials(self) -> int:
        return self.trials.max_trials

    def record_fields(self) -> dict[str, Any]:
        best, score = best_trial(self.trials.done)
        return {
            "trials": tuple(self.trials.done),
            "best_trial": best,
            "best_score": score,
            "max_trials": self.max_trials,
        }

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome:
        self.trials.done = []
        while True:
            since_requests, since = meter.model_requests, meter.clock()
            outcome = await runner.run(history, meter)
            if outcome.stop is not TurnStop.END_TURN:
                return outcome  # max_tokens, refusal: unevaluated (a budget raised past us)
            trial = await self.trials.evaluate(
                runner, history, meter, since_requests=since_requests, since=since
            )
            if trial.passed:
                return outcome
            if self.trials.used_up():
                raise LimitReached(Limit.TRIALS)
