"""The `phased` strategy (a state machine): plan → act → verify → done, each phase with its tools.

- plan: read-only; tools that change things are offered (one tool list for every phase keeps the
  prompt cache) but refused when called: the phase runs read-only, so the rule engine refuses
  them at its plan step (`TurnRunner.run(read_only=PLAN_ONLY)`); `update_plan` and
  `finish_phase`. A reply without `finish_phase` ends the turn (the model is asking the user
  something); the next prompt goes on planning.
- plan → act is a question to the rule engine like any call that changes something (permission
  "switch_mode", through the turn's gate), so the session's mode applies: bypassPermissions
  approves it unasked, plan and dontAsk refuse it, and otherwise the user is asked
  (`PlanApprover`): allow always (act, and the session mode becomes `acceptEdits` through
  `ModeSwitcher`), allow once (act under the session's mode), or reject (the turn ends; the next
  prompt plans again). A refusal ends the turn as a rejection does, the model told why.
- act: every tool, under the session's permission mode, until `finish_phase` or the reply ends.
- verify: with an evaluator, as in `verify` (a fail goes back to act, bounded by `max_trials`);
  without one, act goes straight to done.
The phase a turn stops in (by a limit or cancel) is where the next prompt resumes; after done or
a rejection the next prompt starts in plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import structlog

from acp_agent.errors import PermissionCancelled
from acp_agent.permissions.gate import decision_of
from acp_agent.permissions.question import PermissionDecision, PermissionQuestion
from acp_agent.tools.base import Permission, PlanEntry, ToolContext, ToolResult
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.history import History
from acp_agent.turn.events import ToolCallFinished, ToolCallStarted
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.runner import AttemptOutcome, TurnRunner
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.results import Phase, PhasedResult, Transition
from acp_agent.turn.strategies.verify import Evaluator, Trials

__all__ = [
    "PLAN_ONLY",
    "Answer",
    "Approval",
    "FinishPhase",
    "ModeSwitcher",
    "PhasedStrategy",
    "PlanApprover",
    "PlanQuestion",
    "ask_approval",
]

log = structlog.get_logger(__name__)

Answer = Literal["always", "once", "reject", "cancelled"]
Approval = Literal["always", "once", "reject", "cancelled", "refused"]
"""An `Answer`, or the engine's refusal (the mode, a rule: nobody was asked)."""

NOTES: dict[str, str] = {
    "plan": (
        "[acp-agent] Phase: plan (read-only). Explore, write the plan with update_plan, then "
        "call finish_phase with a short summary to ask the user to approve it. Edits and "
        "commands are not available until the user approves."
    ),
    "act": (
        "[acp-agent] Phase: act. Carry out the plan; keep update_plan current. Call "
        "finish_phase with a summary when the planned changes are made."
    ),
}
APPROVED = {
    "always": "The user approved the plan; edits are accepted without asking. ",
    "once": "The user approved the plan; edits and commands may still ask for permission. ",
}
_LOOKS_ONLY: Permission | None = None  # typed, to match the Tool protocol's attribute
REJECTED = (
    "[acp-agent] The user rejected the plan: nothing was changed. Stay in the plan phase "
    "and wait for their next message."
)
REFUSED = (
    "[acp-agent] The plan cannot be approved now: {why} Nothing was changed. Stay in the plan "
    "phase and wait for the user's next message."
)


@dataclass(frozen=True, slots=True)
class PlanQuestion:
    """The plan → act question: shown as a tool call of kind `switch_mode` with the plan in it."""

    call_id: str
    title: str
    summary: str
    entries: tuple[PlanEntry, ...]

    @property
    def text(self) -> str:
        """Summary and plan as one readable text (the tool call's content)."""
        steps = "\n".join(f"{n}. {e.content}" for n, e in enumerate(self.entries, 1))
        return f"{self.summary}\n\nPlan:\n{steps}" if steps else self.summary

    @property
    def raw_input(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "plan": [
                {"content": e.content, "priority": e.priority, "status": e.status} for e in self.entries
            ],
        }

    options = (
        ("allow_always", "Yes, and accept edits", "allow_always", "always"),
        ("allow_once", "Yes, ask before each edit", "allow_once", "once"),
        ("reject_once", "No, keep planning", "reject_once", "reject"),
    )
    """(optionId, name, ACP kind, answer) of each choice offered."""


@runtime_checkable
class PlanApprover(Protocol):
    """The session's way to ask the user the plan → act question (session/request_permission)."""

    async def approve_plan(self, question: PlanQuestion) -> Answer: ...


@runtime_checkable
class ModeSwitcher(Protocol):
    """The session's way to change its permission mode and tell the editor (current_mode_update)."""

    async def switch_mode(self, mode_id: str) -> None: ...


async def ask_approval(runner: TurnRunner, question: PlanQuestion, meter: TurnMeter) -> tuple[Approval, str]:
    """Put plan → act to the turn's gate: approved once unasked, refused (with the engine's words),
    or asked through the session's approver (a plain PermissionAsker can only say once or reject)."""
    gate = runner.gate
    asked, verdict = await gate.verdict(
        PermissionQuestion(
            question.call_id, "finish_phase", question.title, "switch_mode", "switch_mode", question.raw_input
        )
    )
    decided = decision_of(verdict, asked)
    if decided is None:
        meter.asking_permission()
        approver = gate.asker
        if not isinstance(approver, PlanApprover):
            decision = await gate.ask(asked, verdict)
            return ("cancelled" if decision.cancelled else "once" if decision.allowed else "reject"), ""
        # one question at a time, as every other is asked; settled meanwhile, it is not asked
        answered = await gate.ask_in_turn(asked, lambda _verdict: approver.approve_plan(question))
        if not isinstance(answered, PermissionDecision):
            return answered, ""
        decided = answered
    return ("once", "") if decided.allowed else ("refused", decided.message)


@dataclass(slots=True)
class FinishPhase:
    """The tool that ends the current phase; the strategy reads (and clears) `summary`."""

    summary: str | None = None

    name = "finish_phase"
    kind = "switch_mode"
    permission = _LOOKS_ONLY
    description = (
        "End the current phase. In the plan phase, call it after writing the plan with "
        "update_plan: the user is asked to approve the plan before anything changes. In "
        "the act phase, call it when the planned changes are made."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "summary": {
                "type": "string",
                "minLength": 1,
                "description": "A few sentences: what you plan to do, or what you did.",
            }
        },
        "required": ["summary"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        return "Finish phase"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.summary = str(args["summary"])
        return ToolResult("Phase finished; summary recorded.")

    def called(self) -> bool:
        return self.summary is not None


class PhasedStrategy:
    """plan → act → verify → done, one session's state machine (the phase persists across turns)."""

    name = "phased"
    record_type = PhasedResult

    def __init__(self, evaluator: Evaluator | None = None, max_trials: int = 3) -> None:
        if max_trials < 1:
            raise ValueError("maxTrials must be at least 1")
        self.evaluator = evaluator
        self.max_trials = max_trials
        self.trials = Trials(evaluator, max_trials) if evaluator is not None else None
        """The verify phase's trials (None: act goes straight to done)."""
        self.state: Phase = "plan"
        """Where the next prompt starts."""
        self._transitions: list[Transition] = []
        self._phase: Phase = "plan"

    def record_fields(self) -> dict[str, Any]:
        trials = self.trials
        return {
            "transitions": tuple(self._transitions),
            "final_state": self._phase,
            "trials": tuple(trials.done) if trials is not None and trials.done else None,
            "max_trials": self.max_trials if trials is not None else None,
        }

    def _move(self, to: Phase, reason: str, meter: TurnMeter) -> None:
        self._transitions.append(
            Transition(from_=self._phase, to=to, reason=reason, at_request=meter.model_requests)
        )
        log.info("phased.transition", frm=self._phase, to=to, reason=reason)
        self._phase = to

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome:
        self._transitions, self._phase = [], self.state
        if self.trials is not None:
            self.trials.done = []
        try:
            return await self._run(runner, history, meter)
        except LimitReached:
            # The next prompt resumes where the budget stopped this one: planning, or acting (a
            # stop while verifying goes back to act).
            self.state = "plan" if self._phase == "plan" else "act"
            raise

    async def _run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome:
        finish = FinishPhase()
        tools = _phase_tools(runner.tools, finish)
        history.add_user([{"type": "text", "text": NOTES["act" if self.state == "act" else "plan"]}])
        last = AttemptOutcome(TurnStop.END_TURN)
        since_requests, since = meter.model_requests, meter.clock()
        while self._phase != "done":
            if self._phase == "plan":
                last = await runner.run(
                    history, meter, tools=tools, stop_when=finish.called, read_only=PLAN_ONLY
                )
                if finish.summary is None:
                    self.state = "plan"
                    return last
                answer, why = await self._approve(runner, meter, finish.summary)
                finish.summary = None
                if answer in ("reject", "refused"):
                    self._move("plan", "rejected" if answer == "reject" else "refused", meter)
                    text = REJECTED if answer == "reject" else REFUSED.format(why=why)
                    history.add_user([{"type": "text", "text": text}])
                    self.state = "plan"
                    return AttemptOutcome(TurnStop.END_TURN, last.model_stop_reason)
                self._move("act", f"approved_{answer}", meter)
                history.add_user([{"type": "text", "text": APPROVED[answer] + NOTES["act"]}])
                since_requests, since = meter.model_requests, meter.clock()
            elif self._phase == "act":
                last = await runner.run(history, meter, tools=tools, stop_when=finish.called)
                if last.stop is not TurnStop.END_TURN:
                    self.state = "act"
                    return last
                reason = "finished" if finish.called() else "reply_ended"
                finish.summary = None
                self._move("verify" if self.evaluator else "done", reason, meter)
            else:
                await self._verify(runner, history, meter, since_requests, since)
                since_requests, since = meter.model_requests, meter.clock()
        self.state = "plan"
        return AttemptOutcome(TurnStop.END_TURN, last.model_stop_reason, last.final_text)

    async def _verify(
        self, runner: TurnRunner, history: History, meter: TurnMeter, since_requests: int, since: float
    ) -> None:
        """One trial: to done on a pass, back to act on a fail.

        Raises:
            LimitReached: the judge's request is past a budget, or the trials are used up.
        """
        assert self.trials is not None
        trial = await self.trials.evaluate(runner, history, meter, since_requests=since_requests, since=since)
        self._move("done" if trial.passed else "act", "passed" if trial.passed else "failed", meter)
        if not trial.passed and self.trials.used_up():
            raise LimitReached(Limit.TRIALS)

    async def _approve(self, runner: TurnRunner, meter: TurnMeter, summary: str) -> tuple[Approval, str]:
        """Put plan → act to the gate; allow always also switches the session to acceptEdits."""
        plan = runner.tools.get("update_plan")
        question = PlanQuestion(
            f"approve_{runner.new_id()}",
            "Approve the plan and start acting?",
            summary,
            tuple(getattr(plan, "entries", ()) or ()),
        )
        await runner.sink.emit(
            ToolCallStarted(question.call_id, question.title, "switch_mode", question.raw_input)
        )
        answer, why = await ask_approval(runner, question, meter)
        shown = {
            "always": "Approved: edits accepted without asking.",
            "once": "Approved.",
            "reject": "Rejected: keep planning.",
            "cancelled": "Cancelled.",
            "refused": why,
        }[answer]
        await runner.sink.emit(
            ToolCallFinished.of(
                question.call_id, "completed" if answer in ("always", "once") else "failed", shown
            )
        )
        if answer == "cancelled":
            raise PermissionCancelled
        if answer == "always" and isinstance(runner.gate.asker, ModeSwitcher):
            await runner.gate.asker.switch_mode("acceptEdits")
        return answer, why


PLAN_ONLY = (
    "Refused: this is the plan phase (read-only). Describe the change in the plan with "
    "update_plan and call finish_phase; the user approves the plan before anything changes."
)
"""What a call that changes something is told in the plan phase (the engine's plan step)."""


def _phase_tools(tools: ToolRegistry, finish: FinishPhase) -> ToolRegistry:
    """Every phase's tools: the session's, with finish_phase last (one list for every phase keeps
    the prompt cache; the plan phase is read-only by the engine, not by its list)."""
    every = [t for name in tools.names if (t := tools.get(name)) is not None and name != finish.name]
    return ToolRegistry([*every, finish])
