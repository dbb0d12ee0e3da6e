"""The turn meter's rules, table-driven: check before dispatch, count at dispatch, fresh per turn."""

from __future__ import annotations

import pytest

from acp_agent.config import Limits
from acp_agent.model.base import Usage
from acp_agent.turn.governor import Continue, Stop, TurnMeter
from acp_agent.turn.stop import TurnStop


def spend(meter: TurnMeter) -> int:
    """Dispatch requests until the meter says stop; returns how many were sent."""
    sent = 0
    while isinstance(meter.before_request(), Continue):
        meter.count_request()
        sent += 1
        assert sent < 10_000
    return sent


@pytest.mark.parametrize("limit", [1, 2, 3, 50])
def test_exactly_n_requests_are_allowed(limit: int) -> None:
    meter = TurnMeter(Limits(max_turn_requests=limit))
    assert spend(meter) == limit
    assert meter.before_request() == Stop("maxTurnRequests")


def test_a_new_meter_is_a_fresh_budget() -> None:
    limits = Limits(max_turn_requests=3)
    first = TurnMeter(limits)
    spend(first)
    second = TurnMeter(limits)
    assert second.model_requests == 0
    assert spend(second) == 3


@pytest.mark.parametrize(
    ("cap", "used", "batch", "allowed"),
    [(200, 0, 5, 5), (5, 2, 5, 3), (5, 5, 2, 0), (None, 1000, 7, 7)],
)
def test_tool_allowance_runs_the_prefix_that_fits(
    cap: int | None, used: int, batch: int, allowed: int
) -> None:
    meter = TurnMeter(Limits(max_tool_calls=cap))
    meter.tool_calls = used
    assert meter.tool_allowance(batch) == allowed


def test_skipped_calls_at_the_cap_stop_the_turn() -> None:
    meter = TurnMeter(Limits(max_tool_calls=3))
    meter.tool_calls, meter.tool_calls_skipped = 3, 2
    assert meter.after_tools() == Stop("maxToolCalls")
    meter.tool_calls_skipped = 0
    assert isinstance(meter.after_tools(), Continue)


def test_output_token_budget_stops_with_max_tokens() -> None:
    meter = TurnMeter(Limits(max_turn_output_tokens=100))
    meter.count_request()
    meter.add_usage(Usage(input_tokens=10, output_tokens=120))
    assert meter.before_request() == Stop("maxTurnOutputTokens", TurnStop.MAX_TOKENS)


def test_usage_is_summed_over_requests() -> None:
    meter = TurnMeter(Limits())
    meter.add_usage(Usage(1000, 10, 5, 2))
    meter.add_usage(Usage(1100, 20, 0, 0))
    assert (meter.input_tokens, meter.output_tokens) == (2100, 30)
    assert (meter.cache_read_input_tokens, meter.cache_creation_input_tokens) == (5, 2)


def test_context_size_is_one_requests_total_not_a_sum() -> None:
    assert Usage(1000, 50, 200, 10).context_tokens == 1260


def test_wall_clock_is_measured_from_the_injected_clock() -> None:
    now = [100.0]
    meter = TurnMeter(Limits(max_turn_seconds=60), clock=lambda: now[0])
    now[0] = 130.0
    assert meter.seconds_left() == pytest.approx(30)
    assert meter.elapsed_ms() == 30_000
