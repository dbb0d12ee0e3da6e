"""The line a user sees when a limit stops a turn: which limit, its amount, and how to raise it."""

from __future__ import annotations

import re

import pytest

from acp_agent.config import Config
from acp_agent.limits import Limits
from acp_agent.turn.driver import limit_notice
from acp_agent.turn.meter import Limit, TurnMeter
from acp_agent.turn.strategies.loops import choose_loop

LIMITS = Limits(
    max_turn_requests=3,
    max_tool_calls=9,
    max_turn_seconds=12.5,
    max_turn_output_tokens=100,
    max_turn_input_tokens=200,
    max_turn_cost_usd=0.5,
    repeat_limit=7,
)


@pytest.mark.parametrize(
    ("limit", "amount", "name", "flag"),
    [
        (
            Limit.REQUESTS,
            "3 model requests",
            "maxTurnRequests",
            "--max-turn-requests / ACP_AGENT_MAX_TURN_REQUESTS",
        ),
        (Limit.TOOL_CALLS, "9 tool calls", "maxToolCalls", "--max-tool-calls / ACP_AGENT_MAX_TOOL_CALLS"),
        (Limit.SECONDS, "12.5 seconds", "maxTurnSeconds", "--max-turn-seconds / ACP_AGENT_MAX_TURN_SECONDS"),
        (Limit.OUTPUT_TOKENS, "100 output tokens", "maxTurnOutputTokens", "--max-turn-output-tokens"),
        (Limit.INPUT_TOKENS, "200 input tokens", "maxTurnInputTokens", "--max-turn-input-tokens"),
        (Limit.COST, "0.5 USD", "maxTurnCostUsd", "--max-turn-cost-usd / ACP_AGENT_MAX_TURN_COST_USD"),
        (
            Limit.REPEATS,
            "7 identical tool calls",
            "repeatedToolCall",
            "--repeat-limit / ACP_AGENT_REPEAT_LIMIT",
        ),
        (Limit.TRIALS, "4 failed verifications", "maxTrials", "--max-trials / ACP_AGENT_MAX_TRIALS"),
    ],
)
def test_every_limit_names_its_amount_and_how_to_raise_it(
    limit: Limit, amount: str, name: str, flag: str
) -> None:
    text = limit_notice(limit, TurnMeter(LIMITS), {"maxTrials": 4})
    assert f"stopped at its limit of {amount} ({name})" in text
    assert f"raise it with {flag}" in text


def test_a_limit_whose_amount_is_unknown_is_named_without_one() -> None:
    text = limit_notice(Limit.TRIALS, TurnMeter(Limits()), {})
    assert "stopped at its limit of failed verifications (maxTrials)" in text


@pytest.mark.parametrize("limit", list(Limit))
def test_the_meta_key_it_advises_is_one_a_session_accepts(limit: Limit) -> None:
    text = limit_notice(limit, TurnMeter(LIMITS), {"maxTrials": 4})
    key = re.search(r'_meta \{"acp-agent": \{"(\w+)": …\}\}', text)
    assert key is not None, text
    if limit is Limit.TRIALS:  # the strategy's setting, not a Limits one
        assert choose_loop(Config(), {"loop": "verify", "verifyCommand": "true", key[1]: 9}).max_trials == 9
    else:
        assert LIMITS.with_overrides({key[1]: 11}) != LIMITS
