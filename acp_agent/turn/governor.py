"""The turn meter: what a prompt turn has spent, and whether it may spend more. Pure, no I/O.

Vocabulary (docs/decisions.md C1):
- prompt turn: one `session/prompt`, from request to response. Every counter here is per prompt turn.
- model request: one logical Messages API call issued by the loop.
- attempt: one HTTP exchange; a model request has 1 + retries attempts.
- tool call: one tool_use block the agent acts on (executed, denied, failed or skipped).
- step: one model request plus the tool batch it produced (logs only).

Reset is a new meter: each `session/prompt` builds a fresh `TurnMeter`, so nothing leaks between
turns. Check before dispatch, count at dispatch: with a limit of N the API sees exactly N requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from acp_agent.config import Limits
from acp_agent.model.base import Usage
from acp_agent.model.pricing import Price
from acp_agent.turn.repeats import RepeatDetector
from acp_agent.turn.stop import TurnStop

__all__ = ["Continue", "Decision", "Stop", "TurnMeter"]


@dataclass(frozen=True, slots=True)
class Continue:
    """The loop may go on."""


@dataclass(frozen=True, slots=True)
class Stop:
    """A budget ran out: end the turn with `stop`, naming `limit`."""

    limit: str
    stop: TurnStop = TurnStop.LIMIT


Decision = Continue | Stop
CONTINUE = Continue()


@dataclass(slots=True)
class TurnMeter:
    """Counters of one prompt turn, consulted before each request and each tool batch."""

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    model_requests: int = 0
    retries: int = 0
    continuations: int = 0
    tool_calls: int = 0
    tool_calls_failed: int = 0
    tool_calls_denied: int = 0
    tool_calls_skipped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    model_seconds: float = 0.0
    model_stop_reason: str | None = None
    phase: str = "model"
    """What the turn is doing now (model, tools, permission, verify): reported as abortedDuring."""
    price: Price | None = None
    """The model's price, when known: cost is then reported and its budget enforced."""
    cost_usd: float = 0.0
    wrapped_up: bool = False
    repeats: RepeatDetector = field(default_factory=RepeatDetector)
    last_repeat: int = 0
    """How often the latest tool batch has been seen, identical, in this turn."""
    request_models: list[str] = field(default_factory=list)
    """The model of each request, in order (a session may switch models between turns)."""

    def __post_init__(self) -> None:
        if not self.started:
            self.started = self.clock()
        self.repeats = RepeatDetector(self.limits.repeat_limit)

    def before_request(self) -> Decision:
        """Check before dispatch: may another model request be sent?"""
        limits = self.limits
        if self.model_requests >= limits.max_turn_requests:
            return Stop("maxTurnRequests")
        if limits.max_turn_output_tokens is not None and self.output_tokens >= limits.max_turn_output_tokens:
            return Stop("maxTurnOutputTokens", TurnStop.MAX_TOKENS)
        if limits.max_turn_input_tokens is not None and self.input_tokens >= limits.max_turn_input_tokens:
            return Stop("maxTurnInputTokens", TurnStop.MAX_TOKENS)
        if (
            limits.max_turn_cost_usd is not None
            and self.price is not None
            and self.cost_usd >= limits.max_turn_cost_usd
        ):
            return Stop("maxTurnCostUsd")
        return CONTINUE

    def count_request(self, model: str | None = None) -> int:
        """Count at dispatch; returns the request's 1-based number in this turn."""
        self.model_requests += 1
        if model is not None:
            self.request_models.append(model)
        return self.model_requests

    def requests_left(self) -> int:
        return self.limits.max_turn_requests - self.model_requests

    def add_usage(self, usage: Usage) -> float:
        """Sum one finished request's tokens into the turn; returns its cost (0 without a price)."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_input_tokens += usage.cache_read_input_tokens
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens
        cost = self.price.cost(usage) if self.price is not None else 0.0
        self.cost_usd += cost
        return cost

    def tool_allowance(self, batch: int) -> int:
        """How many of a batch of `batch` tool calls may still start (the rest are skipped)."""
        cap = self.limits.max_tool_calls
        if cap is None:
            return batch
        return max(0, min(batch, cap - self.tool_calls))

    def after_tools(self) -> Decision:
        """After a batch: did it exhaust the tool-call budget, or repeat itself once too often?"""
        if self.repeats.should_stop(self.last_repeat):
            return Stop("repeatedToolCall")
        cap = self.limits.max_tool_calls
        if cap is not None and self.tool_calls_skipped and self.tool_calls >= cap:
            return Stop("maxToolCalls")
        return CONTINUE

    def seconds_left(self) -> float | None:
        cap = self.limits.max_turn_seconds
        return None if cap is None else cap - (self.clock() - self.started)

    def elapsed_ms(self) -> int:
        return int((self.clock() - self.started) * 1000)
