"""What the loop keeps of a session from one turn to the next (`LoopMemory`), and what its requests
spent over its life in this process (`SessionUsage`: the figures `/status` shows and the cost each
`usage_update` carries).

The turn's meter counts one turn and starts afresh with the next; a `LoopMemory` outlives them.
Each turn's runner is given the session's (`TurnRunner(spec, memory)`) and counts each finished
response into it; a subagent's runner holds its own, whose usage its parent absorbs when the child
ends, as the child's requests counted in the turn's meter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp_agent.turn.context.history import Mark

if TYPE_CHECKING:  # a session holds its memory from session/new on, before any model is loaded
    from acp_agent.model.base import Usage

__all__ = ["LoopMemory", "SessionUsage"]


@dataclass(slots=True)
class SessionUsage:
    """A session's running sums, over every request its turns (and their subagents) finished."""

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


@dataclass(slots=True)
class LoopMemory:
    """What the loop remembers of a session between its turns (a subagent starts with a fresh one)."""

    usage: SessionUsage = field(default_factory=SessionUsage)
    """What the session's requests spent so far (/status, `usage_update`)."""
    last_context_tokens: int = 0
    """The context size of the latest model request (drives compaction)."""
    last_message_id: str | None = None
    """The session's latest response id (`diagnostics.previous_message_id` of the next)."""
    accepted_media: Mark | None = None
    """Where the history stood at the latest request the API answered (`context/media_budget.py`)."""
    signed_tools: list[dict[str, Any]] | None = None
    """The `tools` of the session's latest loop request: its replies' thinking blocks are signed
    to them, and a 5.5 model refuses one replayed behind other tools (rule 6)."""
