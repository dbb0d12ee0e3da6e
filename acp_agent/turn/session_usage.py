"""What a session's requests spent over its life in this process: the figures `/status` shows and
the cost each `usage_update` carries.

The turn's meter counts one turn and starts afresh with the next; a `SessionUsage` outlives them.
The session's runner holds one (`TurnRunner.usage`) and counts each finished response into it; a
subagent's runner holds its own, which its parent absorbs when the child ends, as the child's
requests counted in the turn's meter.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_agent.model.base import Usage

__all__ = ["SessionUsage"]


@dataclass(slots=True)
class SessionUsage:
    """A session's running sums, over every request its runner (and its subagents') finished."""

    cost_usd: float | None = None
    """What the requests cost so far; None until a priced request finished."""
    cache_read: int = 0
    """Prompt tokens read from the cache."""
    prompt_tokens: int = 0
    """All prompt tokens (uncached, read from the cache and written to it)."""

    def count(self, usage: Usage, cost: float | None) -> None:
        """One finished response: its `usage`, and its `cost` (None: the model has no price)."""
        self.cache_read += usage.cache_read_input_tokens
        self.prompt_tokens += usage.prompt_tokens
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def absorb(self, child: SessionUsage) -> None:
        """A subagent's runner ended: what it spent counts in this session's figures."""
        if child.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + child.cost_usd
        self.cache_read += child.cache_read
        self.prompt_tokens += child.prompt_tokens
