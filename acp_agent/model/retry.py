"""RetryPolicy: whether a failed attempt is tried again, and after how long (docs/decisions.md D1).

The agent owns its retries (the SDK runs with `max_retries=0`) because only the agent knows whether
output of that request was already relayed (ACP chunks cannot be taken back) and how much time
the turn has left. Pure logic: no I/O, the jitter source is injected.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

__all__ = [
    "RETRYABLE_ERROR_TYPES",
    "RETRYABLE_STATUSES",
    "Failure",
    "GiveUp",
    "Retry",
    "RetryDecision",
    "RetryPolicy",
    "asked_delay",
    "should_retry",
]

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Retryable 4xx statuses; every status >= 500 is retryable as well."""

RETRYABLE_ERROR_TYPES = frozenset(
    {
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        # Bedrock's exception frames (botocore's bedrock-runtime ResponseStream)
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
        "modelTimeoutException",
    }
)
"""Error types of a mid-stream `error` event (or a Bedrock exception frame) worth another attempt."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt, as the policy needs to see it.

    `status` is the HTTP status of an error response, None for a connection error, a stall, or
    a mid-stream `error` event (then `error_type` is that event's type). `reason` is a short
    human description used in logs and error messages; `api_message` is the body's
    `error.message` as the API sent it (redacted), for the one rule that needs it
    (`model/anthropic.py:prompt_too_long`).
    """

    reason: str
    status: int | None = None
    error_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    api_message: str | None = None

    @property
    def is_retryable(self) -> bool:
        """What the API's `x-should-retry` says, when it says `true` or `false` (the SDK obeys it
        for any status); else transient: 408/409/429/5xx, a connection error or stall, or a
        retryable error event."""
        asked = should_retry(self.headers)
        if asked is not None:
            return asked
        if self.status is not None:
            return self.status in RETRYABLE_STATUSES or self.status >= 500
        if self.error_type is not None:
            return self.error_type in RETRYABLE_ERROR_TYPES
        return True


@dataclass(frozen=True, slots=True)
class Retry:
    """Try the identical request again after `delay` seconds."""

    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class GiveUp:
    """Stop: `reason` says why; `transient` tells the caller that trying later may still help."""

    reason: str
    transient: bool


RetryDecision = Retry | GiveUp


def should_retry(headers: Mapping[str, str]) -> bool | None:
    """The API's own verdict in `x-should-retry`: True for `true`, False for `false`, else None.

    It overrides the status rules either way, as in the SDK's `_should_retry`; the house rules
    still bound it (nothing relayed, `--max-retries`, the turn's time).
    """
    for name, value in headers.items():
        if name.lower() == "x-should-retry":
            verdict = value.strip().lower()
            return verdict == "true" if verdict in ("true", "false") else None
    return None


def asked_delay(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """The delay the server asked for: `retry-after-ms`, then `retry-after` (seconds or a date).

    Values that do not parse or are not above zero count as no request, as in the SDK.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        ms = float(lowered["retry-after-ms"])
    except (KeyError, ValueError):
        pass
    else:
        if ms > 0:
            return ms / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now()
        except (TypeError, ValueError, IndexError):
            return None
    return seconds if seconds > 0 else None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retry transient failures, only before output was relayed, within the turn's time.

    Delay: the server's `retry-after-ms`/`retry-after` when given, else `base_delay · 2^retries`
    times a jitter in (0.75, 1], never above `max_backoff`. Every delay is capped at
    min(`max_delay`, the time left in the turn); a server asking for longer than that cap makes
    the policy give up at once, saying how long the API asked to wait.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_backoff: float = 8.0
    max_delay: float = 20.0
    random: Callable[[], float] = _random.random
    now: Callable[[], float] = time.time

    def decide(
        self, failure: Failure, *, retries_taken: int, relayed: bool, time_left: float | None = None
    ) -> RetryDecision:
        """Decide about one failed attempt; `retries_taken` counts retries already made."""
        if relayed:
            return GiveUp(
                f"{failure.reason} (after output was relayed, so not retried)", failure.is_retryable
            )
        if not failure.is_retryable:
            return GiveUp(failure.reason, transient=False)
        if retries_taken >= self.max_retries:
            tries = "retry" if self.max_retries == 1 else "retries"
            return GiveUp(f"{failure.reason} (gave up after {self.max_retries} {tries})", transient=True)
        cap = self.max_delay if time_left is None else min(self.max_delay, time_left)
        if cap <= 0:
            return GiveUp(f"{failure.reason} (no time left in the turn to retry)", transient=True)
        asked = asked_delay(failure.headers, now=self.now)
        if asked is not None:
            if asked > cap:
                return GiveUp(
                    f"{failure.reason} (the API asked to wait {asked:g} s, more than the {cap:g} s allowed)",
                    transient=True,
                )
            return Retry(asked, failure.reason)
        backoff = min(self.base_delay * 2**retries_taken, self.max_backoff)
        jittered = backoff * (1 - 0.25 * self.random())
        return Retry(min(jittered, cap), failure.reason)
