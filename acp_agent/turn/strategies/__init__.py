"""Turn strategies: each drives the one runner under the one meter (decisions D9)."""

from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.tools import ToolsStrategy

__all__ = ["Strategy", "ToolsStrategy"]
