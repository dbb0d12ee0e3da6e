"""One prompt turn from start to record: cancel scope, wall clock, history repair, limit notice.

The session hands in a fresh meter and the prompt; the driver runs the strategy and always leaves the
history valid for the next request, whatever ended the turn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import structlog

from acp_agent.config import how_to_set
from acp_agent.errors import JournalFailed, PermissionCancelled, TurnFailed
from acp_agent.limits import Limits, fields_by_name
from acp_agent.phases import phase
from acp_agent.turn.context.history import History, Mark
from acp_agent.turn.events import EventSink, Notice
from acp_agent.turn.hooks import TurnHalted
from acp_agent.turn.journal.entries import TurnEntry
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.runner import TurnRunner, new_message_id
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.base import Strategy, record_of

__all__ = ["PromptSource", "TurnResult", "drive_turn", "journal_record", "limit_event", "limit_notice"]

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class TurnResult:
    """How the turn ended; `failure` is set when it ended in a terminal error."""

    stop: TurnStop
    record: TurnRecord
    failure: TurnFailed | None = None
    output: str = ""
    """The turn's final text (the partial text when a limit or cancel ended it)."""


class PromptSource(Protocol):
    """A prompt built inside the turn (a command file's, a skill's, an MCP prompt's:
    `session/commands/command_turn.py`), within its cancel scope, clock and meter, once the turn began."""

    async def build(self, runner: TurnRunner, history: History, meter: TurnMeter) -> bool:
        """Add the prompt to `history` (as the user's message); False when it could not be built
        (the user was told why): the turn then ends `end_turn` without a request."""
        ...


def limit_notice(limit: Limit, meter: TurnMeter, record: Mapping[str, Any]) -> str:
    """One short line for the user: which limit stopped the turn and how to raise it.

    The limit's value comes from the meter's limits, else from the turn's `_meta` record
    (`maxTrials`, which belongs to the strategy, not to `Limits`).
    """
    title, description = _limit_parts(limit, meter, record)
    return f"\n\n[acp-agent] {title}. {description}\n"


def limit_event(limit: Limit, meter: TurnMeter, record: Mapping[str, Any]) -> Notice:
    """The limit's notice: an ACP `notice` where the client shows them, else the line above."""
    title, description = _limit_parts(limit, meter, record)
    text = limit_notice(limit, meter, record)
    return Notice(text, new_message_id(), title, description, "warning")


def _limit_parts(limit: Limit, meter: TurnMeter, record: Mapping[str, Any]) -> tuple[str, str]:
    what, setting, name = limit.unit, limit.setting, limit.record_name
    key = fields_by_name(Limits).get(setting, name)  # what session/new `_meta` calls the setting
    value = getattr(meter.limits, setting, None)
    if value is None:
        value = record.get(name)
    amount = f"{value:g} {what}" if isinstance(value, int | float) else what
    return (
        f"This turn stopped at its limit of {amount} ({name})",
        f"Send another prompt to continue, or raise it with {how_to_set(setting)} or "
        f'session/new _meta {{"acp-agent": {{"{key}": …}}}}.',
    )


async def drive_turn(
    *,
    strategy: Strategy,
    runner: TurnRunner,
    history: History,
    meter: TurnMeter,
    prompt: list[dict[str, Any]] | PromptSource,
    sink: EventSink,
    scope: anyio.CancelScope,
    turn_id: str,
    streaming: bool,
    shown: list[dict[str, Any]] | None = None,
) -> TurnResult:
    """Run one prompt turn inside `scope` (cancelled by session/cancel) and build its record.
    `prompt`: the prompt's blocks, or a source that builds it inside the turn (then the journal's
    prompt entry holds only what the editor was `shown`)."""
    mark = history.mark()
    stop, failure, aborted = TurnStop.END_TURN, None, None
    limit: Limit | None = None
    log.info("turn.started", turn_id=turn_id, max_turn_requests=meter.limits.max_turn_requests)
    left = meter.seconds_left()
    halted: str | None = None
    if runner.steering is not None:
        runner.steering.start()
    try:
        with scope, anyio.move_on_after(math.inf if left is None else left) as clock:
            try:
                source, given = (None, prompt) if isinstance(prompt, list) else (prompt, [])
                with phase("UserPromptSubmit hooks"):
                    blocks = await _hooked_prompt(runner, given, meter)
                if blocks is not None:
                    with phase("prompt journaled"):
                        history.add_prompt(blocks, shown)  # a journal that refuses it fails the turn
                    if source is None or await source.build(runner, history, meter):
                        stop = (await strategy.run(runner, history, meter)).stop
            except LimitReached as reached:  # the one place a budget's stop is caught
                stop, limit = reached.limit.stop, reached.limit
            except PermissionCancelled:
                stop, aborted = TurnStop.CANCELLED, "permission"
            except TurnHalted as halt:  # a hook's `continue: false`: the turn ends, the user told why
                halted = halt.reason
        if scope.cancelled_caught:
            stop, aborted = TurnStop.CANCELLED, meter.phase
        elif clock.cancelled_caught:
            stop, limit = Limit.SECONDS.stop, Limit.SECONDS
    except TurnFailed as exc:
        failure = exc
    except Exception as exc:
        log.exception("turn.crashed", turn_id=turn_id)
        failure = TurnFailed(f"internal error: {type(exc).__name__}: {exc}")
    try:
        history.repair()
    except JournalFailed as exc:  # repaired in memory all the same
        failure = failure or exc
    output = _output(history, mark)
    if stop is TurnStop.REFUSAL:
        history.rollback(mark)
    with anyio.move_on_after(5, shield=True):
        failure = failure or await _keep_steering(runner, history)
    record_type, fields = record_of(strategy)
    record = record_type.from_meter(
        meter,
        turn_id=turn_id,
        stop=stop,
        streaming=streaming,
        limit=limit,
        aborted_during=aborted,
        error=str(failure) if failure else None,
        **fields,
    )
    meta = record.to_meta()
    if halted is not None and failure is None:
        with anyio.move_on_after(5, shield=True):
            await sink.emit(Notice.warning(halted, new_message_id()))
    if limit is not None and failure is None:
        with anyio.move_on_after(5, shield=True):
            await sink.emit(limit_event(limit, meter, meta))
    journal_record(history, meta)
    log.info("turn.ended", **meta)
    return TurnResult(stop, record, failure, output)


def journal_record(history: History, meta: dict[str, Any]) -> None:
    """Journal a turn's record (`TurnRecord.to_meta`) once the turn ended: what `/cost` sums after
    session/load. A journal that refuses it loses the record, not the turn (already answered)."""
    try:
        history.note(TurnEntry(meta))
    except JournalFailed as exc:
        log.warning("journal.turn_record_lost", turn_id=meta.get("turnId"), problem=str(exc))


async def _hooked_prompt(
    runner: TurnRunner, prompt: list[dict[str, Any]], meter: TurnMeter
) -> list[dict[str, Any]] | None:
    """The prompt as the model gets it once the UserPromptSubmit hooks answered: with their
    context beside it, or None when one blocked it (the model never sees it; `TurnHalted` tells
    the user why). A command's turn (no prompt here) builds its prompt in the strategy."""
    if not prompt:
        return prompt
    text = "\n".join(b["text"] for b in prompt if b.get("type") == "text" and isinstance(b.get("text"), str))
    hooked = await runner.hooks.prompt_submitted(text, meter)
    if hooked.blocked is not None:
        raise TurnHalted(f"A UserPromptSubmit hook blocked this prompt. {hooked.blocked}")
    if hooked.halt is not None:
        raise TurnHalted(hooked.halt)
    if hooked.context:
        return [*prompt, {"type": "text", "text": hooked.context}]
    return prompt


async def _keep_steering(runner: TurnRunner, history: History) -> JournalFailed | None:
    """The turn ends: messages the user sent that no request carried (a budget or a cancel ended
    it first) join the history now, so the next turn's first request carries them."""
    if runner.steering is None:
        return None
    runner.steering.stop()
    try:
        await runner.join_steering(history)
    except JournalFailed as exc:
        return exc
    return None


def _output(history: History, mark: Mark) -> str:
    """The text of the turn's last assistant message (none before `mark` counts)."""
    for message in reversed(history.messages[mark.messages :]):
        if message["role"] == "assistant":
            return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    return ""
