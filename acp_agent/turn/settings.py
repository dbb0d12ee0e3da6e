"""What every model request of a session carries: plain values, so a session holds them before
its runtime exists (built on the first prompt)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp_agent.model.profiles import ModelProfile
from acp_agent.model.server_tools import WebTools

__all__ = ["RunnerSettings"]


@dataclass(frozen=True, slots=True)
class RunnerSettings:
    """What every model request of a session carries."""

    model: str
    max_tokens: int
    system: str | None = None
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    """`effort`, when one is set; a judge adds its `format`."""
    context_window: int = 200_000
    tool_timeout: float = 30.0
    on_limit: str = "stop"
    """wrap_up: the last allowed request carries no tools and asks for a summary (C7)."""
    compact_at: float = 0.8
    """Compact when a request's context passes this fraction of the window (0 = never)."""
    clear_results_at: int = 100_000
    """Clear old tool results from the requests when one passes this many tokens (0 = never)."""
    clear_results_keep: int = 20_000
    """Tokens of the latest tool results a clearing keeps (at most half of `clear_results_at`)."""
    profile: ModelProfile = field(default_factory=lambda: ModelProfile("unknown"))
    """What the model accepts (structured output for a judge, forced tool choice)."""
    web: WebTools = field(default_factory=WebTools)
    """The web server tools offered (none by default: the catalog fills in the model's versions)."""
