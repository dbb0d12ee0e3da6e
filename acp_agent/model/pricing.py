"""Prices per million tokens, so a turn can report `costUsd` and honour `maxTurnCostUsd`.

The built-in prices live in the model profiles (`model/profiles.py`, `load_prices`); `--prices FILE` /
`ACP_AGENT_PRICES` (JSON: {"model-id": {"input": 2, "output": 10, "cacheRead": 0.1,
"cacheWrite": 2.5, "cacheWrite1h": 4}}) adds or overrides entries. An unknown model has no price:
its cost is reported as null, never as 0. Web searches are priced per search on top of the tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_agent.model.base import Usage


__all__ = ["WEB_SEARCH_USD", "Price", "price_file_entries"]

WEB_SEARCH_USD = 10 / 1000
"""One web search: $10 per 1,000, on every model (web fetch has no fee of its own: what it reads
is billed as input tokens)."""


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens: input, output, cache read, cache write (5 min and 1 h).

    `long_context` is a second band (Haiku 5.5 above 100K prompt tokens): when a request's prompt
    (input + cache read + cache write) is larger than its threshold, every token of that request,
    output included, is billed at the band's prices.
    """

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    cache_write_1h: float = 0.0
    long_context: tuple[int, Price] | None = None

    def times(self, factor: float) -> Price:
        """Every price times `factor` (1: this one)."""
        if factor == 1:
            return self
        band = self.long_context
        return Price(
            self.input * factor,
            self.output * factor,
            self.cache_read * factor,
            self.cache_write * factor,
            self.cache_write_1h * factor,
            None if band is None else (band[0], band[1].times(factor)),
        )

    def cost(self, usage: Usage) -> float:
        """USD for one request's usage: its tokens, and its web searches (`WEB_SEARCH_USD` each)."""
        if self.long_context is not None and usage.prompt_tokens > self.long_context[0]:
            return self.long_context[1].cost(usage)
        write_5m = usage.cache_creation_input_tokens - usage.cache_creation_1h_input_tokens
        tokens = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_input_tokens * self.cache_read
            + write_5m * self.cache_write
            + usage.cache_creation_1h_input_tokens * (self.cache_write_1h or self.cache_write)
        ) / 1_000_000
        return tokens + usage.web_search_requests * WEB_SEARCH_USD


def price_file_entries(path: Path) -> dict[str, Price]:
    """The entries of a `--prices` file.

    Raises:
        ValueError: the file is not a JSON object of model → {input, output[, cacheRead,
            cacheWrite, cacheWrite1h]}.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"prices file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"prices file {path}: must be a JSON object of model ids")
    prices: dict[str, Price] = {}
    for model, entry in data.items():
        try:
            write = float(entry.get("cacheWrite", 0))
            prices[model] = Price(
                float(entry["input"]),
                float(entry["output"]),
                float(entry.get("cacheRead", 0)),
                write,
                float(entry.get("cacheWrite1h", write)),
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            raise ValueError(
                f"prices file {path}: {model!r} needs numeric input and output "
                "prices (USD per million tokens)"
            ) from None
    return prices
