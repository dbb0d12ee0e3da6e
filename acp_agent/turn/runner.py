"""The governed tool-calling loop: request → relay → tools → repeat, until the model stops or a budget does.

One loop for both model paths: the model client yields the same events either way (C8). The runner
takes its meter from outside and can be entered again within one turn, so a strategy can drive it
(docs/decisions.md D9); it returns an `AttemptOutcome`, never the turn's final answer.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio
import structlog

from acp_agent.errors import JournalFailed, PermissionCancelled, StreamBroken, ToolError, ToolTimeout
from acp_agent.model.base import (
    MessageDone,
    ModelClient,
    ModelRequest,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    Usage,
    turn_deadline,
)
from acp_agent.tools.base import Preview, Progress, ToolContext, ToolResult
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.sensitive import sensitive_reason
from acp_agent.turn.compaction import compact
from acp_agent.turn.events import (
    EventSink,
    PlanChanged,
    TextChunk,
    ThoughtChunk,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
    UsageReported,
)
from acp_agent.turn.governor import Stop, TurnMeter
from acp_agent.turn.history import INTERRUPTED_RUNNING, History, add_note, result_text, tool_result
from acp_agent.turn.permissions import AllowAll, PermissionAsker
from acp_agent.turn.record import Step, step_of
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.stop import TurnStop, map_model_stop

__all__ = ["AttemptOutcome", "RunnerSettings", "TurnRunner"]

log = structlog.get_logger(__name__)

WRAP_UP_NOTE = (
    "This is your last model request in this turn: do not call tools; summarise what "
    "was done and what remains."
)
CUT_OFF = "not executed: the reply was cut off before this tool call was complete"
CANCELLED = "not executed: the user cancelled the turn"
CANCELLED_RUNNING = f"the user cancelled the turn: {INTERRUPTED_RUNNING}"
JOURNAL_STOPPED = "not executed: the turn stopped because the session journal could not be written"
READ_ONLY_KINDS = frozenset({"read", "search", "think", "fetch"})
"""Tool kinds without side effects: no `tool_started` entry is journaled before they run."""
PREVIEW_SECONDS = 10.0
"""Bound on computing a permission preview (it may read the file through the editor)."""


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """How one run of the loop ended: the turn stop it implies, and the model's own words."""

    stop: TurnStop
    limit: str | None = None
    model_stop_reason: str | None = None
    final_text: str = ""


def new_message_id() -> str:
    return str(uuid.uuid4())


def _first_failure(group: BaseExceptionGroup) -> BaseException:
    """The exception a task group's failure stands for: the first one that is not a cancellation."""
    cancelled = anyio.get_cancelled_exc_class()
    for exc in group.exceptions:
        found = _first_failure(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if not isinstance(found, cancelled):
            return found
    return group.exceptions[0]


class TurnRunner:
    """Runs the loop for one session; stateless between runs except for what it is given."""

    def __init__(
        self,
        model: ModelClient,
        tools: ToolRegistry,
        sink: EventSink,
        ctx: ToolContext,
        settings: RunnerSettings,
        *,
        new_id: Callable[[], str] = new_message_id,
        permissions: PermissionAsker | None = None,
    ) -> None:
        self.model = model
        self.permissions: PermissionAsker = permissions or AllowAll()
        self._journaled: set[str] = set()
        self._started: set[str] = set()
        self._unkept: dict[str, dict[str, Any]] = {}
        """Results the journal refused: kept in memory so the history stays valid."""
        self._shown: set[str] = set()
        """Calls of the current batch the editor was shown (a skipped call never is)."""
        self._cancel_notes: dict[str, str] = {}
        """What a cancelled call had done (a tool's `Progress(cancelled=True)`), by call id."""
        self._asking = anyio.Lock()
        """One permission question at a time, even from calls that run at once."""
        self.last_context_tokens = 0
        """The context size of the latest model request (drives compaction)."""
        self.last_message_id: str | None = None
        """The session's latest response id (`diagnostics.previous_message_id` of the next)."""
        self.session_cost_usd: float | None = None
        """What the session's requests cost so far; None until a priced request finished."""
        self.session_cache_read = self.session_prompt_tokens = 0
        """Prompt tokens read from cache, and all prompt tokens, over the session (for /status)."""
        self.tools = tools
        self.sink = sink
        self.ctx = ctx
        self.settings = settings
        self.new_id = new_id
        self.on_step: Callable[[Step], None] | None = None
        """Called once per model request of a turn (in-process callers keep the steps)."""

    async def run(
        self,
        history: History,
        meter: TurnMeter,
        *,
        tools: ToolRegistry | None = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> AttemptOutcome:
        """Loop until the model ends its reply or a budget stops the turn.

        A strategy may offer `tools` instead of the session's for this run (a phase's tools), and
        end the run after a tool batch once `stop_when()` is true (the reply stays `tool_use`).
        """
        if tools is None:
            return await self._loop(history, meter, stop_when)
        session_tools, self.tools = self.tools, tools
        try:
            return await self._loop(history, meter, stop_when)
        finally:
            self.tools = session_tools

    async def _loop(
        self, history: History, meter: TurnMeter, stop_when: Callable[[], bool] | None
    ) -> AttemptOutcome:
        left = meter.seconds_left()
        turn_deadline.set(None if left is None else time.monotonic() + left)
        compacted_for_overflow = False
        while True:
            await self._maybe_compact(history, meter)
            decision = meter.before_request()
            if isinstance(decision, Stop):
                return AttemptOutcome(decision.stop, decision.limit, meter.model_stop_reason)
            number = meter.count_request(self.settings.model)
            log.debug("model.request", n=number, of=meter.limits.max_turn_requests)
            done = await self._request(history, meter, number)
            meter.model_stop_reason = done.stop_reason
            if (
                done.stop_reason == "context_window_exceeded"
                and not done.content
                and not compacted_for_overflow
            ):
                # The API refused the prompt as too long: compact once and try again (D1).
                compacted_for_overflow = True
                if await self._maybe_compact(history, meter, force=True):
                    continue
            tool_uses = [b for b in done.content if b.get("type") == "tool_use"]
            text = "".join(b.get("text", "") for b in done.content if b.get("type") == "text")
            if meter.wrapped_up:  # the summary request was the last one allowed
                history.repair("not executed: this was the last request allowed in the turn")
                return AttemptOutcome(TurnStop.LIMIT, "maxTurnRequests", done.stop_reason, text)
            if done.stop_reason == "pause_turn":
                meter.continuations += 1
                self._step(number, done, [], history)
                continue
            if done.stop_reason == "tool_use" and tool_uses:
                try:
                    await self._run_tools(tool_uses, history, meter)
                finally:
                    self._step(number, done, tool_uses, history)
                decision = meter.after_tools()
                if isinstance(decision, Stop):
                    return AttemptOutcome(decision.stop, decision.limit, done.stop_reason)
                if stop_when is not None and stop_when():
                    return AttemptOutcome(TurnStop.END_TURN, None, done.stop_reason, text)
                continue
            if tool_uses:
                history.repair(CUT_OFF)
            self._step(number, done, tool_uses, history)
            stop = map_model_stop(done.stop_reason) or TurnStop.END_TURN
            return AttemptOutcome(stop, None, done.stop_reason, text)

    def _step(
        self, number: int, done: MessageDone, tool_uses: list[dict[str, Any]], history: History
    ) -> None:
        """Tell `on_step` (an in-process caller's log) what this request did."""
        if self.on_step is not None:
            self.on_step(step_of(number, done, tool_uses, history.messages))

    def _wrap_up(self, history: History, meter: TurnMeter) -> dict[str, Any] | None:
        """With --on-limit wrap_up, the last allowed request of a continuing loop: no tools, a note."""
        # Called after this request was counted: it is the last one when none are left.
        if (
            self.settings.on_limit != "wrap_up"
            or meter.requests_left() != 0
            or meter.model_requests < 2
            or not history.messages
            or history.messages[-1]["role"] != "user"
        ):
            return None
        meter.wrapped_up = True
        history.messages[-1]["content"].append({"type": "text", "text": WRAP_UP_NOTE})
        return {"type": "none"}

    def request(self, messages: list[dict[str, Any]], **fields: Any) -> ModelRequest:
        """The session's request for `messages`: its model, tools, system, thinking and effort.

        Every request of a session (the loop's, a summary's, a judge's) starts from this one, so
        they share the cached prefix; `fields` replace what one kind of request needs otherwise.
        """
        settings = self.settings
        values: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_tokens,
            "messages": messages,
            "system": settings.system,
            "tools": self.tools.api_tools(),
            "thinking": settings.thinking,
            "output_config": settings.output_config,
            "previous_message_id": self.last_message_id,
        }
        values.update(fields)
        return ModelRequest(**values)

    def finished(self, done: MessageDone, meter: TurnMeter, number: int) -> float | None:
        """Account for a finished response: the turn's and the session's figures, the cache log.

        Returns the session's cost so far, or None when the model's price is unknown.
        """
        cost = meter.add_usage(done.usage)
        if done.message_id is not None:
            self.last_message_id = done.message_id
        usage = done.usage
        self.session_cache_read += usage.cache_read_input_tokens
        self.session_prompt_tokens += usage.prompt_tokens
        if done.cache_miss is not None:
            log.info(
                "model.cache_miss",
                reason=done.cache_miss.get("type"),
                request=number,
                missed_tokens=done.cache_miss.get("cache_missed_input_tokens"),
            )
        if meter.price is not None:
            self.session_cost_usd = (self.session_cost_usd or 0.0) + cost
        return self.session_cost_usd

    async def _request(self, history: History, meter: TurnMeter, number: int) -> MessageDone:
        """One model request: relay its output as it arrives, and append the reply to history."""
        meter.phase = "model"
        settings = self.settings
        tool_choice = self._wrap_up(history, meter)
        request = self.request(history.messages, tool_choice=tool_choice)
        sink = self.sink
        text_id: str | None = None
        thought_id: str | None = None
        texts: dict[int, list[str]] = {}
        usage = Usage()
        done: MessageDone | None = None
        started = time.monotonic()
        try:
            async for event in self.model.respond(request):
                kind = type(event)
                if kind is TextDelta:
                    if text_id is None:
                        text_id = self.new_id()
                    texts.setdefault(event.index, []).append(event.text)  # type: ignore[union-attr]
                    await sink.emit(TextChunk(event.text, text_id))  # type: ignore[union-attr]
                elif kind is ThinkingDelta:
                    if thought_id is None:
                        thought_id = self.new_id()
                    await sink.emit(ThoughtChunk(event.text, thought_id))  # type: ignore[union-attr]
                elif kind is Usage:
                    usage = event  # type: ignore[assignment]
                elif kind is RetryScheduled:
                    meter.retries += 1
                    await self._tell_retry(event)  # type: ignore[arg-type]
                elif kind is MessageDone:
                    done = event  # type: ignore[assignment]
        except StreamBroken as exc:
            meter.add_usage(usage)
            history.add_assistant([b for b in exc.partial if b.get("type") == "text"])
            raise
        except anyio.get_cancelled_exc_class():
            meter.add_usage(usage)
            history.add_assistant(
                [{"type": "text", "text": "".join(parts)} for _, parts in sorted(texts.items())]
            )
            raise
        finally:
            meter.model_seconds += time.monotonic() - started
        if done is None:
            meter.add_usage(usage)
            history.add_assistant(
                [{"type": "text", "text": "".join(parts)} for _, parts in sorted(texts.items())]
            )
            raise StreamBroken("the model's reply ended without a stop_reason")
        cost = self.finished(done, meter, number)
        history.add_assistant(done.content)
        self.last_context_tokens = done.usage.context_tokens
        await sink.emit(UsageReported(done.usage.context_tokens, settings.context_window, cost))
        return done

    async def _maybe_compact(self, history: History, meter: TurnMeter, *, force: bool = False) -> int:
        """Summarise older turns when the last request's context passed the threshold."""
        settings = self.settings
        threshold = settings.compact_at * settings.context_window
        if not force and (not settings.compact_at or self.last_context_tokens < threshold):
            return 0
        meter.phase = "model"
        replaced, done = await compact(
            self.model,
            history,
            meter,
            settings=settings,
            tools=self.tools.api_tools(),
            previous_message_id=self.last_message_id,
        )
        if done is not None:
            self.finished(done, meter, meter.model_requests)
        if replaced:
            self.last_context_tokens = 0
            await self.sink.emit(
                ThoughtChunk(
                    f"Context is getting full: summarised {replaced} earlier messages.\n", self.new_id()
                )
            )
        return replaced

    async def _tell_retry(self, event: RetryScheduled) -> None:
        log.info("model.retry", attempt=event.attempt, delay=round(event.delay, 2), reason=event.reason)
        await self.sink.emit(
            ThoughtChunk(
                f"The API is busy ({event.reason}); retrying in {event.delay:.1f} s.\n", self.new_id()
            )
        )

    async def _run_tools(self, tool_uses: list[dict[str, Any]], history: History, meter: TurnMeter) -> None:
        """Run a batch; every tool_use gets exactly one tool_result, in model order, whatever happens.

        Each run of consecutive read-only calls runs at once (they only look, so their order does
        not matter); every other call runs alone, in model order.
        """
        allowed = meter.tool_allowance(len(tool_uses))
        results: list[dict[str, Any] | None] = [None] * len(tool_uses)
        reason = CANCELLED
        try:
            position = 0
            while position < len(tool_uses):
                block = tool_uses[position]
                if position >= allowed:
                    meter.tool_calls_skipped += 1
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
                if end - position > 1:
                    await self._run_together(tool_uses, range(position, end), results, meter, history)
                    position = end
                    continue
                results[position] = await self._run_one(block, meter, history)
                position += 1
            self._watch_repeats(tool_uses, [r for r in results if r is not None], meter)
        except JournalFailed:
            reason = JOURNAL_STOPPED
            raise
        finally:
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
                for block, result in zip(tool_uses, results, strict=True)
            ]
            notes.clear()
            for block, result in zip(tool_uses, answered, strict=True):
                if block["id"] not in self._journaled and reason is CANCELLED:
                    title, kind = self._heading(block["name"], block.get("input"))
                    history.note(
                        {
                            "type": "tool_result",
                            "block": result,
                            "shown": {
                                "title": title,
                                "kind": kind,
                                "status": "failed",
                                **({} if block["id"] in self._shown else {"hidden": True}),
                            },
                        }
                    )
            self._journaled.clear()
            self._started.clear()
            self._shown.clear()
            self._unkept.clear()
            history.add_user(answered, journal=False)

    def _read_only(self, block: dict[str, Any]) -> bool:
        """Whether the call only looks (a read-only tool), so it may run beside others."""
        tool = self.tools.get(block["name"])
        return tool is not None and getattr(tool, "read_only", False) is True

    async def _run_together(
        self,
        tool_uses: list[dict[str, Any]],
        positions: range,
        results: list[dict[str, Any] | None],
        meter: TurnMeter,
        history: History,
    ) -> None:
        """Run these calls at once, each result into its own slot; a cancel ends them all."""

        async def run(position: int) -> None:
            results[position] = await self._run_one(tool_uses[position], meter, history)

        try:
            async with anyio.create_task_group() as group:
                for position in positions:
                    group.start_soon(run, position)
        except BaseExceptionGroup as failures:  # e.g. a cancelled permission question
            raise _first_failure(failures) from None

    @staticmethod
    def _watch_repeats(
        tool_uses: list[dict[str, Any]], results: list[dict[str, Any]], meter: TurnMeter
    ) -> None:
        """One observation per batch; the 3rd identical one gets a note telling the model to change."""
        count = meter.repeats.observe(
            [
                (b["name"], b.get("input") or {}, result_text(r.get("content", "")))
                for b, r in zip(tool_uses, results, strict=True)
            ]
        )
        meter.last_repeat = count
        if meter.repeats.should_nudge(count) and results:
            add_note(results[-1], meter.repeats.nudge(count))

    async def _run_one(self, block: dict[str, Any], meter: TurnMeter, history: History) -> dict[str, Any]:
        call_id, name = block["id"], block["name"]
        args = block.get("input")
        args = args if isinstance(args, dict) else {}
        tool = self.tools.get(name)
        title, kind = self._heading(name, args)
        self._shown.add(call_id)
        await self.sink.emit(ToolCallStarted(call_id, title, kind, args))
        log.debug("tool.started", tool=name, call_id=call_id)
        try:
            result = await self._execute(tool, name, title, args, call_id, meter, history)
        except (anyio.get_cancelled_exc_class(), PermissionCancelled):
            meter.tool_calls_failed += 1
            await self._fail(
                call_id,
                self._cancel_notes.get(call_id)
                or (CANCELLED_RUNNING if call_id in self._started else CANCELLED),
            )
            raise
        except JournalFailed as exc:  # its tool_started entry was refused: it did not run
            meter.tool_calls_failed += 1
            await self._fail(call_id, f"{JOURNAL_STOPPED}: {exc}")
            raise
        if result.is_error:
            meter.tool_calls_failed += 1
        log.debug("tool.finished", tool=name, call_id=call_id, is_error=result.is_error)
        status = "failed" if result.is_error else "completed"
        block_out = tool_result(call_id, result.text, is_error=result.is_error, media=result.media)
        try:  # journaled (and fsynced) before the editor is told the call is done
            history.note(
                {
                    "type": "tool_result",
                    "block": block_out,
                    "shown": {
                        "title": title,
                        "kind": kind,
                        "status": status,
                        "rawInput": args,
                        "text": result.text,
                        "locations": [[str(p), line] for p, line in result.locations],
                        "diffs": [[str(d.path), d.old_text, d.new_text] for d in result.diffs],
                        "rawOutput": result.raw_output,
                    },
                }
            )
            self._journaled.add(call_id)
            if result.plan is not None:
                await self.sink.emit(PlanChanged(result.plan))
        except JournalFailed as exc:  # the call ends failed; the turn ends with the journal error
            self._unkept[call_id] = block_out
            await self._fail(call_id, f"{result.text}\n\n{exc}")
            raise
        await self.sink.emit(
            ToolCallFinished(
                call_id,
                status,
                result.text,
                result.locations,
                result.raw_output,
                result.diffs,
                result.terminal_id,
            )
        )
        return block_out

    async def _fail(self, call_id: str, text: str) -> None:
        """End an open tool call `failed` in the editor, even from a cancelled scope."""
        with anyio.move_on_after(2, shield=True):
            await self.sink.emit(ToolCallFinished(call_id, "failed", text))

    def _heading(self, name: str, args: Any) -> tuple[str, str]:
        """The title and kind the editor is shown for a call (journaled too, for replay)."""
        tool = self.tools.get(name)
        if tool is None:
            return name, "other"
        try:
            return tool.title(args if isinstance(args, dict) else {}) or name, tool.kind
        except Exception:  # a title is cosmetic; malformed input is reported when it runs
            return name, tool.kind

    async def _execute(
        self,
        tool: Any,
        name: str,
        title: str,
        args: dict[str, Any],
        call_id: str,
        meter: TurnMeter,
        history: History,
    ) -> ToolResult:
        """Validate, ask, run: every way this can go wrong is a result the model sees."""
        if tool is None:
            meter.tool_calls += 1
            known = ", ".join(self.tools.names)
            return ToolResult(f"unknown tool {name!r}; available tools: {known}", is_error=True)
        try:
            args = self.tools.validate(tool, args)
        except ToolError as exc:
            meter.tool_calls += 1
            return ToolResult(str(exc), is_error=True)
        permission = getattr(tool, "permission", None)
        if permission == "edit" and sensitive_reason(self.ctx.roots, args.get("path")):
            permission = "sensitive"  # .git/config, hooks, .envrc...: asked in every mode but bypass
        if permission is not None:
            meter.phase = "permission"
            async with self._asking:  # one question at a time, even from calls run at once
                decision = await self.permissions.ask(
                    call_id=call_id,
                    tool_name=name,
                    title=title,
                    kind=tool.kind,
                    permission=permission,
                    raw_input=args,
                    preview=lambda: self._preview(tool, args),
                )
            if decision.cancelled:
                raise PermissionCancelled
            if not decision.allowed:
                meter.tool_calls_denied += 1
                return ToolResult(decision.message or "The user declined this tool call.", is_error=True)
        meter.tool_calls += 1
        meter.phase = "tools"
        await self.sink.emit(ToolCallUpdated(call_id))
        allowance = getattr(tool, "time_allowance", None)
        seconds = allowance(args) if allowance else self.settings.tool_timeout
        ctx = replace(self.ctx, report=self._reporter(call_id))
        if tool.kind not in READ_ONLY_KINDS:  # after a crash, the model hears it may have run
            history.note({"type": "tool_started", "toolUseId": call_id})
            self._started.add(call_id)
        try:
            with anyio.fail_after(seconds):
                return await tool.run(args, ctx)
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

    async def _preview(self, tool: Any, args: dict[str, Any]) -> Preview | None:
        """What the call would change, for the permission question; cosmetic, so never fatal."""
        make = getattr(tool, "preview", None)
        if make is None:
            return None
        try:
            with anyio.fail_after(PREVIEW_SECONDS):
                return await make(args, self.ctx)  # type: ignore[no-any-return]
        except Exception as exc:
            log.debug("tool.preview_failed", tool=tool.name, error=str(exc))
            return None

    def _reporter(self, call_id: str) -> Callable[[Progress], Awaitable[None]]:
        sink = self.sink

        async def report(progress: Progress) -> None:
            if progress.cancelled:  # the call's last word, reported when the cancel reaches us
                self._cancel_notes[call_id] = progress.text or CANCELLED
                return
            await sink.emit(ToolCallProgress(call_id, progress.text, progress.terminal_id))

        return report
