"""The governed tool-calling loop: request → relay → tools → repeat, until the model stops or a budget does.

One loop for both model paths: the model client yields the same events either way (C8). The runner
takes its meter from outside and can be entered again within one turn, so a strategy can drive it
(docs/decisions.md D9); it returns an `AttemptOutcome`, never the turn's final answer. A reply's
tool calls run as one `ToolBatch` (`tool_batch.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import structlog

from acp_agent.errors import ModelUnavailable, StreamBroken
from acp_agent.model.base import (
    MessageDone,
    ModelClient,
    ModelRequest,
    RetryScheduled,
    ServerToolBlock,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from acp_agent.permissions.gate import PermissionGate
from acp_agent.tools.base import ToolContext
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.attachments import ReadAttachments
from acp_agent.turn.context.clearing import clear_old_results
from acp_agent.turn.context.compaction import compact
from acp_agent.turn.context.history import History, without_thinking
from acp_agent.turn.context.media_budget import fit_media, replace_refused
from acp_agent.turn.events import EventSink, Notice, SteeringJoined, TextChunk, ThoughtChunk, UsageReported
from acp_agent.turn.hooks import TurnHalted, TurnHooks
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.record import step_of
from acp_agent.turn.server_calls import ServerCalls
from acp_agent.turn.session_usage import LoopMemory, SessionUsage
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.spec import TurnSpec, new_message_id
from acp_agent.turn.steering import Steering
from acp_agent.turn.stop import TurnStop, map_model_stop
from acp_agent.turn.tool_batch import ToolBatch

__all__ = ["AttemptOutcome", "RunnerSettings", "TurnRunner", "TurnSpec", "new_message_id"]

log = structlog.get_logger(__name__)

WRAP_UP_NOTE = (
    "This is your last model request in this turn: do not call tools; summarise what "
    "was done and what remains."
)
CUT_OFF = "not executed: the reply was cut off before this tool call was complete"
MAX_STOP_BLOCKS = 8
"""Consecutive Stop-hook blocks a run obeys; then its end is forced (as Claude Code does)."""


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """How one run of the loop ended when the model ended it: the turn stop it implies, and the
    model's own words. A budget that ends the run raises `LimitReached` instead."""

    stop: TurnStop
    model_stop_reason: str | None = None
    final_text: str = ""


class TurnRunner:
    """Runs the loop for one turn, as its spec says, over the session's memory."""

    def __init__(self, spec: TurnSpec, memory: LoopMemory | None = None) -> None:
        self.spec = spec
        self.memory = memory if memory is not None else LoopMemory()
        self._server_calls = ServerCalls()
        """The web searches and fetches shown and not finished yet (`server_calls.py`)."""

    @property
    def model(self) -> ModelClient:
        return self.spec.model

    @property
    def tools(self) -> ToolRegistry:
        return self.spec.tools

    @property
    def sink(self) -> EventSink:
        return self.spec.sink

    @property
    def ctx(self) -> ToolContext:
        return self.spec.ctx

    @property
    def settings(self) -> RunnerSettings:
        """What the next request carries (`TurnSpec.request_settings`)."""
        return self.spec.request_settings()

    @property
    def gate(self) -> PermissionGate:
        return self.spec.gate

    @property
    def hooks(self) -> TurnHooks:
        return self.spec.hooks

    @property
    def attachments(self) -> ReadAttachments | None:
        return self.spec.attachments

    @property
    def steering(self) -> Steering | None:
        return self.spec.steering

    @property
    def new_id(self) -> Callable[[], str]:
        return self.spec.new_id

    @property
    def usage(self) -> SessionUsage:
        return self.memory.usage

    @property
    def last_context_tokens(self) -> int:
        return self.memory.last_context_tokens

    async def run(
        self,
        history: History,
        meter: TurnMeter,
        *,
        tools: ToolRegistry | None = None,
        stop_when: Callable[[], bool] | None = None,
        read_only: str | None = None,
    ) -> AttemptOutcome:
        """Loop until the model ends its reply.

        A strategy may offer `tools` instead of the session's for this run, and make it read-only
        (`read_only`: what a call that changes something is told): a runner of the phase's spec
        runs it. It may end the run after a tool batch once `stop_when()` is true (the reply stays
        `tool_use`).

        Raises:
            LimitReached: a budget stops the turn (the driver catches it, once for the turn).
        """
        if tools is not None or read_only is not None:
            phase = self.spec.phase(tools or self.tools, read_only)
            return await TurnRunner(phase, self.memory).run(history, meter, stop_when=stop_when)
        try:
            return await self._loop(history, meter, stop_when)
        finally:
            with anyio.move_on_after(2, shield=True):  # even from a cancelled scope
                for closed in self._server_calls.close():
                    await self.sink.emit(closed)

    async def _loop(
        self, history: History, meter: TurnMeter, stop_when: Callable[[], bool] | None
    ) -> AttemptOutcome:
        compacted_for_overflow = media_refused = resend = False
        stop_blocks = 0
        while True:
            if resend:  # the refused request again, once its fault is mended: a retry (D1)
                meter.retry_scheduled()
                resend = False
            else:
                memory = self.memory
                memory.last_context_tokens = clear_old_results(
                    history, memory.last_context_tokens, self.settings
                )
                await self._maybe_compact(history, meter)
                if history.messages and history.messages[-1]["role"] == "user":  # not a pause_turn's
                    await self.join_steering(history)
                fit_media(history)  # within what one request may carry (rarely rewrites anything)
                number = meter.start_request(self.settings.model)
                log.debug("model.request", n=number, of=meter.limits.max_turn_requests)
            mark = history.mark()
            try:
                done = await self._send_request(history, meter, number)
            except ModelUnavailable as exc:
                # An image the API refused (or a request too large) is taken out, once; the
                # request is then sent again, so the session never stays stuck on it.
                if media_refused or not replace_refused(history, exc.detail, self.memory.accepted_media):
                    raise
                media_refused = resend = True
                continue
            self.memory.accepted_media = mark  # the media before it were taken
            meter.model_stopped(done.stop_reason)
            if (
                done.stop_reason == "context_window_exceeded"
                and not done.content
                and not compacted_for_overflow
            ):
                # The API refused the prompt as too long: compact once and try again (D1).
                compacted_for_overflow = True
                if await self._maybe_compact(history, meter, force=True, trigger="auto"):
                    resend = True
                    continue
            tool_uses = [b for b in done.content if b.get("type") == "tool_use"]
            text = "".join(b.get("text", "") for b in done.content if b.get("type") == "text")
            if meter.wrapped_up:  # the summary request was the last one allowed
                history.repair("not executed: this was the last request allowed in the turn")
                raise LimitReached(Limit.REQUESTS)
            if done.stop_reason == "pause_turn":
                meter.continued()
                self._step(number, done, [], history)
                continue
            if done.stop_reason == "tool_use" and tool_uses:
                batch = self.tool_batch(tool_uses, history, meter)
                try:
                    await batch.run()
                finally:
                    self._step(number, done, tool_uses, history)
                if batch.halt is not None:  # a hook's `continue: false`, once every call is answered
                    raise TurnHalted(batch.halt)
                meter.check_batch()
                if stop_when is not None and stop_when():
                    return AttemptOutcome(TurnStop.END_TURN, done.stop_reason, text)
                continue
            if tool_uses:
                history.repair(CUT_OFF)
            self._step(number, done, tool_uses, history)
            stop = map_model_stop(done.stop_reason) or TurnStop.END_TURN
            if stop is TurnStop.END_TURN and self._steered_on(meter):
                await self.join_steering(history)  # it came as the model ended: answered in this turn
                continue
            if stop is TurnStop.END_TURN and done.stop_reason == "end_turn":
                hooked = await self.hooks.stopping(text, stop_blocks > 0, meter)
                if hooked.halt is not None:
                    raise TurnHalted(hooked.halt)
                if hooked.go_on is not None and stop_blocks < MAX_STOP_BLOCKS:
                    # The turn goes on: one more request, counted and checked like any other.
                    stop_blocks += 1
                    history.add_user([{"type": "text", "text": hooked.go_on}])
                    continue
            return AttemptOutcome(stop, done.stop_reason, text)

    def _steered_on(self, meter: TurnMeter) -> bool:
        """Whether a message the user sent while the turn ran waits, and a budget allows the
        request that answers it (it never adds one beyond the turn's limits)."""
        return self.steering is not None and self.steering.pending() and meter.exhausted() is None

    async def join_steering(self, history: History) -> int:
        """Put the messages the user sent while the turn ran into the history (after the pending
        tool results, journaled) and show them to the editor; returns how many joined."""
        if self.steering is None:
            return 0
        messages = self.steering.take()
        for message in messages:
            history.add_steering(message.blocks, message.shown)
            await self.sink.emit(SteeringJoined(tuple(message.shown), self.new_id()))
        return len(messages)

    def tool_batch(self, tool_uses: list[dict[str, Any]], history: History, meter: TurnMeter) -> ToolBatch:
        """A batch of these calls with this runner's tools, sink, context, asker and timeout."""
        return ToolBatch(tool_uses, self.spec, history, meter, memory=self.memory)

    def _step(
        self, number: int, done: MessageDone, tool_uses: list[dict[str, Any]], history: History
    ) -> None:
        """Tell `on_step` (an in-process caller's log) what this request did."""
        if self.spec.on_step is not None:
            self.spec.on_step(step_of(number, done, tool_uses, history.messages))

    def _wrap_up(self, history: History, meter: TurnMeter) -> dict[str, Any] | None:
        """With --on-limit wrap_up, the last allowed request of a continuing loop: no tools, a note."""
        # Called after this request was counted: it is the last one when none are left.
        if meter.wrapped_up:  # that request sent again (a retry): its note is there already
            return {"type": "none"}
        if (
            self.settings.on_limit != "wrap_up"
            or meter.requests_left() != 0
            or meter.model_requests < 2
            or not history.messages
            or history.messages[-1]["role"] != "user"
        ):
            return None
        meter.wrapping_up()
        history.messages[-1]["content"].append({"type": "text", "text": WRAP_UP_NOTE})
        return {"type": "none"}

    def request_tools(self, meter: TurnMeter) -> list[dict[str, Any]]:
        """The `tools` of a request in `meter`'s turn: the session's tools, then its web server
        tools, the search tool's `max_uses` within what is left of the turn's search budget."""
        web = self.settings.web.definitions(max_uses=meter.web_search_allowance())
        return [*self.tools.api_tools(), *web]

    def _settle_tools(self, history: History, meter: TurnMeter) -> None:
        """Before a loop request: when its tools differ from the last one's (the search budget
        shrank, web was switched, another model), the history's thinking blocks go (journaled),
        since the 5.5 models refuse them behind changed tools; the cache is rewritten anyway."""
        tools = self.request_tools(meter)
        if self.memory.signed_tools is not None and tools != self.memory.signed_tools:
            dropped = history.drop_thinking("the tools changed")
            log.info("history.tools_changed", thinking_dropped=dropped)
        self.memory.signed_tools = tools

    def build_request(self, messages: list[dict[str, Any]], meter: TurnMeter, **fields: Any) -> ModelRequest:
        """The session's request for `messages` in `meter`'s turn: its model, tools, system, thinking
        and effort, and the turn's deadline.

        Every request of a session (the loop's, a summary's, a judge's) starts from this one, so
        they share the cached prefix; `fields` replace what one kind of request needs otherwise.
        Sent with other tools than the replies were signed to, `messages` go without thinking.
        """
        settings = self.settings
        values: dict[str, Any] = {
            "deadline": meter.deadline(),
            "model": settings.model,
            "max_tokens": settings.max_tokens,
            "messages": messages,
            "system": settings.system,
            "tools": self.request_tools(meter),
            "thinking": settings.thinking,
            "output_config": settings.output_config,
            "previous_message_id": self.memory.last_message_id,
        }
        values.update(fields)
        signed = self.memory.signed_tools
        if signed is not None and values["tools"] != signed:
            values["messages"] = without_thinking(values["messages"])
        return ModelRequest(**values)

    def finished(self, done: MessageDone, meter: TurnMeter, number: int) -> float | None:
        """Account for a finished response: the turn's and the session's figures, the cache log.

        Returns the session's cost so far, or None when the model's price is unknown.
        """
        cost = meter.tokens_used(done.usage)
        if done.message_id is not None:
            self.memory.last_message_id = done.message_id
        self.usage.count(done.usage, cost if meter.price is not None else None)
        if done.cache_miss is not None:
            log.info(
                "model.cache_miss",
                reason=done.cache_miss.get("type"),
                request=number,
                missed_tokens=done.cache_miss.get("cache_missed_input_tokens"),
            )
        return self.usage.cost_usd

    async def _send_request(self, history: History, meter: TurnMeter, number: int) -> MessageDone:
        """One model request: relay its output as it arrives, and append the reply to history."""
        meter.waiting_for_model()
        settings = self.settings
        tool_choice = self._wrap_up(history, meter)
        self._settle_tools(history, meter)
        request = self.build_request(history.for_request(), meter, tool_choice=tool_choice)
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
                elif kind is ServerToolBlock:  # a web search or fetch the API runs: shown
                    for shown in self._server_calls.events(event.block):  # type: ignore[union-attr]
                        await sink.emit(shown)
                elif kind is RetryScheduled:
                    meter.retry_scheduled()
                    if not event.quiet:  # type: ignore[union-attr]
                        await self._tell_retry(event)  # type: ignore[arg-type]
                elif kind is MessageDone:
                    done = event  # type: ignore[assignment]
        except StreamBroken as exc:
            meter.tokens_used(usage)
            history.add_assistant([b for b in exc.partial if b.get("type") == "text"])
            raise
        except anyio.get_cancelled_exc_class():
            meter.tokens_used(usage)
            history.add_assistant(
                [{"type": "text", "text": "".join(parts)} for _, parts in sorted(texts.items())]
            )
            raise
        finally:
            meter.model_time_spent(time.monotonic() - started)
        if done is None:
            meter.tokens_used(usage)
            history.add_assistant(
                [{"type": "text", "text": "".join(parts)} for _, parts in sorted(texts.items())]
            )
            raise StreamBroken("the model's reply ended without a stop_reason")
        cost = self.finished(done, meter, number)
        history.add_assistant(done.content)
        self.memory.last_context_tokens = done.usage.context_tokens
        await sink.emit(UsageReported(done.usage.context_tokens, settings.context_window, cost))
        return done

    async def _maybe_compact(
        self, history: History, meter: TurnMeter, *, force: bool = False, trigger: str | None = None
    ) -> int:
        """Summarise older turns when the last request's context passed the threshold (`force`:
        now; a PreCompact hook may block it)."""
        settings = self.settings
        threshold = settings.compact_at * settings.context_window
        if not force and (not settings.compact_at or self.memory.last_context_tokens < threshold):
            return 0
        why = await self.hooks.compacting("manual" if force and trigger is None else "auto", meter)
        if why is not None:
            log.info("compaction.blocked_by_hook", reason=why[:300])
            return 0
        meter.waiting_for_model()
        self._settle_tools(history, meter)
        replaced, done = await compact(
            self.model,
            history,
            meter,
            settings=settings,
            tools=self.request_tools(meter),
            previous_message_id=self.memory.last_message_id,
            sink=self.sink,
        )
        if done is not None:
            self.finished(done, meter, meter.model_requests)
        if replaced:
            self.memory.last_context_tokens = 0
        return replaced

    async def _tell_retry(self, event: RetryScheduled) -> None:
        # The model client logged `model.retry` when it decided; the editor hears it here.
        text = f"The API is busy ({event.reason}); retrying in {event.delay:.1f} s.\n"
        title = f"The API is busy; retrying in {event.delay:.1f} s"
        await self.sink.emit(Notice(text, self.new_id(), title, event.reason, "warning", thought=True))
