"""The turn meter's rules, table-driven: check before dispatch, count at dispatch, fresh per turn;
each change through a method named for what happened, and no field written from outside."""

from __future__ import annotations

import ast
import dataclasses
import time
from pathlib import Path

import pytest

from acp_agent.limits import Limits, fields_by_name
from acp_agent.model.base import ModelRequest, Usage
from acp_agent.model.pricing import Price
from acp_agent.turn.meter import Limit, LimitReached, TurnMeter
from acp_agent.turn.record import STOP_REASONS, TurnRecord
from acp_agent.turn.stop import TurnStop

REPO = Path(__file__).resolve().parents[2]


def spend(meter: TurnMeter) -> int:
    """Dispatch requests until the meter refuses one; returns how many were sent."""
    sent = 0
    while True:
        try:
            meter.start_request()
        except LimitReached:
            return sent
        sent += 1
        assert sent < 10_000


def reached(meter: TurnMeter, check: str = "start_request") -> Limit | None:
    """The limit `check` raises, or None when it lets the turn go on."""
    try:
        getattr(meter, check)()
    except LimitReached as exc:
        return exc.limit
    return None


@pytest.mark.parametrize("limit", [1, 2, 3, 50])
def test_exactly_n_requests_are_allowed(limit: int) -> None:
    meter = TurnMeter(Limits(max_turn_requests=limit))
    assert spend(meter) == limit
    assert meter.model_requests == limit  # the refused request was not counted
    assert meter.exhausted() is Limit.REQUESTS


def test_a_request_is_numbered_and_its_model_kept() -> None:
    meter = TurnMeter(Limits())
    assert meter.start_request("claude-a") == 1
    assert meter.start_request("claude-b") == 2
    assert meter.request_models == ["claude-a", "claude-b"]
    assert meter.requests_left() == 48


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
    for _ in range(used):
        meter.tool_started()
    assert meter.tool_allowance(batch) == allowed


def test_skipped_calls_at_the_cap_stop_the_turn() -> None:
    meter = TurnMeter(Limits(max_tool_calls=3))
    for _ in range(3):
        meter.tool_started()
    assert reached(meter, "check_batch") is None  # at the cap, but nothing was skipped
    meter.tool_skipped()
    meter.tool_skipped()
    assert reached(meter, "check_batch") is Limit.TOOL_CALLS
    assert meter.tool_calls_skipped == 2


@pytest.mark.parametrize(
    ("limits", "usage", "limit"),
    [
        (Limits(max_turn_output_tokens=100), Usage(10, 120), Limit.OUTPUT_TOKENS),
        (Limits(max_turn_input_tokens=100), Usage(120, 10), Limit.INPUT_TOKENS),
        (Limits(max_turn_output_tokens=100), Usage(10, 99), None),
    ],
)
def test_token_budgets_refuse_the_next_request(limits: Limits, usage: Usage, limit: Limit | None) -> None:
    meter = TurnMeter(limits)
    meter.start_request()
    meter.tokens_used(usage)
    assert reached(meter) is limit


def test_a_token_limit_stops_max_tokens_and_the_others_as_a_limit() -> None:
    assert {limit for limit in Limit if limit.stop is TurnStop.MAX_TOKENS} == {
        Limit.OUTPUT_TOKENS,
        Limit.INPUT_TOKENS,
    }
    assert Limit.REQUESTS.stop is Limit.TRIALS.stop is TurnStop.LIMIT


def test_cost_is_summed_and_its_budget_enforced_only_with_a_price() -> None:
    usage = Usage(1_000_000, 0)
    priced = TurnMeter(Limits(max_turn_cost_usd=2.5), price=Price(input=3.0, output=15.0))
    assert priced.tokens_used(usage) == pytest.approx(3.0)
    assert reached(priced) is Limit.COST
    unpriced = TurnMeter(Limits(max_turn_cost_usd=2.5))
    assert unpriced.tokens_used(usage) == 0.0
    assert reached(unpriced) is None


def test_usage_is_summed_over_requests() -> None:
    meter = TurnMeter(Limits())
    meter.tokens_used(Usage(1000, 10, 5, 2))
    meter.tokens_used(Usage(1100, 20, 0, 0))
    assert (meter.input_tokens, meter.output_tokens) == (2100, 30)
    assert (meter.cache_read_input_tokens, meter.cache_creation_input_tokens) == (5, 2)


def test_context_size_is_one_requests_total_not_a_sum() -> None:
    assert Usage(1000, 50, 200, 10).context_tokens == 1260


def test_each_event_moves_its_own_counter() -> None:
    meter = TurnMeter(Limits())
    meter.retry_scheduled()
    meter.continued()
    meter.tool_started()
    meter.tool_failed()
    meter.tool_denied()
    meter.model_time_spent(0.25)
    meter.model_time_spent(0.5)
    meter.model_stopped("tool_use")
    meter.wrapping_up()
    assert (meter.retries, meter.continuations, meter.tool_calls) == (1, 1, 1)
    assert (meter.tool_calls_failed, meter.tool_calls_denied, meter.tool_calls_skipped) == (1, 1, 0)
    assert meter.model_seconds == pytest.approx(0.75)
    assert meter.model_stop_reason == "tool_use" and meter.wrapped_up


def test_what_the_turn_is_doing_is_what_a_cancel_reports() -> None:
    meter = TurnMeter(Limits())
    seen = [meter.phase]
    for step in (meter.asking_permission, meter.running_tools, meter.verifying, meter.waiting_for_model):
        step()
        seen.append(meter.phase)
    assert seen == ["model", "permission", "tools", "verify", "model"]


def test_a_batch_repeated_gets_a_nudge_then_stops_the_turn() -> None:
    meter = TurnMeter(Limits(repeat_limit=4))
    batch = [("read_file", {"path": "a"}, "same text")]
    notes = [meter.batch_finished(batch) for _ in range(2)]
    assert notes == [None, None] and reached(meter, "check_batch") is None
    third = meter.batch_finished(batch)
    assert third is not None and "3 times" in third
    assert reached(meter, "check_batch") is None
    assert meter.batch_finished(batch) is None  # the 4th is the stop, not another nudge
    assert reached(meter, "check_batch") is Limit.REPEATS


def test_a_changing_result_is_not_a_repeat() -> None:
    meter = TurnMeter(Limits(repeat_limit=2))
    for n in range(5):
        meter.batch_finished([("read_file", {"path": "a"}, f"text {n}")])
        assert reached(meter, "check_batch") is None


def test_wall_clock_is_measured_from_the_injected_clock() -> None:
    now = [100.0]
    meter = TurnMeter(Limits(max_turn_seconds=60), clock=lambda: now[0])
    now[0] = 130.0
    assert meter.seconds_left() == pytest.approx(30)
    assert meter.elapsed_ms() == 30_000


def test_the_deadline_a_request_carries_is_the_turns_end() -> None:
    now = [100.0]
    meter = TurnMeter(Limits(max_turn_seconds=60), clock=lambda: now[0])
    now[0] = 110.0
    before = time.monotonic()  # the deadline is on the monotonic clock: bracket it, never time it
    deadline = meter.deadline()
    after = time.monotonic()
    assert deadline is not None and before + 50 <= deadline <= after + 50
    request = ModelRequest(model="m", max_tokens=1, messages=[], deadline=deadline)
    left = request.seconds_left()
    assert deadline - time.monotonic() <= left <= deadline - after
    assert TurnMeter(Limits(max_turn_seconds=None)).deadline() is None
    assert (
        ModelRequest(model="m", max_tokens=1, messages=[], deadline=time.monotonic() - 5).seconds_left() == 0
    )


# ── the record is where the loop's words become ACP's ───────────────────────────────────────


def test_each_limit_is_set_by_its_own_setting_and_named_by_it() -> None:
    """The one table of limits: a `Limits` field each (but the strategies' `max_trials`), whose
    session/new `_meta` name is the record's name for the limit."""
    aliases = fields_by_name(Limits)
    assert [limit for limit in Limit if limit.setting not in aliases] == [Limit.TRIALS]
    assert {aliases[limit.setting] for limit in Limit if limit.setting in aliases} >= {
        limit.record_name for limit in Limit if limit not in (Limit.REPEATS, Limit.TRIALS)
    }
    assert str(LimitReached(Limit.REPEATS)) == "the turn's repeated tool call budget ran out"


def test_every_limit_and_stop_has_its_record_name() -> None:
    assert set(STOP_REASONS) == set(TurnStop)
    assert len({limit.record_name for limit in Limit}) == len(Limit)
    assert STOP_REASONS[TurnStop.LIMIT] == "max_turn_requests"
    assert set(STOP_REASONS.values()) <= {
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    }


@pytest.mark.parametrize(
    ("stop", "limit", "error", "reason", "name"),
    [
        (TurnStop.END_TURN, None, None, "end_turn", None),
        (Limit.OUTPUT_TOKENS.stop, Limit.OUTPUT_TOKENS, None, "max_tokens", "maxTurnOutputTokens"),
        (Limit.TRIALS.stop, Limit.TRIALS, None, "max_turn_requests", "maxTrials"),
        (TurnStop.END_TURN, None, "boom", "error", None),
    ],
)
def test_the_record_spells_the_stop_and_the_limit(
    stop: TurnStop, limit: Limit | None, error: str | None, reason: str, name: str | None
) -> None:
    record = TurnRecord.from_meter(
        TurnMeter(Limits()), turn_id="t", stop=stop, streaming=False, limit=limit, error=error
    )
    meta = record.to_meta()
    assert meta["stopReason"] == reason and meta.get("limit") == name


# ── nothing outside the meter writes its fields ─────────────────────────────────────────────

METER_FIELDS = frozenset(f.name for f in dataclasses.fields(TurnMeter))
CONTAINER_FIELDS = frozenset(
    f.name for f in dataclasses.fields(TurnMeter) if f.default_factory is not dataclasses.MISSING
)
"""Fields holding a mutable object (the request models, the repeat detector): a call on one writes."""


def _is_meter(node: ast.expr) -> bool:
    """`meter`, `self.meter`, `_meter`...: an expression that names a meter."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_").endswith("meter")


def meter_writes(source: str) -> list[str]:
    """`line: target` of every assignment to a meter's field, and of every call on a field's value."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in CONTAINER_FIELDS
        ):
            targets = [node.func.value]  # meter.request_models.append(...)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            targets = [node.args[0]] if node.args and _is_meter(node.args[0]) else []
            found += [f"{node.lineno}: setattr"] * len(targets)
            continue
        found += [
            f"{node.lineno}: {ast.unparse(target)}"
            for target in targets
            for part in ast.walk(target)
            if isinstance(part, ast.Attribute) and part.attr in METER_FIELDS and _is_meter(part.value)
        ]
    return found


def test_the_check_finds_each_kind_of_write() -> None:
    source = (
        "meter.retries += 1\n"
        "self.meter.phase = 'x'\n"
        "meter.tool_calls, meter.tool_calls_skipped = 3, 2\n"
        "meter.request_models.append('m')\n"
        "meter._repeats.observe([])\n"
        "setattr(meter, 'retries', 2)\n"
        "meter.retry_scheduled()\n"
        "n = meter.retries\n"
        "policy.retries = 3\n"
        "meter.limits.model_dump()\n"
    )
    assert [w.split(":")[0] for w in meter_writes(source)] == ["1", "2", "3", "3", "4", "5", "6"]


def test_no_module_outside_the_meter_writes_a_meter_field() -> None:
    meter_module = REPO / "acp_agent" / "turn" / "meter.py"
    writes = {
        f"{path.relative_to(REPO)}:{write}"
        for root in ("acp_agent", "tests", "bench")
        for path in sorted((REPO / root).rglob("*.py"))
        if path != meter_module
        for write in meter_writes(path.read_text(encoding="utf-8"))
    }
    assert not writes, "change the meter through its methods: " + ", ".join(sorted(writes))
