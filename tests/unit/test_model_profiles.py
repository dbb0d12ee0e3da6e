"""The model profiles and the fake's rules, both checked against `../shared/claude-models.md`.

The agent's table (`model/profiles.py`) and the fake's (`testing/model_rules.py`) are written
apart on purpose; each is read back against the document's model table here, so neither can drift.
"""

from __future__ import annotations

import re
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
from acp_agent.testing.model_rules import RULES

DOC = Path(__file__).resolve().parents[2].parent / "shared" / "claude-models.md"


@dataclass(frozen=True)
class DocRow:
    id: str
    window: int
    max_output: int
    prices: tuple[float, ...]
    """input, output, 5-min write, 1-h write, read."""
    long_prices: tuple[float, ...] | None
    min_cache: int | None
    thinking: frozenset[str]
    thinking_default: str
    efforts: bool
    effort_default: str | None
    forced: bool


def _tokens(text: str) -> int:
    text = text.strip().strip("*")
    return int(float(text[:-1]) * (1_000_000 if text.endswith("M") else 1_000))


def _prices(text: str) -> tuple[float, ...]:
    numbers = re.findall(r"\d+(?:\.\d+)?", text.replace("*", ""))
    return tuple(float(n) for n in numbers[:5])


def doc_rows() -> dict[str, DocRow]:
    if not DOC.exists():
        pytest.skip(f"{DOC} not found (it lives in ../shared)")
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `claude-"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        model = cells[0].split("`")[1]
        window, max_out = cells[1].replace("*", "").split("/")
        price_text = cells[2].replace("[3P]", "")
        long_prices = None
        if ">100K:" in price_text:
            low, high = price_text.split(";")
            price_text, long_prices = low.split(":", 1)[1], _prices(high.split(":", 1)[1])
        thinking_text = cells[4]
        thinking = frozenset(
            k for k in ("adaptive", "between_tools", "disabled", "enabled") if k in thinking_text
        )
        default = re.search(r"`?(\w+)`? \(default\)|(\w+) only", thinking_text)
        assert default, thinking_text
        effort = re.search(r"\((?:\*\*)?(\w+)(?:\*\*)?\)", cells[5])
        rows[model] = DocRow(
            model,
            _tokens(window),
            _tokens(max_out),
            _prices(price_text),
            long_prices,
            int(cells[3].replace(",", "")) if cells[3][0].isdigit() else None,
            thinking,
            default.group(1) or default.group(2),
            cells[5] != "none",
            effort.group(1) if effort else None,
            cells[6].startswith("OK"),
        )
    assert len(rows) >= 8, "the model table of claude-models.md was not found"
    return rows


def test_every_profile_matches_the_document() -> None:
    for model, row in doc_rows().items():
        profile = builtin_profile(model)
        assert profile.known, model
        assert (profile.context_window, profile.max_output) == (row.window, row.max_output), model
        assert profile.thinking_types == row.thinking, model
        assert profile.thinking_default == row.thinking_default, model
        assert (profile.efforts == EFFORTS) is row.efforts, model
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


def test_the_fakes_rules_match_the_document() -> None:
    rows = doc_rows()
    for model, rules in RULES.items():
        row = rows[model]
        assert (rules.window, rules.max_output) == (row.window, row.max_output), model
        assert rules.thinking == row.thinking, model
        assert rules.thinking_default == row.thinking_default, model
        assert rules.forced_tool_choice is row.forced, model
        assert bool(rules.efforts) is row.efforts, model
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
