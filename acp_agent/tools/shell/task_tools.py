"""command_output and stop_command: the model's hold on the commands run_command started with
`background: true` (`tasks.py`, reached through `ToolContext.background`).

Neither asks permission: they read and stop what the model itself started, after the question
its run_command asked; neither reaches another session's commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import BackgroundCommands, Permission, ToolContext, ToolResult
from acp_agent.tools.shell.run_command import NO_BACKGROUND

__all__ = ["ReadCommandOutput", "StopCommand"]

_NO_PERMISSION: Permission | None = None
MAX_WAIT = 600
_TASK_ID = {
    "type": "string",
    "minLength": 1,
    "description": "The task id run_command returned (bg_ and 8 hex digits).",
}


def _tasks(ctx: ToolContext) -> BackgroundCommands:
    if ctx.background is None:
        raise ToolError(NO_BACKGROUND)
    return ctx.background


def _task_title(verb: str, args: dict[str, Any]) -> str:
    task_id = args.get("task_id")
    return f"{verb} {task_id}" if isinstance(task_id, str) and len(task_id) <= 40 else verb


@dataclass(frozen=True, slots=True)
class ReadCommandOutput:
    """What a background command printed since the last read, and how it ended."""

    name = "command_output"
    kind = "read"
    permission = _NO_PERMISSION
    read_only = True
    description = (
        "Read what a background command (run_command with background: true) printed since the "
        "last read, and its exit status once it has ended. Output over 32 KiB keeps its first "
        "and last 16 KiB with a note saying how much was cut. `wait` (seconds, default 0, at "
        "most 600) first waits for the command to end: use it to wait for a long run rather than "
        "reading again and again."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "task_id": _TASK_ID,
            "wait": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_WAIT,
                "description": "Seconds to wait for the command to end before reading; default 0.",
            },
        },
        "required": ["task_id"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        return _task_title("Output of", args)

    def time_allowance(self, args: dict[str, Any]) -> float:
        """The wait, and a moment to read (from an editor's terminal, at most its answer's bound)."""
        wait = args.get("wait")
        return (float(wait) if isinstance(wait, int | float) else 0.0) + 15.0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        wait = min(max(float(args.get("wait") or 0), 0.0), MAX_WAIT)
        return await _tasks(ctx).read(str(args["task_id"]), wait)


@dataclass(frozen=True, slots=True)
class StopCommand:
    """Stop a background command and all it started."""

    name = "stop_command"
    kind = "execute"
    permission = _NO_PERMISSION
    description = (
        "Stop a background command (run_command with background: true) and every process it "
        "started: SIGTERM, then SIGKILL to what is still running 2 s later. Returns what it "
        "printed since the last read and how it ended; a command that had ended already is "
        "left as it was."
    )
    input_schema = {
        "type": "object",
        "properties": {"task_id": _TASK_ID},
        "required": ["task_id"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        return _task_title("Stop", args)

    def time_allowance(self, args: dict[str, Any]) -> float:
        """The kill grace, the drain and a moment to read."""
        return 30.0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await _tasks(ctx).stop(str(args["task_id"]))
