"""Prices per million tokens, so a turn can report `costUsd` and honour `maxTurnCostUsd`.

The built-in table covers the built-in models; `--prices FILE` / `ACP_AGENT_PRICES` (JSON:
{"model-id": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}) adds or overrides
entries. An unknown model has no price: its cost is reported as null, never as 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_agent.model.base import Usage


__all__ = ["BUILTIN_PRICES", "Price", "load_prices"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input + usage.output_tokens * self.output
                + usage.cache_read_input_tokens * self.cache_read
                + usage.cache_creation_input_tokens * self.cache_write) / 1_000_000


BUILTIN_PRICES: dict[str, Price] = {
    "claude-sonnet-5-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-opus-5-5": Price(15.0, 75.0, 1.50, 18.75),
    "claude-haiku-5-5": Price(1.0, 5.0, 0.10, 1.25),
}


def load_prices(path: Path | None) -> dict[str, Price]:
    """The built-in table, overridden by the file's entries.

    Raises:
        ValueError: the file is not a JSON object of model → {input, output[, cacheRead, cacheWrite]}.
    """
    prices = dict(BUILTIN_PRICES)
    if path is None:
        return prices
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"prices file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"prices file {path}: must be a JSON object of model ids")
    for model, entry in data.items():
        try:
            prices[model] = Price(float(entry["input"]), float(entry["output"]),
                                  float(entry.get("cacheRead", 0)), float(entry.get("cacheWrite", 0)))
        except (TypeError, KeyError, ValueError, AttributeError):
            raise ValueError(f"prices file {path}: {model!r} needs numeric input and output "
                             "prices (USD per million tokens)") from None
    return prices
