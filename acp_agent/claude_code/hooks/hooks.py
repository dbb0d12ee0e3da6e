"""The user's Claude Code hooks, run for a session's turns (the loop's `TurnHooks`, `turn/hooks.py`).

Each event runs the handlers in force (`hook_config.py`) whose matcher and `if` select it, all at
once, each a process of its own (`hook_process.py`) given Claude Code's JSON on stdin
(`session_id`, `cwd`, `hook_event_name`, `permission_mode`, and the event's own fields; the tool
in Claude Code's names and shapes, `hook_payloads.py`) and `CLAUDE_PROJECT_DIR` in its
environment. `transcript_path` is left out: the session's journal is in the agent's state dir,
which the sandbox hides from every command, and it is not Claude Code's transcript format.

Each run is shown to the editor as a tool call of its own (kind `execute`, titled
`hook: PreToolUse guard.sh`, its output and exit code in its content), journaled so session/load
shows it again, and counted in the turn record's `hooks` figure. A run that fails to answer (a
command that is not found, exits 1, prints garbage or invalid JSON, hangs past its timeout, writes
without end) blocks nothing: it ends with a warning in the log and in `/status`, and the turn goes
on. Only a PreToolUse hook that could not start for a reason of the agent's (its sandbox,
`hook_process.py`) blocks its call, saying why: a guard is never skipped unseen.

How answers combine (Claude Code's rules): PreToolUse's deny (or exit 2) > ask > allow, handed to
the rule engine with the call (`permissions/engine.py`: a hook's allow never beats a deny or ask rule);
the first `updatedInput` of a hook that did not deny replaces the input (read back from Claude
Code's shapes, `hook_payloads.own_input`); every `additionalContext`
joins the tool's result, or the prompt; `continue: false` from any hook ends the turn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import anyio
import structlog

from acp_agent.claude_code.hooks.hook_config import TOOL_EVENTS, HookHandler, HookSet
from acp_agent.claude_code.hooks.hook_payloads import (
    HookAnswer,
    claude_input,
    claude_response,
    own_input,
    read_answer,
)
from acp_agent.claude_code.hooks.hook_process import HookProcess, run_hook_process
from acp_agent.errors import JournalFailed
from acp_agent.permissions.engine import RuleEngine
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.permissions.tool_names import claude_name
from acp_agent.tools.base import ToolResult
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox
from acp_agent.turn.context.history import JournalWriter
from acp_agent.turn.events import EventSink, ToolCallFinished, ToolCallStarted, ToolCallUpdated
from acp_agent.turn.hooks import (
    AfterTool,
    BeforeTool,
    HookCall,
    HookVerdict,
    PromptHooked,
    StopHooked,
    TurnHooks,
)
from acp_agent.turn.journal.entries import ShownCallEntry, ToolCallShown
from acp_agent.turn.meter import TurnMeter

__all__ = ["HOOK_TOOL", "SessionHooks"]

log = structlog.get_logger(__name__)

HOOK_TOOL = "hook"
"""The name a hook run's tool call carries (its title names the event and the command)."""
SHOWN_OUTPUT_CHARS = 4_000
"""What the editor is shown of a run's stdout, and of its stderr."""
KEPT_WARNINGS = 20
SESSION_END_SECONDS = 1.5
"""SessionEnd's budget for all its hooks (Claude Code's), raised to the largest timeout up to 60 s."""
SESSION_END_AT_EXIT_SECONDS = 1.5
"""SessionEnd's budget at the agent's shutdown, never raised: the editor waits for the agent to
leave (acp-agent's own exit grace, as long as the one cancelled turns get)."""


@dataclass(slots=True)
class HookWarnings:
    """The session's hook warnings, the newest `KEPT_WARNINGS`, for `/status`."""

    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        log.warning("hooks.run_warning", warning=line)
        self.lines = [*self.lines, line][-KEPT_WARNINGS:]


@dataclass(slots=True)
class SessionHooks:
    """One session's hooks, as its loop (and, `for_subagent`, its subagents' loops) asks them."""

    hooks: HookSet
    session_id: str
    cwd: Path
    mode: Callable[[], str]
    sink: EventSink
    engine: RuleEngine
    roots: Callable[[], Sequence[Path]]
    journal: JournalWriter | None = None
    sandbox: CommandSandbox | None = None
    env: dict[str, str] = field(default_factory=dict)
    """The settings' `env`, given to every hook."""
    source: Literal["startup", "resume"] = "startup"
    """How SessionStart is told the session began (a loaded session resumes)."""
    agent_type: str | None = None
    """Set for a subagent's loop: its Stop is SubagentStop."""
    warnings: HookWarnings = field(default_factory=HookWarnings)
    started: list[bool] = field(default_factory=lambda: [False])
    """Whether SessionStart ran (shared with the subagents' copies)."""
    ended: bool = False
    """Whether SessionEnd ran (or started): once per session, by session/close or at shutdown."""

    # -- the loop's seam (`turn/hooks.py:TurnHooks`) -------------------------------------------

    async def before_tool(self, call: HookCall, meter: TurnMeter) -> BeforeTool:
        if not self.hooks.of("PreToolUse"):
            return BeforeTool()
        answers = await self._tool_event("PreToolUse", call, {}, meter)
        denied = [a.blocked or a.reason or "(no reason given)" for a in answers if _denies(a)]
        verdict = None
        if denied:
            verdict = HookVerdict("deny", "Blocked by a PreToolUse hook: " + "\n".join(denied))
        elif any(a.decision == "ask" for a in answers):
            verdict = HookVerdict("ask")
        elif any(a.decision == "allow" for a in answers):
            verdict = HookVerdict("allow")
        updated = next(
            (a.updated_input for a in answers if a.updated_input is not None and not _denies(a)), None
        )
        if updated is not None:  # in Claude Code's shapes (`file_path`, Bash's ms), as it was given
            updated = own_input(call.tool_name, updated)
        return BeforeTool(
            verdict, None if denied else updated, _context(answers, "PreToolUse"), _halt(answers)
        )

    async def after_tool(self, call: HookCall, result: ToolResult, meter: TurnMeter) -> AfterTool:
        if result.is_error or not self.hooks.of("PostToolUse"):  # PostToolUse follows a success
            return AfterTool()
        extra = {"tool_response": claude_response(call.tool_name, call.args, result, self.cwd)}
        answers = await self._tool_event("PostToolUse", call, extra, meter)
        feedback = "\n".join(a.blocked for a in answers if a.blocked is not None)
        return AfterTool(
            f"PostToolUse hook feedback:\n{feedback}" if feedback else "",
            _context(answers, "PostToolUse"),
            _halt(answers),
        )

    async def prompt_submitted(self, text: str, meter: TurnMeter) -> PromptHooked:
        context = await self._session_start(meter)
        answers = await self._fire("UserPromptSubmit", {"prompt": text}, (), None, meter)
        blocked = next((a.blocked for a in answers if a.blocked is not None), None)
        joined = "\n".join(c for c in (context, _context(answers, "UserPromptSubmit")) if c)
        return PromptHooked(blocked, joined, _halt(answers))

    async def stopping(self, last_text: str, again: bool, meter: TurnMeter) -> StopHooked:
        event = "Stop" if self.agent_type is None else "SubagentStop"
        payload: dict[str, Any] = {"stop_hook_active": again, "last_assistant_message": last_text}
        if self.agent_type is not None:
            payload["agent_type"] = self.agent_type
        targets = () if self.agent_type is None else (self.agent_type,)
        answers = await self._fire(event, payload, targets, None, meter)
        reasons = [a.blocked for a in answers if a.blocked is not None]
        go_on = f"{event} hook feedback:\n" + "\n".join(reasons) if reasons else None
        return StopHooked(go_on, _halt(answers))

    async def compacting(self, trigger: Literal["manual", "auto"], meter: TurnMeter) -> str | None:
        payload = {"trigger": trigger, "custom_instructions": ""}
        answers = await self._fire("PreCompact", payload, (trigger,), None, meter)
        return next((a.blocked for a in answers if a.blocked is not None), None)

    def for_subagent(self, agent_type: str) -> TurnHooks:
        return replace(self, agent_type=agent_type)

    # -- the session's own events --------------------------------------------------------------

    async def notify(self, message: str, kind: str) -> None:
        """Notification: the agent asks the user something (`permission_prompt`); output ignored."""
        if self.hooks.of("Notification"):
            payload = {"message": message, "notification_type": kind, "title": "acp-agent"}
            await self._fire("Notification", payload, (kind,), None, None)

    async def session_ended(self, reason: str, *, at_exit: bool = False) -> None:
        """SessionEnd, once: at session/close within Claude Code's budget, or at the agent's
        shutdown (`at_exit`) within its exit grace, so a hanging hook never keeps the agent from
        leaving (each hook is also held to its own timeout); output ignored."""
        handlers = self.hooks.of("SessionEnd")
        if handlers and not self.ended:
            self.ended = True
            budget = max(SESSION_END_SECONDS, min(60.0, max(h.timeout for h in handlers)))
            with anyio.move_on_after(SESSION_END_AT_EXIT_SECONDS if at_exit else budget):
                await self._fire("SessionEnd", {"reason": reason}, (reason,), None, None)

    async def _session_start(self, meter: TurnMeter) -> str:
        """SessionStart, once, at the session's first prompt (after the trust question, so a
        trusted project's hooks run too): its context joins that prompt."""
        if self.started[0]:
            return ""
        self.started[0] = True
        answers = await self._fire("SessionStart", {"source": self.source}, (self.source,), None, meter)
        return _context(answers, "SessionStart")

    # -- running -------------------------------------------------------------------------------

    async def _tool_event(
        self, event: str, call: HookCall, extra: dict[str, Any], meter: TurnMeter
    ) -> list[HookAnswer]:
        name = claude_name(call.tool_name)
        payload = {
            "tool_name": name,
            "tool_input": claude_input(call.tool_name, call.args, self.cwd),
            "tool_use_id": call.call_id,
            **extra,
        }
        question = PermissionQuestion(call.call_id, call.tool_name, "", "", "none", call.args)
        return await self._fire(event, payload, (name, call.tool_name), question, meter)

    def _selected(
        self, event: str, targets: tuple[str, ...], question: PermissionQuestion | None
    ) -> list[HookHandler]:
        found = []
        for handler in self.hooks.of(event):
            if targets and not any(handler.matcher.matches(t) for t in targets):
                continue  # (Stop and UserPromptSubmit have no targets, and their matchers are ignored)
            if handler.if_rule is not None and (
                event not in TOOL_EVENTS
                or question is None
                or not self.engine.applies(handler.if_rule, question)
            ):
                continue
            found.append(handler)
        return found

    async def _fire(
        self,
        event: str,
        payload: dict[str, Any],
        targets: tuple[str, ...],
        question: PermissionQuestion | None,
        meter: TurnMeter | None,
    ) -> list[HookAnswer]:
        """Run the handlers of `event` that select it, all at once; their answers, in order."""
        handlers = self._selected(event, targets, question)
        if not handlers:
            return []
        common = {
            "session_id": self.session_id,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            "permission_mode": self.mode(),
        }
        stdin = json.dumps({**common, **payload}, ensure_ascii=False).encode("utf-8", "replace")
        answers: list[HookAnswer] = [HookAnswer()] * len(handlers)

        async def run(index: int, handler: HookHandler) -> None:
            answers[index] = await self._run(handler, stdin, meter)

        async with anyio.create_task_group() as group:
            for index, handler in enumerate(handlers):
                group.start_soon(run, index, handler)
        return answers

    async def _run(self, handler: HookHandler, stdin: bytes, meter: TurnMeter | None) -> HookAnswer:
        """One run, shown to the editor as a tool call, journaled and counted."""
        call_id = f"hook_{uuid.uuid4().hex[:20]}"
        title = f"hook: {handler.event} {handler.name}"
        raw_input = {"event": handler.event, "command": handler.command, "source": handler.source.shown}
        if handler.matcher.text:
            raw_input["matcher"] = handler.matcher.text
        await self.sink.emit(ToolCallStarted(call_id, title, "execute", raw_input, HOOK_TOOL))
        await self.sink.emit(ToolCallUpdated(call_id))
        started = time.monotonic()
        try:
            run = await run_hook_process(
                handler.command,
                handler.args,
                stdin=stdin,
                cwd=self.cwd,
                env={**self.env, "CLAUDE_PROJECT_DIR": str(self.cwd)},
                timeout=handler.timeout,
                sandbox=self.sandbox,
                roots=self.roots(),
                users=not handler.source.project,
            )
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(2, shield=True):
                await self.sink.emit(ToolCallFinished.of(call_id, "failed", "cancelled with the turn"))
            raise
        answer = read_answer(run, handler.event)
        blocked = answer.blocked is not None or answer.decision == "deny"
        if meter is not None:
            meter.hook_ran(time.monotonic() - started, blocked=blocked)
        if answer.warning is not None:
            self.warnings.add(
                f"{handler.event} hook {handler.command[:80]!r} ({handler.source.shown}): {answer.warning}"
            )
        shown = ToolCallShown(
            title=title,
            kind="execute",
            status="failed" if answer.warning is not None else "completed",
            raw_input=raw_input,
            text=_shown_text(run, answer),
            raw_output={
                "exitCode": run.exit_code,
                "timedOut": run.timed_out,
                "durationMs": int(run.seconds * 1000),
                "outputBytes": run.output_bytes,
                "blocked": blocked,
            },
        )
        if self.journal is not None:
            try:
                self.journal(ShownCallEntry(call_id, HOOK_TOOL, raw_input, shown), sync=False)
            except (
                OSError,
                JournalFailed,
            ) as exc:  # shown all the same: the next entry's failure ends the turn
                log.warning("hooks.not_journaled", error=str(exc))
        await self.sink.emit(ToolCallFinished(call_id, shown))
        return answer

    def status(self) -> str:
        """For /status: how many hooks are in force, wait for trust, and the latest warnings."""
        hooks = self.hooks
        text = f"Hooks: {len(hooks.handlers)} in force, {len(hooks.waiting)} waiting for trust (see /hooks)"
        if hooks.disabled:
            text = f"Hooks: off (disableAllHooks in {hooks.disabled})"
        lines = [text, *(f"  - warning: {w}" for w in (*hooks.warnings, *self.warnings.lines))]
        return "\n".join(lines)


def _denies(answer: HookAnswer) -> bool:
    return answer.blocked is not None or answer.decision == "deny"


def _context(answers: list[HookAnswer], event: str) -> str:
    found = [a.context for a in answers if a.context]
    return f"{event} hook additional context:\n" + "\n".join(found) if found else ""


def _halt(answers: list[HookAnswer]) -> str | None:
    return next((a.halt for a in answers if a.halt is not None), None)


def _shown_text(run: HookProcess, answer: HookAnswer) -> str:
    parts = []
    if answer.warning is not None:
        parts.append(f"warning: {answer.warning}")
    elif run.exit_code is not None:
        parts.append(f"exit code {run.exit_code}" + (" (blocks)" if answer.blocked is not None else ""))
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        if text.strip():
            cut = text if len(text) <= SHOWN_OUTPUT_CHARS else text[:SHOWN_OUTPUT_CHARS] + "\n[… cut …]"
            parts.append(f"{name}:\n{cut.rstrip()}")
    return "\n".join(parts)
