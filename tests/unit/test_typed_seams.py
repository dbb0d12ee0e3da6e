"""What a tool, a strategy or a model client may also do is a protocol mypy sees, never a `getattr`.

The loop reads each optional capability through a small `runtime_checkable` protocol
(`tools/base.py`, `turn/tool_batch.py:InTurnTool`, `turn/strategies/base.py:RecordingStrategy`,
`model/provider.py`), so a renamed or mistyped capability is a type error, not a silent default.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from acp_agent.tools.base import PreviewTool, ReadOnlyTool, SelfTimedTool, ToolContext, TwinTool, reads_only
from acp_agent.tools.files.edit import EditFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.plan import UpdatePlan
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.turn.strategies.base import RecordingStrategy, record_of
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, VerifyStrategy
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.turn.tool_batch import InTurnTool

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"
CAPABILITIES = {
    # tools
    "permission",
    "read_only",
    "beside_itself",
    "preview",
    "time_allowance",
    "run_in_turn",
    # strategies
    "record_type",
    "record_fields",
    # model clients (model/base.py, model/provider.py)
    "streaming",
    "answered_once",
    "list_models",
    # a command's target
    "allowed_tools",
}


def capabilities_read_by_name(source: str) -> list[tuple[int, str]]:
    """(line, name) of every `getattr(x, "<capability>", ...)` in `source`."""
    return [
        (node.lineno, str(node.args[1].value))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value in CAPABILITIES
    ]


def test_the_check_finds_a_capability_read_by_name() -> None:
    source = 'a = getattr(tool, "run_in_turn", None)\nb = getattr(event, "call_id", None)\n'
    assert capabilities_read_by_name(source) == [(1, "run_in_turn")]


def test_no_capability_is_read_by_name() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, name in capabilities_read_by_name(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_shipped_tools_have_the_capabilities_they_declare() -> None:
    task = TaskTool(ToolRegistry([ReadFile()]), "system")
    assert [reads_only(t) for t in (ReadFile(), EditFile(), RunCommand(), UpdatePlan(), task)] == [
        True,
        False,
        False,
        False,
        True,  # its subagents only look
    ]
    assert isinstance(task, InTurnTool) and isinstance(task, TwinTool) and isinstance(task, SelfTimedTool)
    assert not isinstance(RunCommand(), InTurnTool) and not isinstance(ReadFile(), TwinTool)
    assert isinstance(RunCommand(), PreviewTool) and isinstance(EditFile(), PreviewTool)
    assert not isinstance(ReadFile(), PreviewTool) and not isinstance(ReadFile(), SelfTimedTool)
    assert isinstance(ReadFile(), ReadOnlyTool) and not isinstance(UpdatePlan(), ReadOnlyTool)


def test_a_strategy_with_fields_of_its_own_gives_its_record_type() -> None:
    verify = VerifyStrategy(CommandEvaluator("true"))
    assert isinstance(verify, RecordingStrategy) and not isinstance(ToolsStrategy(), RecordingStrategy)
    record_type, fields = record_of(verify)
    assert record_type is verify.record_type and fields["loop"] == "verify"
    assert record_of(ToolsStrategy())[1] == {"loop": "tools"}


def test_a_tool_without_optional_capabilities_is_still_a_tool() -> None:
    class Bare:
        name, description, kind, permission = "bare", "A tool with nothing optional.", "other", None
        input_schema: dict[str, Any] = {"type": "object"}

        def title(self, args: dict[str, Any]) -> str:
            return "Bare"

        async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
            raise NotImplementedError

    bare = Bare()
    assert not reads_only(bare)
    assert not any(
        isinstance(bare, p) for p in (ReadOnlyTool, TwinTool, PreviewTool, SelfTimedTool, InTurnTool)
    )
