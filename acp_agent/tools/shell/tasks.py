"""A session's background commands: started by run_command with `background: true`, read by
command_output, stopped by stop_command, listed by `/tasks`.

A task outlives the turn that started it, never its session: closing or deleting the session and
the agent's exit stop it with all it started (`aclose`; a kill -9 leaves that to the warden,
`process/lifetime.py`). It runs where run_command's commands run (`task_runs.py`): in the
editor's terminal when the client has one, else here, in the session's sandbox either way, after
the same permission question.

What the editor sees: the call that started it ends `completed` in its turn, as every call does
before the prompt's answer; its content then follows the command outside the turn (the editor's
terminal, live; or a tail at most once per interval, D6) and, when the command ends by itself
with an error or a signal, its status becomes `failed`.

What the model sees: the task id at once; then what it printed since the last read (a capped head
and tail) and, once it ended, how; the tasks that ended since its last turn are named after the
next prompt (`news`). At most `max_running` run at once per session (the next is a tool error);
here the output is also spooled to the state dir, capped (`spool.py`), and a flood of output is
cut, never stopped: the model decides whether the command should go on.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
import structlog

from acp_agent.errors import ToolError
from acp_agent.process.lifetime import owned_env
from acp_agent.tools.base import Progress, ToolContext, ToolResult
from acp_agent.tools.printable import one_line
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox
from acp_agent.tools.shell.local import spawn
from acp_agent.tools.shell.output import bwrap_error, exit_status
from acp_agent.tools.shell.spool import Spool, SpoolFolder
from acp_agent.tools.shell.task_runs import LocalRun, RunLimits, TaskRun, TerminalRun
from acp_agent.tools.truncate import clip_line

__all__ = ["BackgroundTasks", "Task", "TaskLimits", "runtime"]

log = structlog.get_logger(__name__)

TASK_ID = re.compile(r"bg_[0-9a-f]{8}")
_SHOWN_CHARS = 60
"""Of a command line, in a status line or a listing."""


@dataclass(frozen=True, slots=True)
class TaskLimits:
    """How many background commands a session runs at once, and how each is capped and shown."""

    max_running: int = 8
    max_output_bytes: int = 32 * 1024
    """What one read returns at most (a head and a tail), as run_command."""
    spool_bytes: int = 8 * 1024 * 1024
    """What one task's spool keeps on disk at most (the latest output)."""
    kept_ended: int = 16
    """Ended tasks kept for reading and `/tasks`; older ones are forgotten with their spools."""
    kill_grace: float = 2.0
    progress_interval: float = 0.25
    progress_tail_bytes: int = 8 * 1024
    terminal_output_limit: int = 1024 * 1024

    def run_limits(self) -> RunLimits:
        return RunLimits(
            self.max_output_bytes, self.kill_grace, self.progress_interval, self.progress_tail_bytes
        )


def runtime(seconds: float) -> str:
    """`4.2 s`, `3 min 12 s`, `2 h 05 min`."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass(slots=True, eq=False)
class Task:
    """One background command and what the session knows of it."""

    id: str
    command: str
    run: TaskRun
    report: Callable[[Progress], Awaitable[None]]
    """The editor's view of it: the call that started it."""
    spool: Spool | None = None
    started: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    stopped: bool = False
    """Stopped on request (stop_command, the session's end), not ended by itself."""
    told: bool = False
    """The model was shown how it ended."""
    not_run: str | None = None
    """Why it never ran (the sandbox could not start in the editor's terminal)."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    """Set once it ended and the editor was told."""

    @property
    def running(self) -> bool:
        return not self.run.ended.is_set()

    @property
    def shown(self) -> str:
        return clip_line(one_line(self.command), _SHOWN_CHARS)

    def runtime(self) -> str:
        return runtime((self.ended_at or time.monotonic()) - self.started)

    def state(self) -> str:
        """`running`, `stopped`, or how it ended (`exit code 1`, `terminated by signal SIGSEGV`)."""
        if self.running:
            return "running"
        if self.not_run is not None:
            return "not run"
        if self.stopped:
            return "stopped"
        exit_ = self.run.exit
        return exit_status(exit_.exit_code, exit_.signal) if exit_ is not None else "ended"

    def status_line(self) -> str:
        if self.running:
            return f"{self.id} `{self.shown}`: running for {self.runtime()}"
        if self.not_run is not None:
            return f"{self.id} `{self.shown}`: {self.not_run}"
        return f"{self.id} `{self.shown}`: {self.state()} after {self.runtime()}"

    def failed(self) -> bool:
        """It ended by itself with an error or a signal (or never ran)."""
        if self.not_run is not None:
            return True
        exit_ = self.run.exit
        return not self.stopped and exit_ is not None and (exit_.exit_code != 0 or exit_.signal is not None)

    def raw(self) -> dict[str, object]:
        exit_ = self.run.exit
        return {
            "taskId": self.id,
            "running": self.running,
            "stopped": self.stopped,
            "exitCode": None if self.running or exit_ is None else exit_.exit_code,
            "signal": None if self.running or exit_ is None else exit_.signal,
            "outputBytes": self.run.total,
        }


class BackgroundTasks:
    """The background commands of one session (`BackgroundCommands` for the tools), watched in the
    session's task group `group`; `spools` is where their output goes on disk (None: nowhere)."""

    def __init__(
        self,
        group: anyio.abc.TaskGroup,
        spools: SpoolFolder | None = None,
        limits: TaskLimits | None = None,
    ) -> None:
        self._group = group
        self._spools = spools
        self.limits = limits or TaskLimits()
        self.tasks: dict[str, Task] = {}
        self._starting = 0
        self.closed = False

    def running(self) -> list[Task]:
        return [task for task in self.tasks.values() if task.running]

    def refusal(self) -> str | None:
        if self.closed:
            return "the session is closing: no command starts in the background any more"
        running = self.running()
        if len(running) + self._starting < self.limits.max_running:
            return None
        named = ", ".join(f"{task.id} (`{task.shown}`)" for task in running)
        return (
            f"not started: at most {self.limits.max_running} background commands run at once in a "
            f"session, and these run: {named}. Stop one with stop_command, or wait for one to end "
            "(command_output with `wait`), then start it again"
        )

    async def start(
        self, command: str, argv: list[str], cwd: Path, ctx: ToolContext, *, sandboxed: bool
    ) -> ToolResult:
        if (why := self.refusal()) is not None:
            raise ToolError(why)
        task_id = self._new_id()
        limits = self.limits
        spool: Spool | None = None
        self._starting += 1
        try:
            if ctx.terminal is not None:
                terminal_id = await ctx.terminal.create(
                    argv[0], argv[1:], cwd, limits.terminal_output_limit, env=owned_env({})
                )
                run: TaskRun = TerminalRun(ctx.terminal, terminal_id, limits.run_limits())
            else:
                spool = self._spools.spool(task_id, limits.spool_bytes) if self._spools else None
                try:
                    spawned = await spawn(argv, cwd, sandboxed=sandboxed)
                except ToolError:
                    if spool is not None:
                        spool.delete()
                    raise
                run = LocalRun(
                    spawned, limits.run_limits(), spool, ctx.report, lambda: self._heading(task_id)
                )
        finally:
            self._starting -= 1
        task = Task(task_id, command, run, ctx.report, spool)
        self.tasks[task_id] = task
        self._forget_old()
        editor_sandbox = ctx.sandbox if sandboxed and run.terminal_id is not None else None
        self._group.start_soon(self._watch, task, editor_sandbox)
        log.info("shell.task_started", task_id=task_id, in_terminal=run.terminal_id is not None)
        return ToolResult(
            f"started in the background as {task_id}: it runs until it ends, stop_command stops it, "
            f"or the session ends. command_output {task_id} shows what it printed since the last "
            "read, and how it ended (`wait` waits for its end).",
            raw_output={"taskId": task_id, "background": True},
            terminal_id=run.terminal_id,
        )

    def _new_id(self) -> str:
        while (task_id := f"bg_{secrets.token_hex(4)}") in self.tasks:
            continue
        return task_id

    def _heading(self, task_id: str) -> str:
        task = self.tasks.get(task_id)
        return task.status_line() if task is not None else task_id

    def _forget_old(self) -> None:
        """Keep the latest `kept_ended` ended tasks; forget the others and delete their spools."""
        ended = [task for task in self.tasks.values() if not task.running]
        for task in ended[: max(len(ended) - self.limits.kept_ended, 0)]:
            del self.tasks[task.id]
            if task.spool is not None:
                task.spool.delete()

    async def _watch(self, task: Task, editor_sandbox: CommandSandbox | None) -> None:
        """Run in the session's task group until the task ends; then tell the editor."""
        try:
            with task.scope:
                await task.run.watch()
        except anyio.get_cancelled_exc_class():  # the agent's exit
            task.stopped = True
            raise
        except Exception as exc:  # an editor's error: the task is over, the session goes on
            log.warning("shell.task_failed", task_id=task.id, error=str(exc))
        finally:
            task.ended_at = time.monotonic()
            with anyio.move_on_after(2.0, shield=True):
                try:
                    await self._ended(task, editor_sandbox)
                except Exception as exc:  # the editor's view only
                    log.debug("shell.task_report_failed", task_id=task.id, error=str(exc))
            task.done.set()
            log.info("shell.task_ended", task_id=task.id, state=task.state())

    async def _ended(self, task: Task, editor_sandbox: CommandSandbox | None) -> None:
        run = task.run
        if editor_sandbox is not None and isinstance(run, TerminalRun) and run.output_at_end is not None:
            exit_code = run.exit.exit_code if run.exit is not None else None
            if (failed := bwrap_error(exit_code, run.output_at_end.output)) is not None:
                await editor_sandbox.editor_failed(failed)
                task.not_run = (
                    f"not run: the sandbox could not start in the editor's terminal ({failed}); "
                    "run it again to run it inside the agent, sandboxed"
                )
        status = "failed" if task.failed() else "completed"
        if run.terminal_id is not None:  # the terminal shows the output: only the status moves
            await task.report(Progress(status=status))
        else:
            tail = run.tail(self.limits.progress_tail_bytes)
            await task.report(Progress(text=f"{task.status_line()}\n{tail}", status=status))

    def _get(self, task_id: str) -> Task:
        """The session's task of that id; anything else (another session's, a made-up one) is the
        same error, which names this session's tasks only."""
        task = self.tasks.get(task_id) if TASK_ID.fullmatch(task_id) else None
        if task is not None:
            return task
        shown = clip_line(one_line(task_id), 40)
        known = ", ".join(self.tasks) or "none was started"
        raise ToolError(f"no background command {shown!r} in this session (its commands: {known})")

    async def read(self, task_id: str, wait: float) -> ToolResult:
        task = self._get(task_id)
        if wait > 0 and task.running:
            with anyio.move_on_after(wait):
                await task.done.wait()
        return await self._output(task, task.status_line())

    async def stop(self, task_id: str) -> ToolResult:
        task = self._get(task_id)
        if not task.running:
            return await self._output(task, f"{task.status_line()}; it had ended already: nothing to stop")
        task.stopped = True
        await task.run.stop()
        with anyio.move_on_after(self.limits.kill_grace + 5.0):
            await task.done.wait()
        return await self._output(task, task.status_line())

    async def _output(self, task: Task, heading: str) -> ToolResult:
        ended = not task.running
        unread = await task.run.unread()
        if ended and task.done.is_set():
            task.told = True
        raw = {**task.raw(), "newBytes": unread.size, "truncated": unread.cut}
        return ToolResult(f"{heading}\n{unread.text or '(no new output)'}", raw_output=raw)

    def news(self) -> str | None:
        """The tasks that ended since the model last heard of them, for the next prompt (then they
        are told); None when there is none."""
        ended = [task for task in self.tasks.values() if task.done.is_set() and not task.told]
        if not ended:
            return None
        for task in ended:
            task.told = True
        lines = "".join(f"\n- {task.status_line()}" for task in ended)
        return (
            f"[Background commands that ended since your last turn:{lines}\n"
            "command_output shows what each printed since your last read.]"
        )

    def listing(self) -> str:
        """`/tasks`: each task's id, state, runtime and command, and where their output is kept."""
        if not self.tasks:
            return "No background commands in this session (run_command starts one with background: true)."
        running = len(self.running())
        lines = [f"Background commands: {running} running (at most {self.limits.max_running} at once)"]
        lines.extend(
            f"- {task.id} · {task.state()} · {task.runtime()} · `{task.shown}`"
            for task in self.tasks.values()
        )
        if self._spools is not None and any(task.spool is not None for task in self.tasks.values()):
            cap = self.limits.spool_bytes // (1024 * 1024)
            lines.append(f"Their output (the latest {cap} MiB of each): {self._spools.path}/<id>.log")
        return "\n".join(lines)

    async def aclose(self) -> None:
        """The session ends: stop every task with all it started, then delete the spools."""
        self.closed = True
        running = self.running()
        for task in running:
            task.stopped = True
            task.scope.cancel()
        with anyio.move_on_after(self.limits.kill_grace + 5.0, shield=True):
            for task in running:
                await task.done.wait()
        if self._spools is not None:
            self._spools.remove()

    def close_soon(self) -> None:
        """`aclose` in the background (for a session replaced by a reload of it)."""
        if not self.closed:
            self.closed = True
            self._group.start_soon(self.aclose)
