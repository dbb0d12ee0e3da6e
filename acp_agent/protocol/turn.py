"""What the agent sends once a turn: the session/prompt response, with its token usage."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt

from acp_agent.protocol.base import AcpModel

__all__ = ["PromptResponse", "PromptUsage", "StopReason"]

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptUsage(AcpModel):
    """ACP's unstable `Usage`: the tokens of this turn (its subagents included). `thoughtTokens`
    is left out: the Messages API counts thinking in `outputTokens` and reports no split."""

    total_tokens: NonNegativeInt
    input_tokens: NonNegativeInt
    output_tokens: NonNegativeInt
    thought_tokens: NonNegativeInt | None = None
    cached_read_tokens: NonNegativeInt | None = None
    cached_write_tokens: NonNegativeInt | None = None


class PromptResponse(AcpModel):
    stop_reason: StopReason
    usage: PromptUsage | None = None
