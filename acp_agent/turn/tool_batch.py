"""One batch of tool calls: every `tool_use` of a reply gets exactly one `tool_result`, whatever happens.

The runner builds a `ToolBatch` for each reply that asks for tools and runs it once. Calls that fit
the tool-call budget run in model order (consecutive read-only calls at once); the rest, and every
call a cancel or a journal failure leaves unanswered, get a synthetic error result, so the history
the next request sends is valid (docs/decisions.md C2.6, C5).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import structlog

from acp_agent.errors import JournalFailed, PermissionCancelled, ToolError, ToolTimeout
from acp_agent.permissions.gate import PermissionGate, decision_of
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.tools.base import (
    NamedWritesTool,
    Preview,
    PreviewTool,
    Progress,
    SelfTimedTool,
    Tool,
    ToolContext,
    ToolResult,
    TwinTool,
    reads_only,
)
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.attachments import attach_for_reads
from acp_agent.turn.context.history import INTERRUPTED_RUNNING, History, add_note, result_text, tool_result
from acp_agent.turn.events import (
    EventSink,
    PlanChanged,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
)
from acp_agent.turn.hooks import HookCall
from acp_agent.turn.journal.entries import ToolCallShown, ToolResultEntry, ToolStartedEntry
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.session_usage import LoopMemory
from acp_agent.turn.spec import TurnSpec

__all__ = ["InTurn", "InTurnTool", "ToolBatch", "heading"]

log = structlog.get_logger(__name__)

CANCELLED = "not executed: the user cancelled the turn"
CANCELLED_RUNNING = f"the user cancelled the turn: {INTERRUPTED_RUNNING}"
JOURNAL_STOPPED = "not executed: the turn stopped because the session journal could not be written"
READ_ONLY_KINDS = frozenset({"read", "search", "think", "fetch"})
"""Tool kinds without side effects: no `tool_started` entry is journaled before they run."""
PREVIEW_SECONDS = 10.0
"""Bound on computing a permission preview (it may read the file through the editor)."""


class _CannotSucceed(Exception):
    """A preview found that the call would fail: the question is not sent (issue 29)."""


def _first_failure(group: BaseExceptionGroup) -> BaseException:
    """The exception a task group's failure stands for: the first one that is not a cancellation."""
    cancelled = anyio.get_cancelled_exc_class()
    for exc in group.exceptions:
        found = _first_failure(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if not isinstance(found, cancelled):
            return found
    return group.exceptions[0]


@dataclass(frozen=True, slots=True)
class InTurn:
    """What a tool that runs inside the turn's budgets (the `task` tool, `turn/subagents/task.py`) gets
    beside its context, through its `run_in_turn(args, ctx, turn)`: the batch's meter, the turn's
    spec (its model, settings, sink, asker and hooks: a subagent's spec derives from it) and the
    session's loop memory (what a subagent spent counts there), and how many calls of the same tool
    the reply runs from this one on (they share what is left of the turn)."""

    meter: TurnMeter
    spec: TurnSpec
    memory: LoopMemory
    together: int = 1

    @property
    def sink(self) -> EventSink:
        return self.spec.sink

    @property
    def gate(self) -> PermissionGate:
        return self.spec.gate


@runtime_checkable
class InTurnTool(Protocol):
    """A tool that runs inside the turn's budgets (the `task` tool): the batch calls its
    `run_in_turn` instead of `run`, with what the turn lends it (`InTurn`)."""

    async def run_in_turn(self, args: dict[str, Any], ctx: ToolContext, turn: InTurn) -> ToolResult: ...


def heading(tools: ToolRegistry, name: str, args: Any) -> tuple[str, str]:
    """The title and kind the editor is shown for a call (journaled too, for replay)."""
    tool = tools.get(name)
    if tool is None:
        return name, "other"
    try:
        return tool.title(args if isinstance(args, dict) else {}) or name, tool.kind
    except Exception:  # a title is cosmetic; malformed input is reported when it runs
        return name, tool.kind


@dataclass(slots=True)
class ToolBatch:
    """The tool calls of one reply, run once; what it tracks lives as long as the batch."""

    tool_uses: list[dict[str, Any]]
    spec: TurnSpec
    """The turn's tools, sink, context, asker, hooks (asked before and after each call) and the
    instructions scoped to the files the batch read, appended after its results."""
    history: History
    meter: TurnMeter
    memory: LoopMemory = field(default_factory=LoopMemory)
    """The session's loop memory, lent to a tool that runs inside the turn (`InTurn`)."""
    halt: str | None = None
    """A hook answered `continue: false`: the turn ends once the batch is answered (why)."""
    _journaled: set[str] = field(default_factory=set)
    _started: set[str] = field(default_factory=set)
    _unkept: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Results the journal refused: kept in memory so the history stays valid."""
    _shown: set[str] = field(default_factory=set)
    """Calls the editor was shown (a skipped call never is)."""
    _cancel_notes: dict[str, str] = field(default_factory=dict)
    """What a cancelled call had done (a tool's `Progress(cancelled=True)`), by call id."""
    _read: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    """The files each call read (`ToolResult.read`), by call id."""
    _hook_notes: dict[str, list[str]] = field(default_factory=dict)
    """What the hooks said of each call for the model (context, feedback), by call id."""

    async def run(self) -> None:
        """Run the batch; its results are appended to the history as one user message, in model order.

        Each run of consecutive read-only calls runs at once (they only look, so their order does
        not matter), and so does each run of consecutive calls of a tool that runs beside itself
        (`task`: subagents); every other call runs alone, in model order.
        """
        tool_uses, meter = self.tool_uses, self.meter
        allowed = meter.tool_allowance(len(tool_uses))
        results: list[dict[str, Any] | None] = [None] * len(tool_uses)
        reason = CANCELLED
        try:
            position = 0
            while position < len(tool_uses):
                block = tool_uses[position]
                if position >= allowed:
                    meter.tool_skipped()
                    cap = meter.limits.max_tool_calls
                    results[position] = tool_result(
                        block["id"],
                        f"not executed: per-turn tool-call budget exhausted ({cap}/{cap})",
                        is_error=True,
                    )
                    position += 1
                    continue
                end = position
                while end < allowed and self._read_only(tool_uses[end]):
                    end += 1
                if end == position:  # not read-only: a tool that runs beside itself still may
                    while end < allowed and self._beside(block, tool_uses[end]):
                        end += 1
                if end - position > 1:
                    await self._run_together(range(position, end), results, allowed)
                    position = end
                    continue
                results[position] = await self._run_one(block, self._still_to_run(block, position, allowed))
                position += 1
            self._watch_repeats([r for r in results if r is not None])
        except JournalFailed:
            reason = JOURNAL_STOPPED
            raise
        finally:
            self._answer_all(results, reason)
        await self._attach()

    async def _attach(self) -> None:
        """The instructions scoped to the files this batch read, in call order, after its results."""
        read = [path for block in self.tool_uses for path in self._read.get(block["id"], ())]
        if self.spec.attachments is not None and read:
            await attach_for_reads(self.history, self.spec.attachments, read)

    def _answer_all(self, results: list[dict[str, Any] | None], reason: str) -> None:
        """Every call gets its result, a kept one, or an error saying why it has none."""
        notes = self._cancel_notes
        answered = [
            result
            if result is not None
            else self._unkept.get(block["id"])
            or tool_result(
                block["id"],
                notes.get(block["id"]) or (CANCELLED_RUNNING if block["id"] in self._started else reason),
                is_error=True,
            )
            for block, result in zip(self.tool_uses, results, strict=True)
        ]
        for block, result in zip(self.tool_uses, answered, strict=True):
            if block["id"] not in self._journaled and reason is CANCELLED:
                title, kind = heading(self.spec.tools, block["name"], block.get("input"))
                hidden = block["id"] not in self._shown
                self.history.note(
                    ToolResultEntry(
                        result, ToolCallShown(title=title, kind=kind, status="failed", hidden=hidden)
                    )
                )
        self.history.add_user(answered, journal=False)

    def _read_only(self, block: dict[str, Any]) -> bool:
        """Whether the call only looks (a read-only tool), so it may run beside others."""
        return reads_only(self.spec.tools.get(block["name"]))

    def _beside(self, first: dict[str, Any], block: dict[str, Any]) -> bool:
        """Whether `block` may run beside `first`: both call one tool that runs beside itself."""
        tool = self.spec.tools.get(first["name"])
        return block["name"] == first["name"] and isinstance(tool, TwinTool) and tool.beside_itself is True

    def _still_to_run(self, first: dict[str, Any], position: int, allowed: int) -> int:
        """How many calls of `first`'s tool the reply runs from `position` on (they share the turn)."""
        return sum(b["name"] == first["name"] for b in self.tool_uses[position:allowed])

    async def _run_together(
        self, positions: range, results: list[dict[str, Any] | None], allowed: int
    ) -> None:
        """Run these calls at once, each result into its own slot; a cancel ends them all."""

        async def run(position: int) -> None:
            block = self.tool_uses[position]
            results[position] = await self._run_one(
                block, self._still_to_run(block, positions.start, allowed)
            )

        try:
            async with anyio.create_task_group() as group:
                for position in positions:
                    group.start_soon(run, position)
        except BaseExceptionGroup as failures:  # e.g. a cancelled permission question
            raise _first_failure(failures) from None

    def _watch_repeats(self, results: list[dict[str, Any]]) -> None:
        """One observation per batch; the 3rd identical one gets a note telling the model to change."""
        note = self.meter.batch_finished(
            [
                (b["name"], b.get("input") or {}, result_text(r.get("content", "")))
                for b, r in zip(self.tool_uses, results, strict=True)
            ]
        )
        if note is not None and results:
            add_note(results[-1], note)

    async def _run_one(self, block: dict[str, Any], together: int = 1) -> dict[str, Any]:
        call_id, name = block["id"], block["name"]
        args = block.get("input")
        args = args if isinstance(args, dict) else {}
        tool = self.spec.tools.get(name)
        title, kind = heading(self.spec.tools, name, args)
        self._shown.add(call_id)
        await self.spec.sink.emit(ToolCallStarted(call_id, title, kind, args, name))
        log.debug("tool.started", tool=name, call_id=call_id)
        meter = self.meter
        try:
            result = await self._execute(tool, name, title, args, call_id, together)
        except (anyio.get_cancelled_exc_class(), PermissionCancelled):
            meter.tool_failed()
            await self._fail(
                call_id,
                self._cancel_notes.get(call_id)
                or (CANCELLED_RUNNING if call_id in self._started else CANCELLED),
            )
            raise
        except JournalFailed as exc:  # its tool_started entry was refused: it did not run
            meter.tool_failed()
            await self._fail(call_id, f"{JOURNAL_STOPPED}: {exc}")
            raise
        if result.is_error:
            meter.tool_failed()
        elif result.read:
            self._read[call_id] = result.read
        log.debug("tool.finished", tool=name, call_id=call_id, is_error=result.is_error)
        block_out = tool_result(call_id, result.text, is_error=result.is_error, media=result.media)
        for note in self._hook_notes.pop(call_id, ()):  # what the hooks said of it, for the model
            add_note(block_out, f"\n\n{note}")
        shown = ToolCallShown.of_result(title, kind, args, result)
        try:  # journaled (and fsynced) before the editor is told the call is done, with the same `shown`
            self.history.note(ToolResultEntry(block_out, shown))
            self._journaled.add(call_id)
            if result.plan is not None:
                await self.spec.sink.emit(PlanChanged(result.plan))
        except JournalFailed as exc:  # the call ends failed; the turn ends with the journal error
            self._unkept[call_id] = block_out
            await self._fail(call_id, f"{result.text}\n\n{exc}")
            raise
        await self.spec.sink.emit(ToolCallFinished(call_id, shown, result.terminal_id, result.media))
        return block_out

    async def _fail(self, call_id: str, text: str) -> None:
        """End an open tool call `failed` in the editor, even from a cancelled scope."""
        with anyio.move_on_after(2, shield=True):
            await self.spec.sink.emit(ToolCallFinished.of(call_id, "failed", text))

    async def _execute(
        self, tool: Tool | None, name: str, title: str, args: dict[str, Any], call_id: str, together: int = 1
    ) -> ToolResult:
        """Validate, ask, run: every way this can go wrong is a result the model sees."""
        meter = self.meter
        if tool is None:
            meter.tool_started()
            known = ", ".join(self.spec.tools.names)
            return ToolResult(f"unknown tool {name!r}; available tools: {known}", is_error=True)
        try:
            args = self.spec.tools.validate(tool, args)
        except ToolError as exc:
            meter.tool_started()
            return ToolResult(str(exc), is_error=True)
        before = await self.spec.hooks.before_tool(HookCall(call_id, name, args), meter)
        self._hooked(call_id, before.context, before.halt)
        if before.updated_input is not None:  # the whole input replaced, and checked again
            try:
                args = self.spec.tools.validate(tool, before.updated_input)
            except ToolError as exc:
                meter.tool_started()
                return ToolResult(f"a PreToolUse hook's updatedInput is not valid: {exc}", is_error=True)
        checked = args
        question = PermissionQuestion(
            call_id,
            name,
            title,
            tool.kind,
            tool.permission or "none",
            args,
            lambda: self._preview(tool, checked),
            hook=before.verdict,
        )
        gate = self.spec.gate  # the one engine decides, for every caller (`permissions/gate.py`)
        question, verdict = await gate.verdict(question)
        decision = decision_of(verdict, question)
        if decision is None:
            meter.asking_permission()
            try:  # one question at a time, even from calls run at once (the gate's)
                decision = await gate.ask(question, verdict)
            except _CannotSucceed as exc:  # found while preparing the question: nobody is asked
                meter.tool_started()
                return ToolResult(str(exc), is_error=True)
        if decision.cancelled:
            raise PermissionCancelled
        if not decision.allowed:
            meter.tool_denied()
            return ToolResult(decision.message or "The user declined this tool call.", is_error=True)
        meter.tool_started()
        meter.running_tools()
        await self.spec.sink.emit(ToolCallUpdated(call_id))
        seconds = (
            tool.time_allowance(args)
            if isinstance(tool, SelfTimedTool)
            else self.spec.request_settings().tool_timeout
        )
        ctx = replace(self.spec.ctx, report=self._reporter(call_id), call_id=call_id, grants=decision.grants)
        if tool.kind not in READ_ONLY_KINDS:  # after a crash, the model hears it may have run
            if not (isinstance(tool, NamedWritesTool) and tool.names_its_writes):
                await ctx.checkpoint.before_change()  # a rewind can put back what it changes
            self.history.note(ToolStartedEntry(call_id))
            self._started.add(call_id)
        try:
            with anyio.fail_after(seconds):
                if isinstance(tool, InTurnTool):  # a subagent: it spends the turn's budgets
                    turn = InTurn(meter, self.spec, self.memory, together)
                    result: ToolResult = await tool.run_in_turn(args, ctx, turn)
                else:
                    result = await tool.run(args, ctx)
        except PermissionCancelled:  # a subagent's question, cancelled: the turn ends cancelled
            raise
        except TimeoutError:
            return ToolResult(f"{name} timed out after {seconds:g} s", is_error=True)
        except ToolTimeout as exc:
            text = str(exc)
            if exc.partial and exc.partial not in text:
                text = f"{exc.partial}\n{text}"
            return ToolResult(text, is_error=True)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:
            log.exception("tool.crashed", tool=name, call_id=call_id)
            return ToolResult(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
        after = await self.spec.hooks.after_tool(HookCall(call_id, name, args), result, meter)
        self._hooked(call_id, after.feedback, after.halt)
        self._hooked(call_id, after.context, None)
        return result

    def _hooked(self, call_id: str, note: str, halt: str | None) -> None:
        """Keep what a hook said of a call for its result, and a `continue: false` for the turn."""
        if note:
            self._hook_notes.setdefault(call_id, []).append(note)
        if halt is not None and self.halt is None:
            self.halt = halt

    async def _preview(self, tool: Tool, args: dict[str, Any]) -> Preview | None:
        """What the call would change, for the permission question; cosmetic, so never fatal."""
        if not isinstance(tool, PreviewTool):
            return None
        try:
            with anyio.fail_after(PREVIEW_SECONDS):
                preview = await tool.preview(args, self.spec.ctx)
        except Exception as exc:
            log.debug("tool.preview_failed", tool=tool.name, error=str(exc))
            return None
        if preview.error is not None:
            raise _CannotSucceed(preview.error)
        return preview

    def _reporter(self, call_id: str) -> Callable[[Progress], Awaitable[None]]:
        sink = self.spec.sink

        async def report(progress: Progress) -> None:
            if progress.cancelled:  # the call's last word, reported when the cancel reaches us
                self._cancel_notes[call_id] = progress.text or CANCELLED
                return
            await sink.emit(ToolCallProgress(call_id, progress.text, progress.terminal_id, progress.status))

        return report
