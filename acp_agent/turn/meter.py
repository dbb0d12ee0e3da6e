"""The turn meter: what a prompt turn has spent, and whether it may spend more. Pure, no I/O.

Vocabulary (docs/decisions.md C1):
- prompt turn: one `session/prompt`, from request to response. Every counter here is per prompt turn.
- model request: one logical Messages API call issued by the loop.
- attempt: one HTTP exchange; a model request has 1 + retries attempts.
- tool call: one tool_use block the agent acts on (executed, denied, failed or skipped).
- step: one model request plus the tool batch it produced (logs only).

Reset is a new meter: each `session/prompt` builds a fresh `TurnMeter`, so nothing leaks between
turns. Check before dispatch, count at dispatch: with a limit of N the API sees exactly N requests.

The meter owns its state: its fields are read from outside, and changed only through the methods
below, each named for what happened (`tool_started`, `tokens_used`, ...); a unit test fails on any
assignment to a meter field elsewhere.

A limit that ends the turn is raised (`LimitReached`) where it is found and caught once, at the top
of the turn (`turn/driver.py`), as mini-swe-agent does: the stop crosses the runner and the strategy
driving it without each level checking an outcome. Three budgets do not take that shape:
- the wall clock (`maxTurnSeconds`) is a cancel scope around the turn body, because it must
  interrupt a request or a tool mid-await, where no check runs;
- compaction asks `exhausted()` as a question: a budget that forbids its request skips the
  compaction instead of ending the turn;
- the tool-call budget inside a batch is a number (`tool_allowance`): the calls that fit run, the
  rest are answered "not executed", and only then, with the history valid, is the limit raised.
The names these limits and stops have in ACP's `_meta` record are given in one place,
`turn/record.py`; this package knows only `Limit` and `TurnStop`.

One meter for the tree (docs/decisions.md D27): a subagent (`turn/subagents/task.py`) counts with a
child meter (`TurnMeter.child`) that passes every request, tool call, retry and token on to the
turn's meter and asks the turn's budgets before each request, synchronously, so children running
at once can never send more than the turn allows. The child keeps its own figures (the record's
per-subagent breakdown), its own repeat detector (a stuck loop is one conversation) and its own
cap on requests: its share of what was left when it started.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp_agent.errors import AgentError
from acp_agent.limits import Limits
from acp_agent.model.base import Usage
from acp_agent.model.pricing import Price
from acp_agent.model.server_tools import search_allowance
from acp_agent.turn.repeats import RepeatDetector
from acp_agent.turn.stop import TurnStop

__all__ = ["Limit", "LimitReached", "Subagent", "TurnMeter"]


class Limit(enum.Enum):
    """A per-turn budget that can end a turn, with every name it goes by (the one table of them):
    what ran out, in `LimitReached`'s message (`what`); its unit, as the user is told it (`unit`);
    the `Limits` field that sets it (`setting`; `max_trials` is the verify and phased strategies'
    own); and its name in the turn record's `limit` (`record_name`, C3)."""

    REQUESTS = ("requests", "model requests", "max_turn_requests", "maxTurnRequests")
    TOOL_CALLS = ("tool calls", "tool calls", "max_tool_calls", "maxToolCalls")
    SECONDS = ("seconds", "seconds", "max_turn_seconds", "maxTurnSeconds")
    OUTPUT_TOKENS = ("output tokens", "output tokens", "max_turn_output_tokens", "maxTurnOutputTokens")
    INPUT_TOKENS = ("input tokens", "input tokens", "max_turn_input_tokens", "maxTurnInputTokens")
    COST = ("cost", "USD", "max_turn_cost_usd", "maxTurnCostUsd")
    REPEATS = ("repeated tool call", "identical tool calls", "repeat_limit", "repeatedToolCall")
    TRIALS = ("trials", "failed verifications", "max_trials", "maxTrials")
    """Failed verifications (the verify and phased strategies)."""

    what: str
    unit: str
    setting: str
    record_name: str

    def __init__(self, what: str, unit: str, setting: str, record_name: str) -> None:
        self.what, self.unit, self.setting, self.record_name = what, unit, setting, record_name

    @property
    def stop(self) -> TurnStop:
        """How a turn this limit ends stops: a token budget as max_tokens, the others as a limit."""
        return TurnStop.MAX_TOKENS if self in _TOKEN_LIMITS else TurnStop.LIMIT


_TOKEN_LIMITS = frozenset({Limit.OUTPUT_TOKENS, Limit.INPUT_TOKENS})


class LimitReached(AgentError):
    """A budget ran out: raised where it is found, caught once by the turn's driver."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(f"the turn's {limit.what} budget ran out")
        self.limit = limit


@dataclass(slots=True)
class TurnMeter:
    """Counters of one prompt turn, consulted before each request and after each tool batch."""

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    price: Price | None = None
    """The model's price, when known: cost is then reported and its budget enforced."""
    started: float = 0.0
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
    web_searches: int = 0
    """Web searches the API ran for the turn's requests (`usage.server_tool_use`)."""
    web_fetches: int = 0
    model_seconds: float = 0.0
    model_stop_reason: str | None = None
    phase: str = "model"
    """What the turn is doing now (model, tools, permission, verify): reported as abortedDuring."""
    cost_usd: float = 0.0
    wrapped_up: bool = False
    request_models: list[str] = field(default_factory=list)
    """The model of each request, in order (a session may switch models between turns)."""
    last_repeat: int = 0
    """How often the latest tool batch has been seen, identical, in this turn."""
    _repeats: RepeatDetector = field(default_factory=RepeatDetector)
    parent: TurnMeter | None = None
    """The turn's meter, when this one counts a subagent: every count goes to both, and the
    budgets asked are the turn's."""
    share: int | None = None
    """A subagent's own cap on model requests (its share of what the turn had left)."""
    subagents: list[Subagent] = field(default_factory=list)
    """The turn's subagents, in the order they started (the record's breakdown)."""
    hook_runs: int = 0
    """Hook commands run for the turn (`turn/hooks.py`): never model requests."""
    hooks_blocked: int = 0
    hook_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not self.started:
            self.started = self.clock()
        self._repeats = RepeatDetector(self.limits.repeat_limit)

    # ── model requests ──────────────────────────────────────────────────────────────────────
    def exhausted(self) -> Limit | None:
        """The budget that forbids another model request, or None when one may be sent."""
        if self.parent is not None:  # a subagent: the turn's budgets, then its own share
            limit = self.parent.exhausted()
            if limit is None and self.requests_left() <= 0:
                limit = Limit.REQUESTS
            return limit
        limits = self.limits
        if self.model_requests >= limits.max_turn_requests:
            return Limit.REQUESTS
        if limits.max_turn_output_tokens is not None and self.output_tokens >= limits.max_turn_output_tokens:
            return Limit.OUTPUT_TOKENS
        if limits.max_turn_input_tokens is not None and self.input_tokens >= limits.max_turn_input_tokens:
            return Limit.INPUT_TOKENS
        if (
            limits.max_turn_cost_usd is not None
            and self.price is not None
            and self.cost_usd >= limits.max_turn_cost_usd
        ):
            return Limit.COST
        return None

    def start_request(self, model: str | None = None) -> int:
        """Check before dispatch, count at dispatch: returns the request's 1-based number in the turn.

        Raises:
            LimitReached: a budget forbids another request (it is not counted).
        """
        limit = self.exhausted()
        if limit is not None:
            raise LimitReached(limit)
        if self.parent is not None:
            self.parent.start_request(model)
        self.model_requests += 1
        if model is not None:
            self.request_models.append(model)
        return self.model_requests

    def requests_left(self) -> int:
        if self.parent is None:
            return self.limits.max_turn_requests - self.model_requests
        left = self.parent.requests_left() - 1  # the turn's last request is its own loop's
        return left if self.share is None else min(left, self.share - self.model_requests)

    def share_spent(self) -> bool:
        """Whether a subagent used its whole share of requests (its own cap, not the turn's)."""
        return self.share is not None and self.model_requests >= self.share

    def web_search_allowance(self) -> int | None:
        """The search tool's `max_uses` for the next request: within what is left of
        `maxWebSearches` (`model/server_tools.py:search_allowance`); 0: no search tool."""
        if self.parent is not None:  # a subagent searches within what is left of the turn's
            return self.parent.web_search_allowance()
        return search_allowance(self.limits.max_web_searches, self.web_searches)

    def retry_scheduled(self) -> None:
        """An attempt failed before any output and will be tried again (a retry, not a request)."""
        self.retries += 1
        if self.parent is not None:
            self.parent.retry_scheduled()

    def tokens_used(self, usage: Usage, cost: float | None = None) -> float:
        """Sum one request's tokens into the turn; returns its cost (0 without a price). A
        subagent's meter prices them at its own model's price and hands the turn that `cost`."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_input_tokens += usage.cache_read_input_tokens
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens
        self.web_searches += usage.web_search_requests
        self.web_fetches += usage.web_fetch_requests
        if cost is None:
            cost = self.price.cost(usage) if self.price is not None else 0.0
        self.cost_usd += cost
        if self.parent is not None:
            self.parent.tokens_used(usage, cost)
        return cost

    def model_time_spent(self, seconds: float) -> None:
        """A request took `seconds`, from sending it to its last event (or its failure)."""
        self.model_seconds += seconds
        if self.parent is not None:
            self.parent.model_time_spent(seconds)

    def model_stopped(self, stop_reason: str) -> None:
        """The model ended a reply with `stop_reason` (the API's own word)."""
        self.model_stop_reason = stop_reason

    def continued(self) -> None:
        """A `pause_turn` reply is continued: the next request is counted too (C2.4)."""
        self.continuations += 1
        if self.parent is not None:
            self.parent.continued()

    def wrapping_up(self) -> None:
        """The last allowed request is spent on a summary without tools (--on-limit wrap_up, C7)."""
        self.wrapped_up = True

    # ── tool calls ──────────────────────────────────────────────────────────────────────────
    def hook_ran(self, seconds: float, *, blocked: bool) -> None:
        """A hook command ran for `seconds` (and blocked what it was asked about, if `blocked`)."""
        self.hook_runs += 1
        self.hooks_blocked += blocked
        self.hook_seconds += seconds
        if self.parent is not None:
            self.parent.hook_ran(seconds, blocked=blocked)

    def tool_allowance(self, batch: int) -> int:
        """How many of a batch of `batch` tool calls may still start (the rest are skipped)."""
        if self.parent is not None:
            return self.parent.tool_allowance(batch)
        cap = self.limits.max_tool_calls
        if cap is None:
            return batch
        return max(0, min(batch, cap - self.tool_calls))

    def tool_started(self) -> None:
        """A call counts when its execution starts, whatever it then returns (C2.5)."""
        self.tool_calls += 1
        if self.parent is not None:
            self.parent.tool_started()

    def tool_failed(self) -> None:
        self.tool_calls_failed += 1
        if self.parent is not None:
            self.parent.tool_failed()

    def tool_denied(self) -> None:
        """The user declined the call: reported, not counted against the budget."""
        self.tool_calls_denied += 1
        if self.parent is not None:
            self.parent.tool_denied()

    def tool_skipped(self) -> None:
        """The call did not fit the budget and was answered "not executed"."""
        self.tool_calls_skipped += 1
        if self.parent is not None:
            self.parent.tool_skipped()

    def batch_finished(self, calls: list[tuple[str, dict[str, Any], str]]) -> str | None:
        """One batch of (name, input, result text), one observation (C4).

        Returns the note to append to the batch's last result when it has repeated itself often
        enough to nudge the model, else None.
        """
        self.last_repeat = count = self._repeats.observe(calls)
        return self._repeats.nudge(count) if self._repeats.should_nudge(count) else None

    def check_batch(self) -> None:
        """After a batch: did it repeat itself once too often, or exhaust the tool-call budget?

        Raises:
            LimitReached: REPEATS or TOOL_CALLS.
        """
        if self._repeats.should_stop(self.last_repeat):
            raise LimitReached(Limit.REPEATS)
        tree = self.parent or self  # the tool-call budget is the turn's
        cap = self.limits.max_tool_calls
        if cap is not None and tree.tool_calls_skipped and tree.tool_calls >= cap:
            raise LimitReached(Limit.TOOL_CALLS)

    # ── what the turn is doing (reported as abortedDuring on a cancel) ──────────────────────
    def waiting_for_model(self) -> None:
        self.phase = "model"

    def running_tools(self) -> None:
        self.phase = "tools"

    def asking_permission(self) -> None:
        self.phase = "permission"

    def verifying(self) -> None:
        self.phase = "verify"

    # ── the clock ───────────────────────────────────────────────────────────────────────────
    def seconds_left(self) -> float | None:
        cap = self.limits.max_turn_seconds
        return None if cap is None else cap - (self.clock() - self.started)

    def deadline(self) -> float | None:
        """The turn's end on `time.monotonic()`'s clock, carried by each of its model requests."""
        left = self.seconds_left()
        return None if left is None else time.monotonic() + left

    def elapsed_ms(self) -> int:
        return int((self.clock() - self.started) * 1000)

    # ── subagents ───────────────────────────────────────────────────────────────────────────
    def child(
        self,
        description: str,
        together: int = 1,
        *,
        agent: str | None = None,
        model: str | None = None,
        price: Price | None = None,
    ) -> Subagent:
        """A subagent starts: its meter counts into this one, with a share of the requests left.

        A subagent never takes the turn's last request (this loop keeps it, to read the answers),
        and the `together` subagents starting at once divide the rest (at least 1 each while any
        is spare; the turn's budget bounds them all). A share of 0: the subagent cannot run.
        `agent` is the custom agent it runs as; `model` the model it runs on when that is not the
        turn's, and `price` that model's (None: unknown). Its costs then count at that price.
        """
        spare = self.requests_left() - 1
        share = max(1, spare // max(1, together)) if spare > 0 else 0
        own = self.price if model is None else price
        meter = TurnMeter(self.limits, self.clock, own, self.started, parent=self, share=share)
        subagent = Subagent(description, meter, agent=agent, model=model)
        self.subagents.append(subagent)
        return subagent


@dataclass(slots=True)
class Subagent:
    """One subagent of the turn: what it was asked, its meter, and how it ended (None: running)."""

    description: str
    meter: TurnMeter
    stop: TurnStop | None = None
    limit: Limit | None = None
    """The budget that ended it, if one did (its share is reported as maxTurnRequests)."""
    error: str | None = None
    """Why it failed, when it did (its answer is then an error result)."""
    agent: str | None = None
    """The custom agent it ran as (`subagent_type`), if any."""
    model: str | None = None
    """The model its requests went to, when it is not the turn's."""

    def ended(self, stop: TurnStop, limit: Limit | None = None, error: str | None = None) -> None:
        self.stop, self.limit, self.error = stop, limit, error
