"""What the agent sends once a turn: the session/prompt response."""

from __future__ import annotations

from typing import Literal

from acp_agent.protocol.base import AcpModel

__all__ = ["PromptResponse", "StopReason"]

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResponse(AcpModel):
    stop_reason: StopReason
