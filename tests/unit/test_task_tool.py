"""The `task` tool in-process: how the tool batch runs calls of a tool that runs beside itself, and
how a subagent's failure or limit comes back to the parent as a result (D27)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.errors import ModelUnavailable, ToolError
from acp_agent.limits import Limits
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, TextDelta, Usage
from acp_agent.permissions.gate import PermissionGate, SessionMode
from acp_agent.permissions.question import HookVerdict
from acp_agent.tools.base import Tool, ToolContext, ToolResult
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.turn.context.history import History, result_text
from acp_agent.turn.events import TurnEvent
from acp_agent.turn.hooks import NO_HOOKS, BeforeTool, HookCall, NoHooks, TurnHooks
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.session_usage import LoopMemory
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.turn.tool_batch import InTurn, ToolBatch
from tests.support.waits import wait_until

Reply = tuple[list[dict[str, Any]], str]
_ids = itertools.count(1)
CHILD = "CHILD PROMPT"


SETTINGS = RunnerSettings(model="m", max_tokens=100, tool_timeout=30)


class Unused:
    """The batch's turn model: never asked (the tool runs no child here)."""

    streaming = False

    def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise AssertionError("no model request in this test")


class Events:
    def __init__(self) -> None:
        self.seen: list[TurnEvent] = []

    async def emit(self, event: TurnEvent) -> None:
        self.seen.append(event)


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": args}


class Beside:
    """A tool that runs beside itself: records `together`, and holds each call until `release`."""

    name, kind, permission, beside_itself = "beside", "other", None, True
    description = "test"
    input_schema: dict[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.together: list[int] = []
        self.running = 0
        self.most = 0
        self.release = anyio.Event()

    def title(self, args: dict[str, Any]) -> str:
        return "beside"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise AssertionError("run_in_turn is what the batch calls")

    async def run_in_turn(self, args: dict[str, Any], ctx: ToolContext, turn: InTurn) -> ToolResult:
        self.together.append(turn.together)
        self.running += 1
        self.most = max(self.most, self.running)
        await self.release.wait()
        self.running -= 1
        return ToolResult("ok")


async def test_calls_of_a_tool_that_runs_beside_itself_run_together_and_know_how_many_share(
    tmp_path: Path,
) -> None:
    tool = Beside()
    calls = [call("beside"), call("beside"), call("write_file", path="w.txt", content="w"), call("beside")]
    history = History()
    history.add_assistant(calls)
    spec = TurnSpec(
        Unused(),
        ToolRegistry([tool, WriteFile()]),
        Events(),
        ToolContext(cwd=tmp_path),
        SETTINGS,
        PermissionGate.without_rules((tmp_path,)),
    )
    batch = ToolBatch(calls, spec, history, TurnMeter(Limits()))
    async with anyio.create_task_group() as group:
        group.start_soon(batch.run)
        # Held until both are in: one at a time, the second never comes and this fails.
        await wait_until(lambda: tool.running == 2, "the first two calls running together", timeout=10)
        tool.release.set()
    assert tool.together == [3, 3, 1]  # the first two share with the one still to come
    assert tool.most == 2  # the two consecutive ones at once; the last alone, after the write
    assert [b["tool_use_id"] for b in history.messages[-1]["content"]] == [c["id"] for c in calls]


class ByConversation:
    """A ModelClient: the subagent's replies (its system prompt) from one script, the parent's
    from another; `child` may be a function of the request."""

    streaming = False

    def __init__(self, parent: list[Reply], child: Callable[[ModelRequest], Reply]) -> None:
        self.parent, self.child = parent, child

    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        content, stop = self.child(request) if request.system == CHILD else self.parent.pop(0)
        for index, block in enumerate(content):
            if block["type"] == "text":
                yield TextDelta(index, block["text"])
        yield MessageDone([dict(b) for b in content], stop, Usage(10, 5))


async def run_parent(
    tmp_path: Path,
    child: Callable[[ModelRequest], Reply],
    limits: Limits,
    system: Any = CHILD,
    *,
    child_tools: list[Tool] | None = None,
    ctx: ToolContext | None = None,
    hooks: TurnHooks = NO_HOOKS,
) -> tuple[TurnMeter, History]:
    task = TaskTool(
        ToolRegistry(child_tools or [ReadFile(), ListFiles()]),
        system,
        changes=bool(child_tools),  # what `--subagent-tools all` gives
    )
    gate = PermissionGate.without_rules((tmp_path,))
    if child_tools:  # a subagent may change something only in acceptEdits and bypassPermissions
        gate = replace(gate, mode=SessionMode("acceptEdits"))
    parent = [([call("task", description="look", prompt="look around")], "tool_use"), ([], "end_turn")]
    runner = TurnRunner(
        TurnSpec(
            ByConversation(parent, child),
            ToolRegistry([task]),
            Events(),
            ctx or ToolContext(cwd=tmp_path),
            RunnerSettings(model="m", max_tokens=100, system="PARENT"),
            gate,
            hooks=hooks,
        )
    )
    history, meter = History(), TurnMeter(limits)
    history.add_prompt([{"type": "text", "text": "go"}])
    await runner.run(history, meter)
    return meter, history


async def test_a_subagent_whose_model_fails_is_an_error_result_and_the_parent_goes_on(tmp_path: Path) -> None:
    def broken(request: ModelRequest) -> Reply:
        raise ModelUnavailable("the API said no")

    meter, history = await run_parent(tmp_path, broken, Limits())
    result = history.messages[2]["content"][0]
    assert result["is_error"] and "the subagent failed: the API said no" in result_text(result["content"])
    assert meter.subagents[0].error == "the API said no"
    assert meter.model_requests == 3  # the parent's two and the subagent's failed one


async def test_a_system_prompt_given_as_a_function_is_built_once_and_sent_by_the_children(
    tmp_path: Path,
) -> None:
    made: list[str] = []

    def system() -> str:
        made.append(CHILD)
        return CHILD

    def answers(request: ModelRequest) -> Reply:
        return [{"type": "text", "text": "found it"}], "end_turn"

    _, history = await run_parent(tmp_path, answers, Limits(), system)
    assert result_text(history.messages[2]["content"][0]["content"]) == "found it"
    assert made == [CHILD]


async def test_a_subagent_stuck_in_a_loop_ends_at_the_repeat_limit_with_its_partial_answer(
    tmp_path: Path,
) -> None:
    def stuck(request: ModelRequest) -> Reply:
        return [{"type": "text", "text": "still looking"}, call("list_files")], "tool_use"

    meter, history = await run_parent(tmp_path, stuck, Limits(repeat_limit=3))
    text = result_text(history.messages[2]["content"][0]["content"])
    assert text.startswith("still looking") and text.endswith(
        "[subagent stopped at its limit: repeatedToolCall]"
    )
    assert meter.subagents[0].meter.model_requests == 3 and meter.last_repeat == 1


async def test_the_task_tool_outside_a_turn_or_a_call_refuses(tmp_path: Path) -> None:
    task = TaskTool(ToolRegistry([ReadFile()]), CHILD)
    with pytest.raises(ToolError):
        await task.run({"description": "d", "prompt": "p"}, ToolContext(cwd=tmp_path))
    spec = TurnSpec(
        Unused(),
        ToolRegistry([task]),
        Events(),
        ToolContext(cwd=tmp_path),
        SETTINGS,
        PermissionGate.without_rules((tmp_path,)),
    )
    turn = InTurn(TurnMeter(Limits()), spec, LoopMemory())
    with pytest.raises(ToolError, match="only as a call of a turn"):
        await task.run_in_turn({"description": "d", "prompt": "p"}, ToolContext(cwd=tmp_path), turn)


class SessionTasks:
    """The session's background commands, as a subagent's context must never reach them."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def refusal(self) -> str | None:
        return None

    async def start(
        self, command: str, argv: list[str], cwd: Path, ctx: ToolContext, *, sandboxed: bool
    ) -> ToolResult:
        self.started.append(command)
        return ToolResult("started bg_00000000")

    async def read(self, task_id: str, wait: float) -> ToolResult:
        raise AssertionError("not read here")

    async def stop(self, task_id: str) -> ToolResult:
        raise AssertionError("not stopped here")


async def test_a_subagents_commands_never_run_in_the_background(tmp_path: Path) -> None:
    """A task would outlive the subagent that started it, which nobody would then read or stop."""

    def starts_a_server(request: ModelRequest) -> Reply:
        if request.messages[-1]["content"][0].get("type") == "tool_result":
            return [{"type": "text", "text": "could not"}], "end_turn"
        return [call("run_command", command="sleep 300", background=True)], "tool_use"

    session = SessionTasks()
    ctx = ToolContext(cwd=tmp_path, background=session)
    _, history = await run_parent(tmp_path, starts_a_server, Limits(), child_tools=[RunCommand()], ctx=ctx)
    assert result_text(history.messages[2]["content"][0]["content"]) == "could not"
    assert session.started == []


class DeniesWrites(NoHooks):
    """A PreToolUse hook that denies every write_file call, the subagents' included."""

    async def before_tool(self, call: HookCall, meter: TurnMeter) -> BeforeTool:
        if call.tool_name == "write_file":
            return BeforeTool(HookVerdict("deny", "Blocked by a PreToolUse hook: no writes"))
        return BeforeTool()


async def test_a_hooks_deny_holds_for_a_subagent_whatever_the_asker(tmp_path: Path) -> None:
    """The bug: under an asker without rules, a subagent's call was settled by the subagents' own
    shorter order, which never read the hook's verdict: the write ran. Now the one engine decides
    it, through the turn's gate: a hook's deny is its step 1, for a subagent too."""

    def writes(request: ModelRequest) -> Reply:
        if request.messages[-1]["content"][0].get("type") == "tool_result":
            return [{"type": "text", "text": "tried"}], "end_turn"
        return [call("write_file", path="out.txt", content="x")], "tool_use"

    _, history = await run_parent(tmp_path, writes, Limits(), child_tools=[WriteFile()], hooks=DeniesWrites())
    assert result_text(history.messages[2]["content"][0]["content"]) == "tried"
    assert not (tmp_path / "out.txt").exists()
