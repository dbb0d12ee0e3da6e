"""Loop strategies in-process, with a scripted model client: the pure logic of verify and phased.

Every test goes through `run_turn`, the same driver, runner and meter a session uses.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from acp_agent.config import Config
from acp_agent.errors import LimitsError, ModelUnavailable
from acp_agent.limits import Limits
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, TextDelta, Usage
from acp_agent.permissions.gate import PermissionGate
from acp_agent.permissions.question import ALLOW, PermissionDecision, PermissionQuestion
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.plan import UpdatePlan
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.turn.context.history import History
from acp_agent.turn.events import ToolCallProgress, ToolCallStarted, TurnEvent
from acp_agent.turn.hooks import AfterTool, HookCall, NoHooks
from acp_agent.turn.inprocess import run_turn
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import AttemptOutcome, TurnRunner
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.judge import SUBMIT_VERDICT, JudgeEvaluator, parse_verdict, transcript
from acp_agent.turn.strategies.loops import LoopChoice, choose_loop
from acp_agent.turn.strategies.phased import PhasedStrategy, PlanQuestion, ask_approval
from acp_agent.turn.strategies.select import build_strategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluation, VerifyStrategy
from tests.support.fresh import fresh_answer
from tests.support.procs import alive

Reply = tuple[list[dict[str, Any]], str]
_ids = itertools.count(1)


def text(words: str, stop: str = "end_turn") -> Reply:
    return [{"type": "text", "text": words}], stop


def tool(name: str, args: dict[str, Any]) -> Reply:
    return [{"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": args}], "tool_use"


def verdict(score: float, passed: bool, feedback: str) -> Reply:
    return tool("submit_verdict", {"score": score, "passed": passed, "feedback": feedback})


class ScriptedModel:
    """A ModelClient answering from a script; `hold` makes a reply wait for an event first."""

    streaming = False

    def __init__(
        self, *script: Reply | Callable[[ModelRequest], Reply], fallback: Reply | None = None
    ) -> None:
        self.script = list(script)
        self.fallback = fallback
        self.requests: list[ModelRequest] = []

    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if self.script:
            reply = self.script.pop(0)
        elif self.fallback is not None:
            reply = self.fallback
        else:
            raise ModelUnavailable("the script ran out")
        content, stop = reply(request) if callable(reply) else reply
        for index, block in enumerate(content):
            if block["type"] == "text":
                yield TextDelta(index, block["text"])
        yield MessageDone([dict(b) for b in content], stop, Usage(10, 5))

    def tool_names(self, n: int) -> list[str]:
        return [t["name"] for t in self.requests[n].tools]

    def sent_text(self, n: int) -> str:
        return str(self.requests[n].messages)


@dataclass
class FakeEvaluator:
    """Scripted verdicts: the pure verify logic without a process or a judge."""

    verdicts: list[bool]
    kind: str = "command"
    calls: int = 0

    async def evaluate(
        self, runner: TurnRunner, history: History, meter: TurnMeter, *, trial: int
    ) -> Evaluation:
        self.calls += 1
        passed = self.verdicts.pop(0)
        return Evaluation(passed, 1.0 if passed else 0.0, f"check output {trial}")


@dataclass
class Approver:
    """A session-like permission asker: answers the plan question, records mode switches."""

    answer: str = "always"
    questions: list[PlanQuestion] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    async def approve_plan(self, question: PlanQuestion) -> str:
        self.questions.append(question)
        return self.answer

    async def switch_mode(self, mode_id: str) -> None:
        self.modes.append(mode_id)

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        self.asked.append(question.tool_name)
        return ALLOW


def coding_tools() -> ToolRegistry:
    return ToolRegistry([ReadFile(), WriteFile(), RunCommand(), UpdatePlan()])


# ── verify ───────────────────────────────────────────────────────────────────────────────────


async def test_verify_feeds_each_failure_back_until_a_pass(tmp_path: Path) -> None:
    model = ScriptedModel(text("one"), text("two"), text("three"))
    evaluator = FakeEvaluator([False, False, True])
    result = await run_turn(
        "fix it", model=model, cwd=tmp_path, strategy=VerifyStrategy(evaluator, max_trials=3)
    )
    assert result.status == "completed" and result.stop_reason == "end_turn"
    assert [t.passed for t in result.record.trials] == [False, False, True]
    assert (result.record.best_trial, result.record.best_score) == (3, 1.0)
    assert "Verification failed, attempt 1 of 3: check output 1" in model.sent_text(1)
    assert "Verification failed, attempt 2 of 3: check output 2" in model.sent_text(2)
    assert result.output == "three"


async def test_verify_ends_max_trials_after_max_trials_failures(tmp_path: Path) -> None:
    model = ScriptedModel(fallback=text("again"))
    result = await run_turn(
        "fix it", model=model, cwd=tmp_path, strategy=VerifyStrategy(FakeEvaluator([False] * 5), max_trials=2)
    )
    assert result.stop_reason == "max_turn_requests" and result.record.limit == "maxTrials"
    assert result.status == "limited"
    assert len(model.requests) == 2 and len(result.record.trials) == 2


async def test_an_attempt_that_does_not_end_with_end_turn_is_not_evaluated(tmp_path: Path) -> None:
    evaluator = FakeEvaluator([True])
    result = await run_turn(
        "go",
        model=ScriptedModel(text("cut", stop="max_tokens")),
        cwd=tmp_path,
        strategy=VerifyStrategy(evaluator),
    )
    assert result.stop_reason == "max_tokens" and evaluator.calls == 0
    assert result.record.trials == ()


async def test_a_failing_command_is_fed_back_with_its_output(tmp_path: Path) -> None:
    check = (
        f"n=$(cat {tmp_path}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > {tmp_path}/n; "
        "echo run-$n; [ $n -ge 2 ]"
    )
    model = ScriptedModel(text("one"), text("two"))
    events: list[TurnEvent] = []
    result = await run_turn(
        "go",
        model=model,
        cwd=tmp_path,
        sink=Collect(events),
        strategy=VerifyStrategy(CommandEvaluator(check)),
    )
    assert [t.passed for t in result.record.trials] == [False, True]
    assert "run-1" in model.sent_text(1) and "exit code 1" in model.sent_text(1)
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [e.kind for e in started] == ["execute", "execute"]
    assert started[0].title.startswith("Verify: n=$(cat")
    assert all(t.evaluator == "command" and len(t.feedback) <= 500 for t in result.record.trials)


@dataclass
class Collect:
    events: list[TurnEvent]
    on: Callable[[TurnEvent], None] | None = None

    async def emit(self, event: TurnEvent) -> None:
        self.events.append(event)
        if self.on is not None:
            self.on(event)


# ── the judge ────────────────────────────────────────────────────────────────────────────────


async def test_judge_of_an_unknown_model_asks_for_a_strict_verdict_tool_without_forcing_it(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        text("draft"), verdict(0.5, True, "too vague"), text("better"), verdict(0.9, True, "good")
    )
    history = History()
    thinking = {"type": "enabled", "budget_tokens": 2048}
    result = await run_turn(
        "write a haiku",
        model=model,
        cwd=tmp_path,
        history=history,
        thinking=thinking,
        model_id="claude-test-1",
        strategy=VerifyStrategy(JudgeEvaluator("a real haiku", 0.8)),
    )
    assert model.requests[0].thinking == thinking
    judge = model.requests[1]
    assert judge.tool_choice == {"type": "auto"}  # forced tool choice is a 400 on 5.5 models
    assert judge.tools == [SUBMIT_VERDICT] and SUBMIT_VERDICT["strict"] is True
    assert judge.thinking is None
    assert "a real haiku" in str(judge.messages) and "draft" in str(judge.messages)
    # 0.5 is below the threshold although the judge said passed: a fail, fed back.
    assert [(t.passed, t.score) for t in result.record.trials] == [(False, 0.5), (True, 0.9)]
    assert "too vague" in model.sent_text(2)
    assert "submit_verdict" not in str(history.messages)
    assert [s.kind for s in result.steps] == ["model", "judge", "model", "judge"]
    assert result.record.model_requests == 4


async def test_judge_of_a_structured_output_model_reuses_the_session_request(tmp_path: Path) -> None:
    """Sonnet 5.5: same tools, system and thinking as the loop, the verdict as a JSON schema."""
    verdict_json = json.dumps({"score": 0.9, "passed": True, "feedback": "good"})
    model = ScriptedModel(text("draft"), text(verdict_json))
    history = History()
    result = await run_turn(
        "write a haiku",
        model=model,
        cwd=tmp_path,
        history=history,
        model_id="claude-sonnet-5-5",
        strategy=VerifyStrategy(JudgeEvaluator("a real haiku", 0.8)),
    )
    main, judge = model.requests
    assert main.thinking == {"type": "adaptive", "display": "summarized"}
    assert judge.tool_choice is None and judge.tools == main.tools
    assert judge.system == main.system and judge.thinking == main.thinking
    assert judge.output_config is not None
    assert judge.output_config["format"]["type"] == "json_schema"
    assert judge.messages[0] == main.messages[0]  # the same prefix: read from the cache
    assert "a real haiku" in str(judge.messages[-1])
    assert [(t.passed, t.score) for t in result.record.trials] == [(True, 0.9)]
    assert "verdict" not in str(history.messages).lower()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ([{"type": "text", "text": "{not json"}], "malformed"),
        ([{"type": "text", "text": '{"passed": true}'}], "malformed"),
        ([{"type": "tool_use", "id": "t", "name": "submit_verdict", "input": {"passed": True}}], "malformed"),
        ([], "no verdict"),
    ],
)
def test_a_malformed_verdict_is_a_failed_check_that_says_why(
    content: list[dict[str, Any]], reason: str
) -> None:
    score, passed, feedback = parse_verdict(content)
    assert (score, passed) == (0.0, False)
    assert reason in feedback


async def test_judge_requests_count_and_the_n_plus_first_is_never_sent(tmp_path: Path) -> None:
    model = ScriptedModel(text("a"), verdict(0.1, False, "no"), text("b"), fallback=verdict(1.0, True, "yes"))
    result = await run_turn(
        "go",
        model=model,
        cwd=tmp_path,
        limits=Limits(max_turn_requests=3),
        strategy=VerifyStrategy(JudgeEvaluator("rubric")),
    )
    assert len(model.requests) == 3
    assert result.record.model_requests == 3 and result.record.limit == "maxTurnRequests"
    assert len(result.record.trials) == 1


async def test_every_request_of_the_turn_carries_its_deadline_and_makes_a_step(tmp_path: Path) -> None:
    model = ScriptedModel(text("a"), verdict(0.1, False, "no"), text("b"), verdict(1.0, True, "yes"))
    started = time.monotonic()
    result = await run_turn(
        "go",
        model=model,
        cwd=tmp_path,
        limits=Limits(max_turn_seconds=100),
        strategy=VerifyStrategy(JudgeEvaluator("rubric")),
    )
    deadlines = [r.deadline for r in model.requests]
    assert len(deadlines) == 4 and all(d is not None for d in deadlines)
    assert all(started + 99 < d <= time.monotonic() + 100 for d in deadlines if d is not None)
    assert [s.kind for s in result.steps] == ["model", "judge", "model", "judge"]
    unbounded = ScriptedModel(text("a"))
    await run_turn("go", model=unbounded, cwd=tmp_path, limits=Limits(max_turn_seconds=None))
    assert unbounded.requests[0].deadline is None


async def test_judge_without_a_verdict_is_a_fail_with_a_reason(tmp_path: Path) -> None:
    model = ScriptedModel(text("a"), text("I refuse to call tools"), text("b"), verdict(1, True, "fine"))
    result = await run_turn(
        "go", model=model, cwd=tmp_path, strategy=VerifyStrategy(JudgeEvaluator("rubric"))
    )
    assert not result.record.trials[0].passed
    feedback = result.record.trials[0].feedback
    assert "verdict was malformed" in feedback and "I refuse to call tools" in feedback


def test_the_transcript_shows_tools_and_results_but_not_thinking() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "list files"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "secret", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "list_files", "input": {"pattern": "*"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.py\n" * 2000, "is_error": True}
            ],
        },
    ]
    shown = transcript(messages)
    assert "list_files" in shown and "Tool result (error)" in shown and "secret" not in shown
    assert "characters cut" in shown and len(shown) < 5000


# ── a new strategy through the same meter ────────────────────────────────────────────────────


class TwiceStrategy:
    """Eight lines: ask the model to check its answer once more (a budget raises past it)."""

    name = "twice"

    async def run(self, runner: TurnRunner, history: History, meter: TurnMeter) -> AttemptOutcome:
        await runner.run(history, meter)
        history.add_user([{"type": "text", "text": "Check your answer once more."}])
        return await runner.run(history, meter)


async def test_a_new_strategy_written_here_runs_through_the_same_meter(tmp_path: Path) -> None:
    model = ScriptedModel(fallback=text("answer"))
    result = await run_turn(
        "go", model=model, cwd=tmp_path, strategy=TwiceStrategy(), limits=Limits(max_turn_requests=1)
    )
    assert len(model.requests) == 1
    assert result.record.loop == "twice" and result.record.limit == "maxTurnRequests"
    again = await run_turn("go", model=model, cwd=tmp_path, strategy=TwiceStrategy())
    assert again.record.model_requests == 2 and again.status == "completed"
    assert "Check your answer once more." in model.sent_text(-1)


# ── phased ───────────────────────────────────────────────────────────────────────────────────


def plan_script(tmp_path: Path) -> list[Reply]:
    return [
        tool("update_plan", {"entries": [{"content": "write a.txt"}]}),
        tool("write_file", {"path": "a.txt", "content": "too early"}),
        tool("finish_phase", {"summary": "I will write a.txt"}),
        tool("write_file", {"path": "a.txt", "content": "done"}),
        text("all done"),
    ]


async def test_phased_plans_read_only_asks_then_acts_and_accepts_edits(tmp_path: Path) -> None:
    model = ScriptedModel(*plan_script(tmp_path))
    asker = Approver("always")
    result = await run_turn(
        "add a.txt",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        strategy=PhasedStrategy(),
        permissions=asker,
    )
    # One tool list in every phase (the prompt cache holds); the plan phase refuses changes.
    assert model.tool_names(0) == model.tool_names(3)
    assert "finish_phase" in model.tool_names(0) and "write_file" in model.tool_names(0)
    assert "plan phase (read-only)" in model.sent_text(2)
    assert asker.questions[0].summary == "I will write a.txt"
    assert [e.content for e in asker.questions[0].entries] == ["write a.txt"]
    assert asker.modes == ["acceptEdits"]
    assert asker.asked == ["write_file"]  # the plan-phase write never got as far as asking
    assert "write_file" in model.tool_names(3)
    assert (tmp_path / "a.txt").read_text() == "done"
    record = result.record
    assert [(t.from_, t.to, t.reason) for t in record.transitions] == [
        ("plan", "act", "approved_always"),
        ("act", "done", "reply_ended"),
    ]
    assert record.transitions[0].at_request == 3
    assert record.final_state == "done" and record.trials is None
    assert result.stop_reason == "end_turn"


class Discard:
    async def emit(self, event: TurnEvent) -> None:
        return None


class AfterTools(NoHooks):
    """Hooks that keep the tools their PostToolUse saw."""

    def __init__(self) -> None:
        self.after: list[str] = []

    async def after_tool(self, call: HookCall, result: ToolResult, meter: TurnMeter) -> AfterTool:
        self.after.append(call.tool_name)
        return AfterTool()


async def test_a_write_the_plan_phase_refuses_is_refused_before_it_runs(tmp_path: Path) -> None:
    """The bug: the plan phase offered a wrapper that refused when run, after the PreToolUse hooks
    and with a PostToolUse for the refusal, counted as a call that ran and failed. Now the engine
    refuses it (the phase is read-only at its plan step): never run, no PostToolUse, denied."""
    model = ScriptedModel(tool("write_file", {"path": "a.txt", "content": "too early"}), text("planned"))
    hooks = AfterTools()
    spec = TurnSpec(
        model,
        coding_tools(),
        Discard(),
        ToolContext(cwd=tmp_path),
        RunnerSettings(model="claude-sonnet-5-5", max_tokens=100),
        PermissionGate.without_rules((tmp_path,), Approver()),
        hooks=hooks,
    )
    history, meter = History(), TurnMeter(Limits())
    history.add_prompt([{"type": "text", "text": "plan it"}])
    await PhasedStrategy().run(TurnRunner(spec), history, meter)
    assert not (tmp_path / "a.txt").exists()
    assert "plan phase (read-only)" in model.sent_text(1)
    assert hooks.after == []
    assert (meter.tool_calls, meter.tool_calls_denied) == (0, 1)


async def test_phased_reject_writes_nothing_and_the_next_prompt_plans_again(tmp_path: Path) -> None:
    model = ScriptedModel(tool("finish_phase", {"summary": "write b.txt"}), text("what now?"))
    strategy = PhasedStrategy()
    history = History()
    first = await run_turn(
        "add b.txt",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        strategy=strategy,
        permissions=Approver("reject"),
        history=history,
    )
    assert first.stop_reason == "end_turn" and list(tmp_path.iterdir()) == []
    assert [(t.from_, t.to, t.reason) for t in first.record.transitions] == [("plan", "plan", "rejected")]
    assert first.record.final_state == "plan"
    second = await run_turn(
        "hmm",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        strategy=strategy,
        permissions=Approver(),
        history=history,
    )
    assert second.record.transitions == () and second.record.final_state == "plan"


async def test_phased_without_a_custom_approver_asks_through_the_permission_seam(tmp_path: Path) -> None:
    class PlainAsker:
        def __init__(self) -> None:
            self.calls: list[PermissionQuestion] = []

        async def ask(self, question: PermissionQuestion) -> PermissionDecision:
            self.calls.append(question)
            return ALLOW

    asker = PlainAsker()
    model = ScriptedModel(tool("finish_phase", {"summary": "s"}), text("ok"))
    result = await run_turn(
        "go", model=model, tools=coding_tools(), cwd=tmp_path, strategy=PhasedStrategy(), permissions=asker
    )
    assert asker.calls[0].kind == "switch_mode" and asker.calls[0].raw_input["summary"] == "s"
    assert result.record.transitions[0].reason == "approved_once"


async def test_phased_verifies_and_goes_back_to_act_on_a_fail(tmp_path: Path) -> None:
    model = ScriptedModel(
        tool("finish_phase", {"summary": "plan"}), text("acted"), tool("finish_phase", {"summary": "fixed"})
    )
    result = await run_turn(
        "go",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        strategy=PhasedStrategy(FakeEvaluator([False, True])),
        permissions=Approver("once"),
    )
    reasons = [(t.from_, t.to, t.reason) for t in result.record.transitions]
    assert reasons == [
        ("plan", "act", "approved_once"),
        ("act", "verify", "reply_ended"),
        ("verify", "act", "failed"),
        ("act", "verify", "finished"),
        ("verify", "done", "passed"),
    ]
    assert [t.passed for t in result.record.trials] == [False, True]
    assert "Verification failed, attempt 1 of 3" in model.sent_text(2)


async def test_phased_that_stops_in_act_resumes_in_act(tmp_path: Path) -> None:
    model = ScriptedModel(
        tool("finish_phase", {"summary": "plan"}), tool("read_file", {"path": "x"}), text("done")
    )
    strategy = PhasedStrategy()
    history = History()
    first = await run_turn(
        "go",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        history=history,
        strategy=strategy,
        permissions=Approver(),
        limits=Limits(max_turn_requests=2),
    )
    assert first.record.limit == "maxTurnRequests" and first.record.final_state == "act"
    second = await run_turn(
        "go on",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        history=history,
        strategy=strategy,
        permissions=Approver(),
    )
    assert "write_file" in model.tool_names(2)
    assert second.record.final_state == "done"


async def test_a_cancelled_plan_question_ends_the_turn_cancelled(tmp_path: Path) -> None:
    model = ScriptedModel(tool("finish_phase", {"summary": "s"}))
    result = await run_turn(
        "go",
        model=model,
        tools=coding_tools(),
        cwd=tmp_path,
        strategy=PhasedStrategy(),
        permissions=Approver("cancelled"),
    )
    assert result.status == "cancelled" and result.record.aborted_during == "permission"


# ── cancel, status, steps ────────────────────────────────────────────────────────────────────


async def test_cancel_during_a_verify_command_kills_it_and_says_verify(tmp_path: Path) -> None:
    scope = anyio.CancelScope()
    pids: list[int] = []

    def watch(event: TurnEvent) -> None:
        if isinstance(event, ToolCallProgress) and event.text and event.text.strip().isdigit():
            pids.append(int(event.text.strip()))
            scope.cancel()

    with anyio.fail_after(20):
        result = await run_turn(
            "go",
            model=ScriptedModel(text("done")),
            cwd=tmp_path,
            cancel=scope,
            sink=Collect([], watch),
            strategy=VerifyStrategy(CommandEvaluator("sleep 60 & echo $!; wait")),
        )
    assert result.status == "cancelled" and result.record.aborted_during == "verify"
    assert pids and not alive(pids[0])


async def test_status_and_output_of_in_process_turns(tmp_path: Path) -> None:
    limited = await run_turn(
        "go",
        model=ScriptedModel(fallback=tool("read_file", {"path": "x"})),
        tools=coding_tools(),
        cwd=tmp_path,
        limits=Limits(max_turn_requests=2),
    )
    assert limited.status == "limited" and limited.output == ""
    assert [s.tools[0].status for s in limited.steps] == ["failed", "failed"]
    assert [s.request for s in limited.steps] == [1, 2]
    failed = await run_turn("go", model=ScriptedModel(), cwd=tmp_path)
    assert failed.status == "failed" and "script ran out" in (failed.error or "")
    partial = await run_turn("go", model=ScriptedModel(text("half", stop="max_tokens")), cwd=tmp_path)
    assert partial.status == "limited" and partial.output == "half"


# ── choosing a strategy ──────────────────────────────────────────────────────────────────────


def _chosen(config: Config, overrides: dict[str, Any]) -> Strategy:
    """What a session's first prompt builds: the checked choice, then its strategy."""
    return build_strategy(choose_loop(config, overrides))


def test_verify_without_command_or_rubric_says_what_to_set() -> None:
    with pytest.raises(ValueError, match="verify-cmd") as caught:
        build_strategy(LoopChoice("verify").check())
    assert "verifyRubric" in str(caught.value) and "ACP_AGENT_VERIFY_CMD" in str(caught.value)
    with pytest.raises(LimitsError) as meta:
        _chosen(Config(), {"loop": "verify"})
    assert meta.value.field == "loop"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"loop": "loops"}, "loop"),
        ({"loop": 3}, "loop"),
        ({"loop": "verify", "verifyCommand": 1}, "verifyCommand"),
        ({"loop": "verify", "verifyCommand": "true", "maxTrials": 0}, "maxTrials"),
        ({"loop": "verify", "verifyCommand": "true", "maxTrials": 1.5}, "maxTrials"),
        ({"loop": "verify", "verifyRubric": "r", "verifyThreshold": 2}, "verifyThreshold"),
    ],
)
def test_bad_meta_values_name_their_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(LimitsError) as caught:
        _chosen(Config(), overrides)
    assert caught.value.field == field


def test_meta_overrides_the_config_and_a_command_wins_over_a_rubric() -> None:
    config = Config(loop="verify", verify_rubric="be good", verify_threshold=0.5, max_trials=4)
    judged = _chosen(config, {})
    assert isinstance(judged, VerifyStrategy) and judged.max_trials == 4
    assert judged.evaluator == JudgeEvaluator("be good", 0.5)
    command = _chosen(config, {"verifyCommand": "pytest -q", "maxTrials": 2})
    assert isinstance(command, VerifyStrategy) and command.evaluator == CommandEvaluator("pytest -q")
    assert command.max_trials == 2
    assert _chosen(config, {"loop": "tools"}).name == "tools"
    assert _chosen(Config(), {"loop": "phased"}).name == "phased"


VERIFYING = (
    "acp_agent.turn.strategies.verify",
    "acp_agent.turn.strategies.phased",
    "acp_agent.turn.strategies.judge",
)

LOADS = """
import json, sys
from acp_agent.session.acp.front import session_layer
from acp_agent.turn.strategies.loops import LoopChoice
from acp_agent.turn.strategies.select import build_strategy
session_layer.now().engine.now()
before = sorted(m for m in sys.modules if m in {names!r})
strategy = build_strategy(LoopChoice({loop!r}, verify_cmd="true").check())
after = sorted(m for m in sys.modules if m in {names!r})
print(json.dumps([before, after, type(strategy).__name__]))
"""


@pytest.mark.parametrize(("loop", "built"), [("tools", "ToolsStrategy"), ("verify", "VerifyStrategy")])
def test_the_strategies_that_verify_load_when_first_chosen(loop: str, built: str) -> None:
    """The turn machinery a first prompt waits for leaves them out (issue 46): the default loop
    never loads them, a session that chooses one does."""
    script = LOADS.format(names=set(VERIFYING), loop=loop)
    before, after, name = fresh_answer(script, timeout=60)
    assert before == [] and name == built
    assert after == ([] if loop == "tools" else sorted(VERIFYING))


async def test_the_plan_question_waits_for_the_question_already_asked(tmp_path: Path) -> None:
    """One question at a time: the plan → act question, put another way than allow/reject, waits
    for the one on screen (a parallel call's), as every other question does."""
    on_screen = anyio.Event()
    answered = anyio.Event()
    order: list[str] = []

    class Session(Approver):
        async def ask(self, question: PermissionQuestion) -> PermissionDecision:
            order.append("asked " + question.tool_name)
            on_screen.set()
            await answered.wait()
            order.append("answered " + question.tool_name)
            return ALLOW

        async def approve_plan(self, question: PlanQuestion) -> str:
            order.append("plan asked")
            return "once"

    gate = PermissionGate.without_rules((tmp_path,), Session())
    other = PermissionQuestion("c1", "run_command", "Run make", "execute", "execute", {"command": "make"})
    plan = PlanQuestion("c2", "Plan ready", "do it", ())
    runner = SimpleNamespace(gate=gate)
    meter = TurnMeter(Limits())
    results: list[object] = []

    async def plan_question() -> None:
        results.append(await ask_approval(runner, plan, meter))  # type: ignore[arg-type]

    async with anyio.create_task_group() as group:
        asked, verdict = await gate.verdict(other)
        group.start_soon(gate.ask, asked, verdict)
        await on_screen.wait()
        group.start_soon(plan_question)
        await anyio.wait_all_tasks_blocked()  # the plan question has run as far as it can
        assert order == ["asked run_command"]  # it waits its turn
        answered.set()
    assert order == ["asked run_command", "answered run_command", "plan asked"]
    assert results == [("once", "")]
