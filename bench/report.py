"""Figures, goals and the readable table.

A figure has a value for the agent and (when the same measurement ran on the baseline) one for the
baseline; its goal is either an absolute bound on the agent's value or a bound on the ratio
agent/baseline from the same run. When agent and baseline were measured in rounds, back to back,
the ratio is the median of the per-round ratios: a neighbour's load that comes and goes between
rounds then cancels out, which the ratio of the two medians would not do.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Figure", "Goal", "pair_ratios", "render_table"]


@dataclass(frozen=True, slots=True)
class Goal:
    """`kind` is "max" (agent ≤ limit), "ratio" (agent/baseline ≤ limit) or "min_ratio" (≥)."""

    kind: str
    limit: float
    text: str


def pair_ratios(agent: Sequence[float], baseline: Sequence[float]) -> list[float] | None:
    """agent[i] / baseline[i] per round; None unless every round has a positive baseline value."""
    if not agent or len(agent) != len(baseline) or any(b <= 0 for b in baseline):
        return None
    return [a / b for a, b in zip(agent, baseline, strict=True)]


@dataclass(slots=True)
class Figure:
    key: str
    label: str
    unit: str
    agent: float | None
    baseline: float | None = None
    goal: Goal | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    pairs: list[float] | None = None
    """Per-round agent/baseline ratios, when both were measured back to back in rounds."""

    @property
    def ratio(self) -> float | None:
        if self.pairs:
            return float(statistics.median(self.pairs))
        if self.agent is None or self.baseline is None or self.baseline <= 0:
            return None
        return self.agent / self.baseline

    @property
    def met(self) -> bool | None:
        goal = self.goal
        if goal is None or self.agent is None:
            return None
        if goal.kind == "max":
            return self.agent <= goal.limit
        ratio = self.ratio
        if ratio is None:
            return None
        return ratio <= goal.limit if goal.kind == "ratio" else ratio >= goal.limit

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["goal"] = None if self.goal is None else asdict(self.goal)
        out["pairs"] = None if self.pairs is None else [round(r, 4) for r in self.pairs]
        out["ratio"] = self.ratio
        out["met"] = self.met
        return out


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "chunks/s":
        return f"{value:,.0f} {unit}"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.1f} {unit}"


def render_table(figures: list[Figure]) -> str:
    """A Markdown table (readable as plain text too)."""
    rows = [("figure", "agent", "baseline", "ratio", "goal", "met?")]
    for f in figures:
        ratio = "—" if f.ratio is None else f"{f.ratio:.2f}×"
        met = {True: "yes", False: "NO", None: ""}[f.met]
        rows.append(
            (
                f.label,
                _number(f.agent, f.unit),
                _number(f.baseline, f.unit),
                ratio,
                f.goal.text if f.goal else "",
                met,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i == 0 else c.rjust(w) if i < 4 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
