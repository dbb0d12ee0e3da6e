"""run_command: a shell command in the editor's terminal, or locally in its own session.

Either way it runs in the session's sandbox when there is one (`tools/sandbox/command_sandbox.py`); in
the editor's terminal the command the editor starts is bwrap itself. Should bwrap fail there (an editor
in a container of its own), the session's later commands run locally, still sandboxed.

Locally (`local.py`) the command leads a new session and whatever is left of it is
stopped on timeout, on cancel and when it ends (`process_group.py`); the result says what was
stopped. With the client's `terminal` capability the editor runs and streams the command
(`terminal.py`); the tool waits, kills on timeout or cancel, and always releases. Either
way the model gets the exit code and capped output (docs/decisions.md D6).

With `background: true` the command starts the same way (asked, sandboxed, here or in the editor's
terminal) but is handed to the session's background commands (`tasks.py`), and the call returns
at once with its task id.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import Permission, Preview, ToolContext, ToolResult
from acp_agent.tools.sandbox.command_sandbox import Wrapped
from acp_agent.tools.shell.local import DRAIN_SECONDS, LocalCommand
from acp_agent.tools.shell.output import bwrap_error
from acp_agent.tools.shell.terminal import HOST_SECONDS, TerminalCommand
from acp_agent.tools.truncate import clip_line

__all__ = ["RunCommand"]

# Typed, so that `permission = _EXECUTE` on a class matches the Tool protocol's attribute type.
_EXECUTE: Permission | None = "execute"
NO_BACKGROUND = (
    "background commands are not available here (a subagent's commands, or a turn run without an "
    "ACP session, end with it): run it in the foreground with a timeout"
)
START_SECONDS = 90.0
"""Bound on starting a background command (the editor has 60 s to answer terminal/create)."""


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
        "not start servers with '&': start a server, a watcher or a long run with "
        "`background: true` instead, which returns at once with a task id; command_output reads "
        "it, stop_command stops it, and it ends with the session (at most 8 run at once). "
        "Output over 32 KiB keeps its first and last 16 KiB with a note saying how much was "
        "cut. A non-zero exit code is reported, not treated as an error."
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
            "background": {
                "type": "boolean",
                "description": "Start it in the background and return its task id at once; "
                "`timeout` does not apply. Default false.",
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
        return f"Run `{shown}` in the background" if args.get("background") is True else f"Run `{shown}`"

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The command line, the directory it would run in and what the sandbox lets it reach, for
        the permission question (with the choice to let it write the git hooks and config)."""
        shown_cwd = str(args.get("cwd") or ".")
        try:
            cwd = str(ctx.resolve(shown_cwd))
        except ToolError:
            cwd = shown_cwd  # the run will refuse it and say why
        if args.get("background") is True:
            if ctx.background is None:
                return Preview(error=NO_BACKGROUND)
            if (why := ctx.background.refusal()) is not None:
                return Preview(error=why)  # the cap: nobody is asked for a call that cannot run
        text = f"{args.get('command', '')}\n\nin {cwd}"
        if ctx.sandbox is None:
            return Preview(text=text)
        reach, grants = await ctx.sandbox.question(ctx.roots)
        return Preview(text=f"{text}\n\n{reach}", grants=grants)

    def time_allowance(self, args: dict[str, Any]) -> float:
        """How long a caller should let `run` take: the command's timeout plus its cleanup (in the
        background: the start alone, an editor's terminal/create included)."""
        if args.get("background") is True:
            return START_SECONDS
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
        cwd = ctx.resolve(shown_cwd)
        if not cwd.is_dir():
            raise ToolError(
                f"cwd {shown_cwd!r} is not a directory"
                if cwd.exists()
                else f"no such directory: {shown_cwd!r}"
            )
        background = args.get("background") is True
        if background and ctx.background is None:
            raise ToolError(NO_BACKGROUND)
        timeout = self._timeout(args)
        sandbox, argv = ctx.sandbox, [_shell(), "-c", command]
        terminal = ctx.terminal if sandbox is None or sandbox.editor_refused is None else None
        wrapped = (
            await sandbox.wrap(
                argv,
                cwd=cwd,
                roots=ctx.roots,
                grants=ctx.grants,
                in_editor=bool(terminal),
                names=command,
            )
            if sandbox is not None
            else Wrapped(argv, None)
        )
        if background:
            assert ctx.background is not None
            return await ctx.background.start(
                command,
                wrapped.argv,
                cwd,
                replace(ctx, terminal=terminal),
                sandboxed=wrapped.confinement is not None,
            )
        if terminal is not None:
            in_terminal = TerminalCommand(self.max_output_bytes, self.terminal_output_limit)
            result = await in_terminal.run(terminal, wrapped.argv, cwd, timeout, ctx)
            failed = _bwrap_failure(result) if sandbox is not None and wrapped.confinement else None
            if failed is None:
                return result
            await sandbox.editor_failed(failed)  # type: ignore[union-attr]
            return ToolResult(
                f"not run: the sandbox could not start in the editor's terminal ({failed}); "
                "run it again to run it inside the agent, sandboxed",
                is_error=True,
                raw_output=result.raw_output,
                terminal_id=result.terminal_id,
            )
        locally = LocalCommand(
            self.max_output_bytes, self.kill_grace, self.progress_interval, self.progress_tail_bytes
        )
        return await locally.run(wrapped.argv, cwd, timeout, ctx, sandboxed=wrapped.confinement is not None)


def _bwrap_failure(result: ToolResult) -> str | None:
    """bwrap's own error in a terminal command's result (`output.bwrap_error`), else None."""
    output = result.text.split("\n", 1)[1] if "\n" in result.text else ""
    return bwrap_error((result.raw_output or {}).get("exitCode"), output)
