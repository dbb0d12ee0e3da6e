"""RetryPolicy: which failures are retried, when, and after how long (decisions D1)."""

from __future__ import annotations

import pytest

from acp_agent.model.retry import Failure, GiveUp, Retry, RetryPolicy, asked_delay

NO_JITTER = RetryPolicy(random=lambda: 0.0)


def fail(status: int | None = None, error_type: str | None = None, **headers: str) -> Failure:
    return Failure(
        "boom",
        status=status,
        error_type=error_type,
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    assert isinstance(NO_JITTER.decide(fail(status), retries_taken=0, relayed=False), Retry)


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 413, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    decision = NO_JITTER.decide(fail(status), retries_taken=0, relayed=False)
    assert decision == GiveUp("boom", transient=False)


def test_connection_errors_and_stalls_are_retried() -> None:
    assert NO_JITTER.decide(fail(), retries_taken=0, relayed=False) == Retry(0.5, "boom")


@pytest.mark.parametrize(
    ("error_type", "retried"),
    [
        ("overloaded_error", True),
        ("api_error", True),
        ("rate_limit_error", True),
        ("invalid_request_error", False),
        ("authentication_error", False),
    ],
)
def test_mid_stream_error_events_are_retried_by_type(error_type: str, retried: bool) -> None:
    decision = NO_JITTER.decide(fail(error_type=error_type), retries_taken=0, relayed=False)
    assert isinstance(decision, Retry) is retried


@pytest.mark.parametrize("failure", [fail(529), fail(), fail(error_type="overloaded_error")])
def test_nothing_is_retried_after_output_was_relayed(failure: Failure) -> None:
    decision = NO_JITTER.decide(failure, retries_taken=0, relayed=True)
    assert isinstance(decision, GiveUp)
    assert decision.transient
    assert "after output was relayed" in decision.reason


@pytest.mark.parametrize(
    ("max_retries", "taken", "retried"),
    [
        (2, 0, True),
        (2, 1, True),
        (2, 2, False),
        (0, 0, False),
        (1, 1, False),
    ],
)
def test_retries_are_bounded_by_max_retries(max_retries: int, taken: int, retried: bool) -> None:
    policy = RetryPolicy(max_retries=max_retries, random=lambda: 0.0)
    decision = policy.decide(fail(529), retries_taken=taken, relayed=False)
    assert isinstance(decision, Retry) is retried
    if not retried:
        assert isinstance(decision, GiveUp)
        assert f"gave up after {max_retries} retr" in decision.reason
        assert decision.transient


@pytest.mark.parametrize(
    ("taken", "jitter", "delay"),
    [
        (0, 0.0, 0.5),
        (1, 0.0, 1.0),
        (2, 0.0, 2.0),
        (3, 0.0, 4.0),
        (4, 0.0, 8.0),
        (5, 0.0, 8.0),
        (0, 1.0, 0.375),
        (1, 0.5, 0.875),
    ],
)
def test_backoff_doubles_with_jitter_and_a_ceiling(taken: int, jitter: float, delay: float) -> None:
    policy = RetryPolicy(max_retries=10, random=lambda: jitter)
    assert policy.decide(fail(500), retries_taken=taken, relayed=False) == Retry(delay, "boom")


@pytest.mark.parametrize(
    ("headers", "delay"),
    [
        ({"retry-after-ms": "10"}, 0.01),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),  # the ms header wins
        ({"Retry-After": "2"}, 2.0),  # header names are case-insensitive
        ({"retry-after": "soon"}, 0.5),  # unparsable: backoff
        ({"retry-after": "0"}, 0.5),  # not above zero: backoff
        ({"retry-after-ms": "-5"}, 0.5),
    ],
)
def test_the_servers_retry_after_is_honoured(headers: dict[str, str], delay: float) -> None:
    failure = Failure("busy", status=529, headers=headers)
    assert NO_JITTER.decide(failure, retries_taken=0, relayed=False) == Retry(delay, "busy")


def test_retry_after_may_be_an_http_date() -> None:
    now = 1_700_000_000.0  # Tue, 14 Nov 2023 22:13:20 GMT
    headers = {"retry-after": "Tue, 14 Nov 2023 22:13:24 GMT"}
    assert asked_delay(headers, now=lambda: now) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("asked", "time_left", "cap"),
    [
        ("30", None, "20"),  # beyond the 20 s ceiling
        ("5", 3.0, "3"),  # beyond the time left in the turn
    ],
)
def test_a_delay_beyond_the_cap_gives_up_at_once_naming_the_wait(
    asked: str, time_left: float | None, cap: str
) -> None:
    failure = Failure("HTTP 529", status=529, headers={"retry-after": asked})
    decision = NO_JITTER.decide(failure, retries_taken=0, relayed=False, time_left=time_left)
    assert isinstance(decision, GiveUp)
    assert f"asked to wait {asked} s" in decision.reason
    assert f"{cap} s allowed" in decision.reason


def test_backoff_is_capped_by_the_time_left_in_the_turn() -> None:
    decision = NO_JITTER.decide(fail(529), retries_taken=1, relayed=False, time_left=0.2)
    assert decision == Retry(0.2, "boom")


@pytest.mark.parametrize("time_left", [0.0, -1.0])
def test_no_retry_when_the_turn_has_no_time_left(time_left: float) -> None:
    decision = NO_JITTER.decide(fail(529), retries_taken=0, relayed=False, time_left=time_left)
    assert isinstance(decision, GiveUp)
    assert "no time left" in decision.reason


def test_the_default_jitter_stays_within_three_quarters_and_one() -> None:
    policy = RetryPolicy(max_retries=100)
    delays = [policy.decide(fail(500), retries_taken=0, relayed=False) for _ in range(200)]
    assert all(isinstance(d, Retry) and 0.375 <= d.delay <= 0.5 for d in delays)


@pytest.mark.parametrize(
    ("status", "header", "retried"),
    [
        (400, "true", True),  # the API's verdict wins over the status, as in the SDK
        (404, "TRUE", True),
        (529, "false", False),
        (500, " False ", False),
        (429, "maybe", True),  # neither true nor false: the status rules decide
        (400, "maybe", False),
    ],
)
def test_x_should_retry_overrides_the_status_rules(status: int, header: str, retried: bool) -> None:
    decision = NO_JITTER.decide(fail(status, x_should_retry=header), retries_taken=0, relayed=False)
    assert isinstance(decision, Retry) is retried
    if not retried:
        assert decision == GiveUp("boom", transient=False)


def test_x_should_retry_true_is_still_bounded_by_the_house_rules() -> None:
    asked = fail(400, x_should_retry="true")
    assert isinstance(NO_JITTER.decide(asked, retries_taken=0, relayed=True), GiveUp)
    spent = NO_JITTER.decide(asked, retries_taken=2, relayed=False)
    assert isinstance(spent, GiveUp) and "gave up after 2 retries" in spent.reason
    late = NO_JITTER.decide(asked, retries_taken=0, relayed=False, time_left=0)
    assert isinstance(late, GiveUp) and "no time left" in late.reason
