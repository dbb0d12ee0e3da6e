"""Hypothesis profiles: how many examples a property test runs.

- `ci` (the default): every property test runs the count written next to it (`examples(500)` is
  500); a test that names none runs Hypothesis's 100.
- `fast` (`make test-fast`): a tenth of that, for the edit-test loop.

Choose one with `--hypothesis-profile=NAME` or `HYPOTHESIS_PROFILE=NAME` (the option wins). Both
turn the deadline and the `too_slow` health check off (decisions D5): a test that drives a
subprocess, or runs on a loaded 2-core box, measures behaviour, not speed (`too_slow` times the
generation of the first examples on the wall clock, which a loaded box stretches).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["CI_EXAMPLES", "examples", "load_profile"]

CI_EXAMPLES = 100
"""The `ci` profile's default count (Hypothesis's own); `examples()` scales against it."""

_LOADED_BOX = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=CI_EXAMPLES, **_LOADED_BOX)
settings.register_profile("fast", max_examples=CI_EXAMPLES // 10, **_LOADED_BOX)


def load_profile() -> None:
    """Load `$HYPOTHESIS_PROFILE` (default `ci`); pytest's `--hypothesis-profile` loads later and wins."""
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")


def examples(ci_count: int) -> int:
    """A property test's example count: `ci_count` under `ci`, scaled down as the loaded profile's
    default is (at least 1). Call it in `@settings(...)`: test modules import after the profile loads."""
    return max(1, ci_count * settings().max_examples // CI_EXAMPLES)
