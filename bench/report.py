"""Figures, goals and the readable table.

A figure has a value for the agent and (when the same measurement ran on the baseline) one for the
baseline; its goal is either an absolute bound on the agent's value or a bound on the ratio
agent/baseline from the same run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Figure", "Goal", "render_table"]


@dataclass(frozen=True, slots=True)
class Goal:
    """`kind` is "max" (agent ≤ limit), "ratio" (agent/baseline ≤ limit) or "min_ratio" (≥)."""

    kind: str
    limit: float
    text: str


@dataclass(slots=True)
class Figure:
    key: str
    label: str
    unit: str
    agent: float | None
    baseline: float | None = None
    goal: Goal | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.agent is None or not self.baseline:
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
        rows.append((f.label, _number(f.agent, f.unit), _number(f.baseline, f.unit), ratio,
                     f.goal.text if f.goal else "", met))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) if i < 4 else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
