"""One meter for the tree (D27): a subagent's meter counts into the turn's, asks the turn's budgets
before each request, keeps the turn's last request for the parent, and has a share of its own."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_agent.limits import Limits
from acp_agent.model.base import Usage
from acp_agent.model.pricing import Price
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.stop import TurnStop


def dispatch(meter: TurnMeter) -> bool:
    """Try one request: True when it was sent (counted), False when a budget refused it."""
    try:
        meter.start_request("m")
    except LimitReached:
        return False
    return True


def test_a_childs_counts_go_to_the_turn_and_stay_its_own_too() -> None:
    turn = TurnMeter(Limits(), price=Price(input=3, output=15))
    turn.start_request("m")
    child = turn.child("look around").meter
    child.start_request("m")
    child.tokens_used(Usage(1000, 100, 50, 10))
    child.retry_scheduled()
    child.continued()
    child.tool_started()
    child.tool_failed()
    child.tool_denied()
    child.model_time_spent(0.5)
    assert (child.model_requests, child.tool_calls, child.input_tokens) == (1, 1, 1000)
    assert (turn.model_requests, turn.tool_calls, turn.input_tokens, turn.output_tokens) == (2, 1, 1000, 100)
    assert (turn.retries, turn.continuations, turn.tool_calls_failed, turn.tool_calls_denied) == (1, 1, 1, 1)
    assert turn.cache_read_input_tokens == 50 and turn.model_seconds == pytest.approx(0.5)
    assert turn.cost_usd == pytest.approx(child.cost_usd) and child.cost_usd > 0
    assert turn.request_models == ["m", "m"]


def test_the_share_divides_what_is_left_after_the_parents_last_request() -> None:
    turn = TurnMeter(Limits(max_turn_requests=11))
    turn.start_request()  # 10 left: 1 kept for the parent, 9 for three children
    shares = [turn.child(name, together=3).meter.share for name in "abc"]
    assert shares == [3, 3, 3]
    assert turn.child("alone").meter.share == 9
    last = TurnMeter(Limits(max_turn_requests=2))
    last.start_request()  # 1 left: the parent's, so no child may run
    assert last.child("late").meter.share == 0
    assert last.child("late").meter.exhausted() is Limit.REQUESTS


def test_a_child_stops_at_its_share_while_the_turn_has_more() -> None:
    turn = TurnMeter(Limits(max_turn_requests=20))
    turn.start_request()
    child = turn.child("x", together=2).meter  # share (19 - 1) // 2 = 9
    sent = 0
    while dispatch(child):
        sent += 1
    assert sent == child.share == 9 and child.share_spent()
    assert turn.exhausted() is None and turn.requests_left() == 10


@given(
    limit=st.integers(1, 30),
    children=st.integers(1, 6),
    greedy=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_children_in_any_interleaving_never_pass_the_turns_limit_nor_take_its_last_request(
    limit: int, children: int, greedy: bool, seed: int
) -> None:
    turn = TurnMeter(Limits(max_turn_requests=limit))
    assert dispatch(turn)  # the request whose reply asked for the children
    # greedy: each child is told it runs alone, so the shares add up to more than the turn has
    # and only the turn's own check, made at dispatch, holds them.
    running = [turn.child(f"c{i}", together=1 if greedy else children).meter for i in range(children)]
    order = random.Random(seed)
    while running:  # each step, one child (as a task would) dispatches or ends
        child = order.choice(running)
        if not dispatch(child):
            running.remove(child)
    spent_by_children = sum(s.meter.model_requests for s in turn.subagents)
    assert turn.model_requests == 1 + spent_by_children <= max(1, limit - 1)
    parent = 0
    while dispatch(turn):
        parent += 1
    assert parent >= (1 if limit > 1 else 0)  # the parent keeps one to read the answers
    assert turn.model_requests == limit  # and never more than the limit, in all


def test_a_childs_skipped_calls_end_the_turn_after_its_batch() -> None:
    turn = TurnMeter(Limits(max_tool_calls=2))
    child = turn.child("busy").meter
    assert child.tool_allowance(3) == 2
    child.tool_started()
    child.tool_started()
    child.tool_skipped()
    with pytest.raises(LimitReached) as in_child:
        child.check_batch()
    assert in_child.value.limit is Limit.TOOL_CALLS
    with pytest.raises(LimitReached) as in_turn:
        turn.check_batch()
    assert in_turn.value.limit is Limit.TOOL_CALLS


def test_repeats_are_seen_per_conversation() -> None:
    turn = TurnMeter(Limits(repeat_limit=2))
    batch = [("list_files", {}, "same")]
    first, second = turn.child("a").meter, turn.child("b").meter
    first.batch_finished(batch)
    second.batch_finished(batch)
    first.check_batch()
    second.check_batch()  # two subagents looking at the same thing are not a loop
    second.batch_finished(batch)
    with pytest.raises(LimitReached):
        second.check_batch()


def test_a_child_searches_the_web_within_what_is_left_of_the_turns_searches() -> None:
    turn = TurnMeter(Limits(max_web_searches=10))
    child = turn.child("web").meter
    child.tokens_used(Usage(10, 5, web_search_requests=7))
    assert (child.web_searches, turn.web_searches) == (7, 7)
    assert child.web_search_allowance() == turn.web_search_allowance() == 2  # 3 left: 2 a request
    sibling = turn.child("more").meter
    sibling.tokens_used(Usage(10, 5, web_search_requests=3))
    assert child.web_search_allowance() == 0  # the turn's 10 are spent, whoever spent them


def test_a_childs_phase_and_model_stop_are_its_own() -> None:
    turn = TurnMeter(Limits())
    turn.running_tools()
    child = turn.child("x").meter
    child.waiting_for_model()
    child.model_stopped("tool_use")
    assert (turn.phase, turn.model_stop_reason) == ("tools", None)


def test_the_record_has_each_subagent_and_the_trees_totals() -> None:
    turn = TurnMeter(Limits(max_turn_requests=10), price=Price(input=1, output=1))
    turn.start_request()
    done = turn.child("done")
    done.meter.start_request()
    done.meter.tokens_used(Usage(100, 10))
    done.ended(TurnStop.END_TURN)
    cut = turn.child("cut")
    cut.ended(Limit.REQUESTS.stop, Limit.REQUESTS)
    broken = turn.child("broken")
    broken.ended(TurnStop.END_TURN, error="boom")
    meta = TurnRecord.from_meter(turn, turn_id="t", stop=TurnStop.END_TURN, streaming=True).to_meta()
    assert meta["modelRequests"] == 2 and meta["inputTokens"] == 100
    first, second, third = meta["subagents"]
    assert first == {
        "description": "done",
        "stop": "end_turn",
        "requests": 1,
        "toolCalls": 0,
        "inputTokens": 100,
        "outputTokens": 10,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearches": 0,
        "costUsd": pytest.approx(0.00011),
    }
    assert (second["stop"], second["limit"]) == ("max_turn_requests", "maxTurnRequests")
    assert third["stop"] == "error"
    assert (
        "subagents"
        not in TurnRecord.from_meter(
            TurnMeter(Limits()), turn_id="t", stop=TurnStop.END_TURN, streaming=True
        ).to_meta()
    )
