"""run_command: a shell command in the editor's terminal, or locally in its own session.

Locally (`local_command.py`) the command leads a new session and whatever is left of it is
stopped on timeout, on cancel and when it ends (`process_group.py`); the result says what was
stopped. With the client's `terminal` capability the editor runs and streams the command
(`terminal_command.py`); the tool waits, kills on timeout or cancel, and always releases. Either
way the model gets the exit code and capped output (docs/decisions.md D6).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import Permission, Preview, ToolContext, ToolResult
from acp_agent.tools.local_command import DRAIN_SECONDS, LocalCommand
from acp_agent.tools.paths import resolve_inside
from acp_agent.tools.terminal_command import HOST_SECONDS, TerminalCommand
from acp_agent.tools.truncate import clip_line

__all__ = ["RunCommand"]

# Typed, so that `permission = _EXECUTE` on a class matches the Tool protocol's attribute type.
_EXECUTE: Permission | None = "execute"


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


@dataclass(frozen=True, slots=True)
class RunCommand:
    """Run a shell command and give the model its exit code and (capped) output."""

    max_output_bytes: int = 32 * 1024
    default_timeout: float = 120.0
    max_timeout: float = 600.0
    kill_grace: float = 2.0
    progress_interval: float = 0.25
    progress_tail_bytes: int = 8 * 1024
    terminal_output_limit: int = 1024 * 1024

    name = "run_command"
    kind = "execute"
    permission = _EXECUTE
    description = (
        "Run a shell command with bash -c in the working directory (or in `cwd`, a directory "
        "inside it) and return its exit code and combined stdout and stderr. stdin is empty, so "
        "nothing can prompt for input. `timeout` is in seconds (default 120, at most 600); on "
        "timeout the command and every process it started are killed and the output so far is "
        "returned. Background processes still running when the command ends are stopped, so do "
        "not start servers with '&'. Output over 32 KiB keeps its first and last 16 KiB with a "
        "note saying how much was cut. A non-zero exit code is reported, not treated as an error."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "Shell command line."},
            "cwd": {
                "type": "string",
                "description": "Directory to run in, relative to the cwd; default '.'.",
            },
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": 600,
                "description": "Seconds before the command is killed; default 120.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return "Run command"
        lines = command.strip().splitlines()
        shown = clip_line(lines[0], 60) + (" …" if len(lines) > 1 else "")
        return f"Run `{shown}`"

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The command line and the directory it would run in, for the permission question."""
        shown_cwd = str(args.get("cwd") or ".")
        try:
            cwd = str(resolve_inside(ctx.roots, shown_cwd))
        except ToolError:
            cwd = shown_cwd  # the run will refuse it and say why
        return Preview(text=f"{args.get('command', '')}\n\nin {cwd}")

    def time_allowance(self, args: dict[str, Any]) -> float:
        """How long a caller should let `run` take: the command's timeout plus its cleanup."""
        return self._timeout(args) + self.kill_grace + DRAIN_SECONDS + 3 * HOST_SECONDS

    def _timeout(self, args: dict[str, Any]) -> float:
        value = args.get("timeout")
        if value is None:
            return self.default_timeout
        return min(max(float(value), 0.001), self.max_timeout)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        if not command.strip():
            raise ToolError("command must not be empty")
        shown_cwd = str(args.get("cwd") or ".")
        cwd = resolve_inside(ctx.roots, shown_cwd)
        if not cwd.is_dir():
            raise ToolError(
                f"cwd {shown_cwd!r} is not a directory"
                if cwd.exists()
                else f"no such directory: {shown_cwd!r}"
            )
        timeout = self._timeout(args)
        if ctx.terminal is not None:
            in_terminal = TerminalCommand(self.max_output_bytes, self.terminal_output_limit)
            return await in_terminal.run(ctx.terminal, _shell(), command, cwd, timeout, ctx)
        locally = LocalCommand(
            self.max_output_bytes, self.kill_grace, self.progress_interval, self.progress_tail_bytes
        )
        return await locally.run(_shell(), command, cwd, timeout, ctx)
