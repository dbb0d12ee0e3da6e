"""The turn record: built once at the end of a turn from the meter, sent in `_meta` and logged.

This is where the turn's own values become the record's JSON words: `STOP_REASONS` is the one map
from `TurnStop` to ACP's stop reasons, and each `Limit` carries its `_meta` limit name
(`record_name`, in the one table of limits, `turn/meter.py`; docs/decisions.md C3).

`TurnRecord` is the common result of every strategy (the `tools` strategy's own type); a strategy
with fields of its own subclasses it (strategies/results.py). `Step` is the per-request log that an
in-process caller gets and the `_meta` record leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from acp_agent.model.base import MessageDone
from acp_agent.turn.context.history import result_text
from acp_agent.turn.meter import Limit, Subagent, TurnMeter
from acp_agent.turn.stop import TurnStop

__all__ = ["STOP_REASONS", "HookFigures", "Step", "SubagentRecord", "ToolStep", "TurnRecord", "step_of"]

STOP_REASONS: dict[TurnStop, str] = {
    TurnStop.END_TURN: "end_turn",
    TurnStop.MAX_TOKENS: "max_tokens",
    TurnStop.REFUSAL: "refusal",
    TurnStop.LIMIT: "max_turn_requests",  # ACP's one reason for "the per-turn allowance ran out"
    TurnStop.CANCELLED: "cancelled",
}
"""The record's `stopReason` for each way a turn stops (C3); a failed turn's is `error`."""


class SubagentRecord(BaseModel):
    """What one subagent (a `task` call) spent of the turn, and how it ended (docs/decisions.md D27).

    Its figures are included in the turn's own, which stay the totals for the tree.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)

    description: str
    stop: str
    """How the subagent ended: end_turn, max_tokens, refusal, max_turn_requests, cancelled or error."""
    requests: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_searches: int = 0
    cost_usd: float | None = None
    limit: str | None = None
    """The budget that ended it: the turn's, or its own share of requests (`maxTurnRequests`)."""
    agent: str | None = None
    """The custom agent it ran as (the `task` call's `subagent_type`), if any."""
    model: str | None = None
    """The model its requests went to, when it is not the turn's (a custom agent's `model`)."""

    @classmethod
    def of(cls, subagent: Subagent) -> SubagentRecord:
        meter, stop = subagent.meter, subagent.stop
        return cls(
            description=subagent.description,
            stop="error" if subagent.error else "cancelled" if stop is None else STOP_REASONS[stop],
            limit=None if subagent.limit is None else subagent.limit.record_name,
            requests=meter.model_requests,
            tool_calls=meter.tool_calls,
            input_tokens=meter.input_tokens,
            output_tokens=meter.output_tokens,
            cache_read_input_tokens=meter.cache_read_input_tokens,
            cache_creation_input_tokens=meter.cache_creation_input_tokens,
            web_searches=meter.web_searches,
            cost_usd=round(meter.cost_usd, 6) if meter.price is not None else None,
            agent=subagent.agent,
            model=subagent.model,
        )


class HookFigures(BaseModel):
    """The hooks the turn ran (`turn/hooks.py`): how many, how many blocked, their time."""

    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)

    runs: int
    blocked: int = 0
    duration_ms: int = 0


class TurnRecord(BaseModel):
    """What one turn did (docs/decisions.md C6), a prompt's or a command's; same shape on every
    path and on errors."""

    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)

    turn_id: str
    stop_reason: str
    model_requests: int
    max_turn_requests: int
    tool_calls: int
    retries: int
    input_tokens: int
    output_tokens: int
    duration_ms: int
    streaming: bool
    loop: str = "tools"
    """The strategy that ran the turn (tools, verify, phased, or a custom one's name)."""
    limit: str | None = None
    aborted_during: str | None = None
    continuations: int = 0
    tool_calls_failed: int = 0
    tool_calls_denied: int = 0
    tool_calls_skipped: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_searches: int = 0
    """Web searches the API ran in the turn (priced into `cost_usd`, $10 per 1,000)."""
    web_fetches: int = 0
    model_duration_ms: int = 0
    model_stop_reason: str | None = None
    error: str | None = None
    cost_usd: float | None = None
    """USD spent in the turn; null when the model's price is unknown (never a false 0)."""
    wrap_up: bool = False
    """The last allowed request was spent on a summary without tools (--on-limit wrap_up)."""
    limits: dict[str, Any] | None = None
    models: list[str] | None = None
    """The model of each request, in order."""
    subagents: list[SubagentRecord] | None = None
    """Each subagent the turn ran (`task` calls), in the order they started; null when none."""
    hooks: HookFigures | None = None
    """The hook commands the turn ran (never model requests); null when none ran."""

    @classmethod
    def from_meter(
        cls,
        meter: TurnMeter,
        *,
        turn_id: str,
        stop: TurnStop,
        streaming: bool,
        limit: Limit | None = None,
        aborted_during: str | None = None,
        error: str | None = None,
        **fields: Any,
    ) -> Self:
        """The record of the turn `meter` counted, which ended `stop` (or failed, with `error`).

        `fields` are a subclass's own (snake_case).
        """
        limits = meter.limits.model_dump(by_alias=True)
        return cls(
            **fields,
            turn_id=turn_id,
            stop_reason="error" if error is not None else STOP_REASONS[stop],
            limit=None if limit is None else limit.record_name,
            aborted_during=aborted_during,
            model_requests=meter.model_requests,
            max_turn_requests=meter.limits.max_turn_requests,
            continuations=meter.continuations,
            retries=meter.retries,
            tool_calls=meter.tool_calls,
            tool_calls_failed=meter.tool_calls_failed,
            tool_calls_denied=meter.tool_calls_denied,
            tool_calls_skipped=meter.tool_calls_skipped,
            input_tokens=meter.input_tokens,
            output_tokens=meter.output_tokens,
            cache_read_input_tokens=meter.cache_read_input_tokens,
            cache_creation_input_tokens=meter.cache_creation_input_tokens,
            web_searches=meter.web_searches,
            web_fetches=meter.web_fetches,
            duration_ms=meter.elapsed_ms(),
            model_duration_ms=int(meter.model_seconds * 1000),
            streaming=streaming,
            model_stop_reason=meter.model_stop_reason,
            error=error,
            cost_usd=round(meter.cost_usd, 6) if meter.price is not None else None,
            wrap_up=meter.wrapped_up,
            limits={k: v for k, v in limits.items() if v is not None},
            models=list(meter.request_models) or None,
            subagents=[SubagentRecord.of(s) for s in meter.subagents] or None,
            hooks=(
                HookFigures(
                    runs=meter.hook_runs,
                    blocked=meter.hooks_blocked,
                    duration_ms=int(meter.hook_seconds * 1000),
                )
                if meter.hook_runs
                else None
            ),
        )

    def to_meta(self) -> dict[str, Any]:
        """The camelCase object under `_meta["acp-agent"]["turn"]` (optional fields left out when unset)."""
        return self.model_dump(by_alias=True, exclude_none=True)


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One tool call of a step: `status` is completed, failed or not_run (skipped or cut off)."""

    id: str
    name: str
    status: str


@dataclass(frozen=True, slots=True)
class Step:
    """One model request of a turn: its number, what kind, why it stopped, its tools and tokens."""

    request: int
    kind: str
    """`model` for the loop's requests, `judge` for a verify judge's."""
    stop_reason: str | None
    tools: tuple[ToolStep, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0


def step_of(
    number: int,
    done: MessageDone,
    tool_uses: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    kind: str = "model",
) -> Step:
    """The step of request `number`, its tools' outcomes read from the results in `messages`."""
    last = messages[-1] if messages else None
    results = (
        {b.get("tool_use_id"): b for b in last["content"] if b.get("type") == "tool_result"}
        if last and last["role"] == "user"
        else {}
    )
    calls = []
    for block in tool_uses:
        result = results.get(block["id"])
        if result is None or result_text(result.get("content", "")).startswith("not executed"):
            status = "not_run"
        else:
            status = "failed" if result.get("is_error") else "completed"
        calls.append(ToolStep(block["id"], block["name"], status))
    return Step(
        number, kind, done.stop_reason, tuple(calls), done.usage.input_tokens, done.usage.output_tokens
    )
