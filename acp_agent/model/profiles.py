"""What each Claude model accepts and costs, so every request is one the API takes (docs/decisions.md D12).

The real API answers 400 where a loopback fake accepted anything: `budget_tokens` on a 5.x model,
forced `tool_choice` on Sonnet/Opus 5.5, `thinking.type.disabled` where thinking is always on. A
`ModelProfile` holds those facts per model: window, max output, thinking modes and their default,
effort levels and default, forced tool choice, structured output, the cache minimum and prices.

Sources, strongest last: the built-in table below (from the platform docs, late 2026), what the
Models API says of the model (`max_input_tokens`, `max_tokens`, `capabilities`), and the user's
`--context-window` / `--prices`. An unknown id (a gateway, a new release) gets conservative
defaults: nothing is sent that some model refuses (no thinking, effort, forced tool choice or web
server tools, unless the Models API says the model has web search).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acp_agent.errors import AgentError
from acp_agent.model.pricing import Price, price_file_entries
from acp_agent.model.server_tools import (
    WEB_FETCH_BASIC,
    WEB_FETCH_NEWEST,
    WEB_SEARCH_BASIC,
    WEB_SEARCH_NEWEST,
    web_versions,
)

__all__ = [
    "EFFORTS",
    "FIGURE_BOUNDS",
    "ModelProfile",
    "ProfileError",
    "api_figure",
    "builtin_prices",
    "builtin_profile",
    "doubtful_figures",
    "is_builtin",
    "load_prices",
    "output_config",
    "profile_from_api",
    "thinking_param",
]

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""Every `output_config.effort` level, lowest first."""

UNKNOWN_WINDOW = 200_000
UNKNOWN_MAX_OUTPUT = 32_000


class ProfileError(AgentError, ValueError):
    """A setting asks for what the model does not accept (e.g. `--thinking-budget` on a 5.x model)."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """The request contract of one model."""

    id: str
    known: bool = False
    """From the built-in table or the Models API; False: conservative defaults."""
    context_window: int = UNKNOWN_WINDOW
    max_output: int = UNKNOWN_MAX_OUTPUT
    thinking_types: frozenset[str] = frozenset()
    """Accepted `thinking.type` values (adaptive, between_tools, disabled, enabled)."""
    thinking_default: str | None = None
    display_default: str | None = None
    """What `display` is when not sent: "omitted" returns empty thinking text."""
    efforts: tuple[str, ...] = ()
    effort_default: str | None = None
    forced_tool_choice: bool = False
    """`tool_choice` `any`/`tool` accepted (400 on Sonnet/Opus 5.5 and Fable 5.1+)."""
    structured_outputs: bool = False
    """`output_config.format` with a JSON schema accepted."""
    min_cache_tokens: int = 1024
    price: Price | None = None
    reads_thinking_of: frozenset[str] = field(default_factory=frozenset)
    """Other models whose thinking blocks this one can read (its own always)."""
    web_search: str | None = None
    """The `web_search` server tool version it takes (`server_tools.py`); None: none offered."""
    web_fetch: str | None = None
    """The `web_fetch` server tool version it takes; None: none offered."""
    pdf_input: bool = False
    """PDFs accepted as `document` blocks (every built-in model; else the Models API's
    `capabilities.pdf_input`)."""

    def reads_thinking_from(self, other: str) -> bool:
        """Whether thinking blocks written by model `other` reach this model (else dropped)."""
        return _family(other) == _family(self.id) or _family(other) in self.reads_thinking_of


def _family(model_id: str) -> str:
    """The table's id for a dated or aliased id (`claude-sonnet-5-5-20261001` → `claude-sonnet-5-5`)."""
    for known in _LONGEST_FIRST:
        if model_id == known or model_id.startswith(known + "-"):
            return known
    return model_id


M = 1_000_000
K = 1_000
_5X_THINKING = frozenset({"adaptive"})

_TABLE: dict[str, ModelProfile] = {
    p.id: replace(p, pdf_input=True)  # every model of the table reads PDFs
    for p in (
        ModelProfile(
            "claude-sonnet-5-5",
            True,
            M,
            128 * K,
            frozenset({"adaptive", "between_tools"}),
            "adaptive",
            "omitted",
            EFFORTS,
            "high",
            False,
            True,
            512,
            Price(2, 10, 0.10, 2.50, 4),
            frozenset({"claude-sonnet-5", "claude-opus-4-8", "claude-haiku-4-5"}),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-opus-5-5",
            True,
            M,
            128 * K,
            _5X_THINKING,
            "adaptive",
            "omitted",
            EFFORTS,
            "medium",
            False,
            True,
            512,
            Price(4, 20, 0.20, 5, 8),
            frozenset({"claude-sonnet-5-5"}),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-haiku-5-5",
            True,
            M,
            128 * K,
            frozenset({"adaptive", "disabled"}),
            "adaptive",
            "omitted",
            EFFORTS,
            "medium",
            True,
            True,
            512,
            Price(0.10, 0.50, 0.01, 0.125, 0.20, long_context=(100 * K, Price(0.50, 2.50, 0.05, 0.625, 1))),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-fable-5-2",
            True,
            M,
            128 * K,
            _5X_THINKING,
            "adaptive",
            "omitted",
            EFFORTS,
            "high",
            False,
            True,
            512,
            Price(8, 40, 0.20, 10, 16),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-fable-5-1",
            True,
            M,
            128 * K,
            _5X_THINKING,
            "adaptive",
            "omitted",
            EFFORTS,
            "high",
            False,
            True,
            512,
            Price(10, 50, 0.25, 12.50, 20),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-sonnet-5",
            True,
            M,
            128 * K,
            frozenset({"adaptive", "disabled"}),
            "adaptive",
            "omitted",
            EFFORTS,
            "high",
            True,
            True,
            1024,
            Price(2, 10, 0.20, 2.50, 4),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-opus-5",
            True,
            M,
            128 * K,
            frozenset({"adaptive", "disabled"}),
            "adaptive",
            "omitted",
            EFFORTS,
            "high",
            True,
            True,
            512,
            Price(5, 25, 0.50, 6.25, 10),
            web_search=WEB_SEARCH_NEWEST,
            web_fetch=WEB_FETCH_NEWEST,
        ),
        ModelProfile(
            "claude-haiku-4-5",
            True,
            200 * K,
            64 * K,
            frozenset({"disabled", "enabled"}),
            "disabled",
            "summarized",
            (),
            None,
            True,
            True,
            4096,
            Price(1, 5, 0.10, 1.25, 2),
            web_search=WEB_SEARCH_BASIC,
            web_fetch=WEB_FETCH_BASIC,
        ),
    )
}


_LONGEST_FIRST = sorted(_TABLE, key=len, reverse=True)
"""Table ids, longest first, so `claude-sonnet-5-5-…` is not taken for `claude-sonnet-5`."""


def builtin_profile(model_id: str) -> ModelProfile:
    """The built-in profile of `model_id` (dated ids match their family), else the defaults."""
    found = _TABLE.get(_family(model_id))
    return ModelProfile(model_id) if found is None else replace(found, id=model_id)


def is_builtin(model_id: str) -> bool:
    """Whether `model_id` (or its family) is in the built-in table."""
    return _family(model_id) in _TABLE


def builtin_prices(factor: float = 1.0) -> dict[str, Price]:
    """Model id → price, for every model of the built-in table, times `factor` (a platform's
    regional premium: `model/cloud/platforms.py:Platform.price_factor`)."""
    return {model_id: p.price.times(factor) for model_id, p in _TABLE.items() if p.price is not None}


def load_prices(path: Path | None, factor: float = 1.0) -> dict[str, Price]:
    """The built-in prices (times the platform's `factor`), overridden and extended by a
    `--prices` file's entries (taken as they are written).

    Raises:
        ValueError: the file does not parse (see `price_file_entries`).
    """
    prices = builtin_prices(factor)
    if path is not None:
        prices.update(price_file_entries(path))
    return prices


FIGURE_BOUNDS: dict[str, tuple[int, int]] = {
    "max_input_tokens": (1_024, 100 * M),
    "max_tokens": (1, 10 * M),
}
"""The Models API figures believed, and the range they must be in. `max_tokens: 0` or `-1` taken
as the model's max output would be sent on every request (the API's 400)."""


def api_figure(info: Mapping[str, Any], name: str) -> int | None:
    """The figure `name` of a `ModelInfo` when it is an integer in its sane range, else None."""
    value = info.get(name)
    low, high = FIGURE_BOUNDS[name]
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return None


def doubtful_figures(info: Mapping[str, Any]) -> list[str]:
    """The figures of a `ModelInfo` given (not null) but not believed: `profile_from_api` ignores them."""
    return [name for name in FIGURE_BOUNDS if info.get(name) is not None and api_figure(info, name) is None]


def profile_from_api(base: ModelProfile, info: Mapping[str, Any]) -> ModelProfile:
    """`base` updated with what the Models API says of the model (a `ModelInfo` as a dict).

    The API knows window, max output and capabilities; it does not say prices, defaults, forced
    tool choice or the cache minimum, which stay as the table has them. A figure out of its
    range (`FIGURE_BOUNDS`) is ignored: the table's (or the default) stays.
    """
    changes: dict[str, Any] = {"known": True}
    if (window := api_figure(info, "max_input_tokens")) is not None:
        changes["context_window"] = window
    if (max_output := api_figure(info, "max_tokens")) is not None:
        changes["max_output"] = max_output
    caps = info.get("capabilities")
    if isinstance(caps, Mapping):
        thinking = caps.get("thinking")
        if isinstance(thinking, Mapping) and isinstance(thinking.get("types"), Mapping):
            changes["thinking_types"] = frozenset(
                name
                for name, support in thinking["types"].items()
                if isinstance(support, Mapping) and support.get("supported")
            )
        effort = caps.get("effort")
        if isinstance(effort, Mapping):
            changes["efforts"] = tuple(
                level
                for level in EFFORTS
                if effort.get("supported")
                and isinstance(effort.get(level), Mapping)
                and effort[level].get("supported")
            )
        structured = caps.get("structured_outputs")
        if isinstance(structured, Mapping):
            changes["structured_outputs"] = bool(structured.get("supported"))
        pdf = caps.get("pdf_input")
        if isinstance(pdf, Mapping):
            changes["pdf_input"] = bool(pdf.get("supported"))
        changes.update(web_versions(base.web_search, base.web_fetch, caps.get("server_tools")))
    return replace(base, **changes)


def thinking_param(profile: ModelProfile, *, budget: int | None) -> dict[str, Any] | None:
    """The `thinking` request field: adaptive with the model's notes shown, where accepted.

    `display: "summarized"` returns the notes a 5.x model writes between tool calls (empty at the
    default "omitted"). A budget is sent only to a model that takes one.

    Raises:
        ProfileError: a budget for a model that refuses `thinking.type.enabled`.
    """
    types = profile.thinking_types
    if budget is not None:
        if profile.known and "enabled" not in types:
            raise ProfileError(
                f"--thinking-budget: {profile.id} does not accept a thinking budget "
                "(thinking.type.enabled); its thinking is adaptive: use --effort "
                "low|medium|high|xhigh|max instead"
            )
        return {"type": "enabled", "budget_tokens": budget}
    if "adaptive" in types:
        return {"type": "adaptive", "display": "summarized"}
    return None


def output_config(profile: ModelProfile, *, effort: str | None) -> dict[str, Any] | None:
    """The `output_config` request field for an effort level (None: the model's default).

    Raises:
        ProfileError: a level the model does not accept.
    """
    if effort is None:
        return None
    if effort not in EFFORTS:
        raise ProfileError(f"effort: {effort!r} is not one of {', '.join(EFFORTS)}")
    if profile.known and effort not in profile.efforts:
        accepted = ", ".join(profile.efforts) or "none"
        raise ProfileError(f"effort: {profile.id} does not accept effort {effort!r} (accepted: {accepted})")
    return {"effort": effort}
