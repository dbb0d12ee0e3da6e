"""A shell command run in the editor's terminal (the client's `terminal` capability).

The editor runs and streams the command; this side waits, kills it on timeout or cancel, reads
what it printed, and always releases the terminal. Every cleanup call is bounded and its failure
only logged, so an editor that stops answering cannot hang the turn.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.base import Progress, TerminalExit, TerminalHost, ToolContext, ToolResult
from acp_agent.tools.shell.output import exit_status, tell_cancelled
from acp_agent.tools.truncate import cap_text

__all__ = ["HOST_SECONDS", "TerminalCommand"]

log = structlog.get_logger(__name__)

HOST_SECONDS = 5.0
"""Bound on each terminal/* call made while cleaning up."""


async def _quietly(step: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """A cleanup call to the editor: bounded, and its failure only logged."""
    try:
        with anyio.move_on_after(HOST_SECONDS, shield=True):
            return await call()
    except Exception as exc:
        log.warning("shell.terminal_cleanup_failed", step=step, error=str(exc))
    return None


@dataclass(frozen=True, slots=True)
class TerminalCommand:
    """How a terminal run is capped (the fields of `RunCommand` of the same names)."""

    max_output_bytes: int
    terminal_output_limit: int

    async def run(
        self, term: TerminalHost, argv: list[str], cwd: Path, timeout: float, ctx: ToolContext
    ) -> ToolResult:
        """Run `argv` in an editor terminal shown in the tool call; kill it at `timeout`."""
        terminal_id = await term.create(argv[0], argv[1:], cwd, self.terminal_output_limit)
        log.debug("shell.terminal_created", terminal_id=terminal_id)
        started = time.monotonic()
        finished = False
        try:
            try:
                with anyio.move_on_after(2.0, shield=True):
                    await ctx.report(Progress(terminal_id=terminal_id))
            except Exception as exc:  # the editor still runs it; only the live view is lost
                log.warning("shell.embed_failed", error=str(exc))
            status: TerminalExit | None = None
            with anyio.move_on_after(timeout) as limit:
                status = await term.wait_for_exit(terminal_id)
            if limit.cancelled_caught:
                await _quietly("kill", lambda: term.kill(terminal_id))
            try:
                with anyio.fail_after(HOST_SECONDS):
                    result = await term.output(terminal_id)
            except TimeoutError:
                raise ToolError(
                    f"the editor did not answer terminal/output within {HOST_SECONDS:g} s"
                ) from None
            finished = True
        except anyio.get_cancelled_exc_class():
            await _quietly("kill", lambda: term.kill(terminal_id))
            so_far = await _quietly("output", lambda: term.output(terminal_id))
            await _quietly(
                "report",
                lambda: tell_cancelled(
                    ctx,
                    started,
                    "the command was killed",
                    cap_text(so_far.output, self.max_output_bytes) if so_far else "",
                ),
            )
            finished = True  # killed and read already
            raise
        finally:
            if not finished:  # failed: the command may still be running
                await _quietly("kill", lambda: term.kill(terminal_id))
                await _quietly("output", lambda: term.output(terminal_id))
            await _quietly("release", lambda: term.release(terminal_id))
        timed_out = limit.cancelled_caught
        output = cap_text(result.output, self.max_output_bytes) if result.output else ""
        if result.truncated:
            output = f"[earlier output dropped: the editor kept only the last part]\n{output}"
        exit_ = status or result.exit
        if timed_out:
            text = f"timed out after {timeout:g}s; the command was killed"
        else:
            text = exit_status(exit_.exit_code if exit_ else None, exit_.signal if exit_ else None)
        raw = {
            "exitCode": None if timed_out or exit_ is None else exit_.exit_code,
            "signal": None if exit_ is None else exit_.signal,
            "timedOut": timed_out,
            "truncated": result.truncated,
        }
        return ToolResult(
            text=f"{text}\n{output or '(no output)'}",
            is_error=timed_out,
            raw_output=raw,
            terminal_id=terminal_id,
        )
