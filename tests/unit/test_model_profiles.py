"""The model profiles and the fake's rules, both checked against the models' published figures.

The agent's table (`model/profiles.py`) and the fake's (`testing/rules/model_rules.py`) are written
apart on purpose; each is read back here against a third account of the same figures (`PUBLISHED`:
Anthropic's model pages and pricing, as of 2026-11), so neither can drift alone. A model added to
either table is added here too: `test_every_profile_is_checked_against_a_published_row` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from acp_agent.config import BUILTIN_MODELS
from acp_agent.model.base import Usage
from acp_agent.model.pricing import Price
from acp_agent.model.profiles import (
    EFFORTS,
    ProfileError,
    builtin_profile,
    doubtful_figures,
    load_prices,
    output_config,
    profile_from_api,
    thinking_param,
)
from acp_agent.testing.rules.model_rules import RULES

ADAPTIVE, DISABLED, ENABLED, BETWEEN_TOOLS = "adaptive", "disabled", "enabled", "between_tools"
K, M = 1_000, 1_000_000


@dataclass(frozen=True)
class Published:
    """One model's figures. Prices are USD per million tokens: input, output, a 5-minute cache
    write, a 1-hour cache write, a cache read; `long_prices` the same past a 100K-token prompt."""

    window: int
    max_output: int
    prices: tuple[float, float, float, float, float]
    min_cache: int | None  # the shortest prefix cached (None: not published)
    thinking: frozenset[str]  # the `thinking.type` values the model takes
    thinking_default: str
    effort_default: str | None  # None: the model takes no effort
    forced: bool  # `tool_choice` "any"/"tool" accepted (with the default thinking)
    long_prices: tuple[float, float, float, float, float] | None = None


PUBLISHED: dict[str, Published] = {
    "claude-sonnet-5-5": Published(
        M, 128 * K, (2, 10, 2.5, 4, 0.1), 512, frozenset({ADAPTIVE, BETWEEN_TOOLS}), ADAPTIVE, "high", False
    ),
    "claude-opus-5-5": Published(
        M, 128 * K, (4, 20, 5, 8, 0.2), 512, frozenset({ADAPTIVE}), ADAPTIVE, "medium", False
    ),
    "claude-haiku-5-5": Published(
        M,
        128 * K,
        (0.1, 0.5, 0.125, 0.2, 0.01),
        512,
        frozenset({ADAPTIVE, DISABLED}),
        ADAPTIVE,
        "medium",
        True,
        long_prices=(0.5, 2.5, 0.625, 1, 0.05),
    ),
    "claude-fable-5-2": Published(
        M, 128 * K, (8, 40, 10, 16, 0.2), None, frozenset({ADAPTIVE}), ADAPTIVE, "high", False
    ),
    "claude-fable-5-1": Published(
        M, 128 * K, (10, 50, 12.5, 20, 0.25), 512, frozenset({ADAPTIVE}), ADAPTIVE, "high", False
    ),
    "claude-sonnet-5": Published(
        M, 128 * K, (2, 10, 2.5, 4, 0.2), 1024, frozenset({ADAPTIVE, DISABLED}), ADAPTIVE, "high", True
    ),
    "claude-opus-5": Published(
        M, 128 * K, (5, 25, 6.25, 10, 0.5), 512, frozenset({ADAPTIVE, DISABLED}), ADAPTIVE, "high", True
    ),
    "claude-haiku-4-5": Published(
        200 * K, 64 * K, (1, 5, 1.25, 2, 0.1), 4096, frozenset({DISABLED, ENABLED}), DISABLED, None, True
    ),
}


def test_every_profile_is_checked_against_a_published_row() -> None:
    assert set(RULES) <= set(PUBLISHED) and set(BUILTIN_MODELS) <= set(PUBLISHED)


def test_every_profile_matches_the_published_figures() -> None:
    for model, row in PUBLISHED.items():
        profile = builtin_profile(model)
        assert profile.known, model
        assert (profile.context_window, profile.max_output) == (row.window, row.max_output), model
        assert profile.thinking_types == row.thinking, model
        assert profile.thinking_default == row.thinking_default, model
        assert (profile.efforts == EFFORTS) is (row.effort_default is not None), model
        assert profile.effort_default == row.effort_default, model
        assert profile.forced_tool_choice is row.forced, model
        if row.min_cache is not None:
            assert profile.min_cache_tokens == row.min_cache, model
        price = profile.price
        assert price is not None
        assert (
            price.input,
            price.output,
            price.cache_write,
            price.cache_write_1h,
            price.cache_read,
        ) == row.prices, model
        if row.long_prices is not None:
            assert price.long_context is not None
            band = price.long_context[1]
            assert price.long_context[0] == 100_000
            assert (
                band.input,
                band.output,
                band.cache_write,
                band.cache_write_1h,
                band.cache_read,
            ) == row.long_prices


def test_the_fakes_rules_match_the_published_figures() -> None:
    for model, rules in RULES.items():
        row = PUBLISHED[model]
        assert (rules.window, rules.max_output) == (row.window, row.max_output), model
        assert rules.thinking == row.thinking, model
        assert rules.thinking_default == row.thinking_default, model
        assert rules.forced_tool_choice is row.forced, model
        assert bool(rules.efforts) is (row.effort_default is not None), model
        if row.min_cache is not None:
            assert rules.min_cache == row.min_cache, model


def test_the_built_in_models_are_profiled() -> None:
    for model in BUILTIN_MODELS:
        assert builtin_profile(model).known


def test_a_dated_id_gets_its_familys_profile_and_an_unknown_one_the_defaults() -> None:
    dated = builtin_profile("claude-sonnet-5-5-20261001")
    assert dated.known and dated.context_window == 1_000_000 and dated.id.endswith("20261001")
    assert builtin_profile("claude-sonnet-5").min_cache_tokens == 1024  # not sonnet-5-5's
    unknown = builtin_profile("my-gateway-model")
    assert not unknown.known and unknown.context_window == 200_000
    assert unknown.price is None and not unknown.forced_tool_choice
    assert thinking_param(unknown, budget=None) is None  # nothing some model refuses


def test_sonnet_55_usage_is_priced_at_its_own_rates() -> None:
    price = load_prices(None)["claude-sonnet-5-5"]
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
    )
    assert price.cost(usage) == pytest.approx(2 + 10 + 0.10 + 2.50)
    one_hour = Usage(cache_creation_input_tokens=1_000_000, cache_creation_1h_input_tokens=1_000_000)
    assert price.cost(one_hour) == pytest.approx(4.0)  # 2x input for the 1-hour TTL


def test_haiku_55_prices_a_prompt_over_100k_entirely_in_the_higher_band() -> None:
    price = load_prices(None)["claude-haiku-5-5"]
    small = Usage(input_tokens=60_000, cache_read_input_tokens=40_000, output_tokens=1_000)
    assert price.cost(small) == pytest.approx((60_000 * 0.10 + 40_000 * 0.01 + 1_000 * 0.50) / 1e6)
    large = Usage(input_tokens=60_000, cache_read_input_tokens=40_001, output_tokens=1_000)
    assert price.cost(large) == pytest.approx((60_000 * 0.50 + 40_001 * 0.05 + 1_000 * 2.50) / 1e6)


def test_a_prices_file_overrides_and_adds(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        '{"claude-test-1": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1.25}}', encoding="utf-8"
    )
    prices = load_prices(path)
    assert prices["claude-test-1"] == Price(1, 2, 0.1, 1.25, 1.25)
    assert prices["claude-sonnet-5-5"].input == 2


def test_thinking_is_adaptive_with_the_notes_shown_and_budgets_only_where_taken() -> None:
    sonnet = builtin_profile("claude-sonnet-5-5")
    assert thinking_param(sonnet, budget=None) == {"type": "adaptive", "display": "summarized"}
    with pytest.raises(ProfileError, match="--effort"):
        thinking_param(sonnet, budget=4096)
    haiku45 = builtin_profile("claude-haiku-4-5")
    assert thinking_param(haiku45, budget=None) is None
    assert thinking_param(haiku45, budget=4096) == {"type": "enabled", "budget_tokens": 4096}


def test_effort_is_checked_against_the_model() -> None:
    assert output_config(builtin_profile("claude-opus-5-5"), effort="max") == {"effort": "max"}
    assert output_config(builtin_profile("claude-opus-5-5"), effort=None) is None
    with pytest.raises(ProfileError, match="does not accept effort"):
        output_config(builtin_profile("claude-haiku-4-5"), effort="low")


def test_what_the_models_api_says_overrides_the_table() -> None:
    info = {
        "id": "gw-model",
        "max_input_tokens": 500_000,
        "max_tokens": 50_000,
        "capabilities": {
            "thinking": {
                "supported": True,
                "types": {"adaptive": {"supported": True}, "enabled": {"supported": False}},
            },
            "effort": {
                "supported": True,
                "low": {"supported": True},
                "medium": {"supported": True},
                "high": {"supported": False},
                "max": {"supported": False},
            },
            "structured_outputs": {"supported": True},
        },
    }
    profile = profile_from_api(builtin_profile("gw-model"), info)
    assert profile.known and profile.context_window == 500_000 and profile.max_output == 50_000
    assert profile.thinking_types == {"adaptive"} and profile.efforts == ("low", "medium")
    assert profile.structured_outputs and profile.price is None


@pytest.mark.parametrize("bad", [0, -1, 10**15, "64000", True, 1.5, [1]])
def test_a_figure_of_the_models_api_out_of_range_is_ignored(bad: object) -> None:
    sonnet = builtin_profile("claude-sonnet-5-5")
    info = {"max_tokens": bad, "max_input_tokens": bad}
    profile = profile_from_api(sonnet, info)
    assert (profile.max_output, profile.context_window) == (sonnet.max_output, sonnet.context_window)
    assert doubtful_figures(info) == ["max_input_tokens", "max_tokens"]


def test_figures_at_the_edges_of_their_range_are_taken() -> None:
    info = {"max_tokens": 1, "max_input_tokens": 1_024}
    profile = profile_from_api(builtin_profile("gw-model"), info)
    assert (profile.max_output, profile.context_window) == (1, 1_024)
    assert doubtful_figures(info) == [] and doubtful_figures({"max_tokens": None}) == []


def test_who_reads_whose_thinking() -> None:
    assert builtin_profile("claude-opus-5-5").reads_thinking_from("claude-sonnet-5-5")
    assert not builtin_profile("claude-sonnet-5-5").reads_thinking_from("claude-opus-5-5")
    assert builtin_profile("claude-sonnet-5-5").reads_thinking_from("claude-sonnet-5-5-20261001")
