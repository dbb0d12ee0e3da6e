"""One reply's tool calls as a `ToolBatch`: the prefix that fits runs, every call gets one result in
model order, and the meter hears each call through its methods."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_agent.limits import Limits
from acp_agent.model.base import ModelEvent, ModelRequest
from acp_agent.permissions.gate import PermissionGate
from acp_agent.permissions.question import PermissionDecision, PermissionQuestion
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.history import History, result_text
from acp_agent.turn.events import ToolCallStarted, TurnEvent
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.tool_batch import ToolBatch


class NoModel:
    """A batch sends no request: its turn's model is never asked."""

    streaming = False

    def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise AssertionError("a tool batch sends no model request")


class Events:
    def __init__(self) -> None:
        self.seen: list[TurnEvent] = []

    async def emit(self, event: TurnEvent) -> None:
        self.seen.append(event)


class Declines:
    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        return PermissionDecision(False, message="no thanks")


def call(n: int, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}


async def run_batch(
    tmp_path: Path, calls: list[dict[str, Any]], limits: Limits, asker: Any = None
) -> tuple[TurnMeter, list[dict[str, Any]], Events]:
    (tmp_path / "a.txt").write_text("alpha\n")
    history = History()
    history.add_assistant(calls)
    meter, events = TurnMeter(limits), Events()
    spec = TurnSpec(
        NoModel(),
        ToolRegistry([ReadFile(), WriteFile()]),
        events,
        ToolContext(cwd=tmp_path),
        RunnerSettings(model="m", max_tokens=100, tool_timeout=5),
        PermissionGate.without_rules((tmp_path,), asker or Declines()),
    )
    await ToolBatch(calls, spec, history, meter).run()
    return meter, history.messages[-1]["content"], events


async def test_the_calls_past_the_budget_are_answered_not_executed(tmp_path: Path) -> None:
    calls = [call(1, path="a.txt"), call(2, path="a.txt"), call(3, path="a.txt")]
    meter, results, events = await run_batch(tmp_path, calls, Limits(max_tool_calls=2))
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2", "toolu_3"]
    assert [result_text(r["content"]) for r in results[:2]] == ["alpha\n", "alpha\n"]
    assert result_text(results[2]["content"]) == "not executed: per-turn tool-call budget exhausted (2/2)"
    assert (meter.tool_calls, meter.tool_calls_skipped, meter.tool_calls_failed) == (2, 1, 0)
    assert [e.call_id for e in events.seen if isinstance(e, ToolCallStarted)] == ["toolu_1", "toolu_2"]
    with pytest.raises(LimitReached) as stopped:
        meter.check_batch()
    assert stopped.value.limit is Limit.TOOL_CALLS


async def test_unknown_tools_and_bad_input_count_as_started_and_failed(tmp_path: Path) -> None:
    calls = [call(1, name="no_such_tool"), call(2, nonsense=True)]
    meter, results, _ = await run_batch(tmp_path, calls, Limits())
    assert "unknown tool 'no_such_tool'" in result_text(results[0]["content"])
    assert all(r.get("is_error") for r in results)
    assert (meter.tool_calls, meter.tool_calls_failed, meter.tool_calls_denied) == (2, 2, 0)
    meter.check_batch()  # nothing skipped, nothing repeated: the turn goes on


async def test_a_declined_call_is_denied_not_counted(tmp_path: Path) -> None:
    calls = [call(1, name="write_file", path="b.txt", content="x")]
    meter, results, _ = await run_batch(tmp_path, calls, Limits())
    assert result_text(results[0]["content"]) == "no thanks" and results[0]["is_error"]
    assert (meter.tool_calls, meter.tool_calls_denied, meter.tool_calls_failed) == (0, 1, 1)
    assert meter.phase == "permission" and not (tmp_path / "b.txt").exists()
