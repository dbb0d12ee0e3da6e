"""Breakpoint placement (the agent) and the cache rules the fake bills them by."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from acp_agent.model.caching import with_breakpoints
from acp_agent.testing.prompt_cache import PromptCache, breakpoint_errors, miss_reason
from acp_agent.testing.rules.model_rules import FORCED, PREFILL, check_request, thinking_signature

TOOLS = [
    {"name": f"tool_{i}", "description": "d" * 400, "input_schema": {"type": "object"}} for i in range(3)
]
SYSTEM = "You are a careful assistant. " * 100


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def reply(text: str, *, thinking: bool = False) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = (
        [{"type": "thinking", "thinking": "", "signature": "s"}] if thinking else []
    )
    return {"role": "assistant", "content": [*blocks, {"type": "text", "text": text}]}


def markers(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are: tools.N, system.N, messages.I.J."""
    found = [f"tools.{i}" for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system.{i}" for i, b in enumerate(system) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        found += [f"messages.{i}.{j}" for j, b in enumerate(message["content"]) if "cache_control" in b]
    return found


def conversation(turns: int) -> list[dict[str, Any]]:
    messages = [user("start " * 50)]
    for n in range(turns):
        messages += [reply(f"step {n} " * 30, thinking=True), user(f"result {n} " * 200)]
    return messages


# ── placement ─────────────────────────────────────────────────────────────────────────────────


def test_breakpoints_go_on_tools_system_the_tail_and_the_previous_tail() -> None:
    messages = conversation(2)
    original = copy.deepcopy(messages)
    body = with_breakpoints({"model": "m", "tools": TOOLS, "system": SYSTEM, "messages": messages})
    assert markers(body) == ["tools.2", "system.0", "messages.2.0", "messages.4.0"]
    assert messages == original  # the history itself never holds a marker
    assert body["tools"][2]["cache_control"] == {"type": "ephemeral"}


def test_a_one_hour_ttl_is_on_the_fixed_breakpoints_only() -> None:
    body = with_breakpoints(
        {"model": "m", "tools": TOOLS, "system": SYSTEM, "messages": conversation(1)}, ttl="1h"
    )
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_thinking_and_empty_text_never_carry_a_marker() -> None:
    messages = [
        user("q"),
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "s"}]},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}]},
    ]
    body = with_breakpoints({"model": "m", "messages": messages})
    assert markers(body) == ["messages.0.0", "messages.2.0"]
    assert breakpoint_errors(body) is None


@pytest.mark.parametrize("turns", [0, 1, 5])
def test_never_more_than_four(turns: int) -> None:
    body = with_breakpoints({"model": "m", "tools": TOOLS, "system": SYSTEM, "messages": conversation(turns)})
    assert 1 <= len(markers(body)) <= 4
    assert breakpoint_errors(body) is None


def test_five_breakpoints_or_a_marked_thinking_block_are_the_apis_400() -> None:
    body = with_breakpoints({"model": "m", "tools": TOOLS, "system": SYSTEM, "messages": conversation(2)})
    body["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral"}
    assert breakpoint_errors(body) == ("A maximum of 4 blocks with cache_control may be provided. Found 5.")
    thinking = {
        "model": "m",
        "messages": [
            user("q"),
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "",
                        "signature": "s",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
            user("go"),
        ],
    }
    assert "thinking blocks" in str(breakpoint_errors(thinking))


# ── what the fake bills ───────────────────────────────────────────────────────────────────────


def bill(cache: PromptCache, messages: list[dict[str, Any]], **extra: Any) -> Any:
    body = with_breakpoints(
        {"model": "claude-sonnet-5-5", "tools": TOOLS, "system": SYSTEM, "messages": messages, **extra}
    )
    return cache.apply(body, min_tokens=512)


def test_a_growing_conversation_reads_the_previous_prefix() -> None:
    cache = PromptCache()
    first = bill(cache, conversation(0))
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
    second = bill(cache, conversation(1))
    total = second.input_tokens + second.cache_read_input_tokens + second.cache_creation_input_tokens
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.input_tokens == 0 and second.cache_read_input_tokens / total > 0.2


def test_many_blocks_in_one_step_are_found_by_the_fallback_breakpoint() -> None:
    cache = PromptCache()
    messages = conversation(1)
    bill(cache, messages)
    batch = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 100} for i in range(30)],
    }
    grown = [
        *messages,
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": f"t{i}", "name": "tool_0", "input": {}} for i in range(30)
            ],
        },
        batch,
    ]
    outcome = bill(cache, grown)
    assert outcome.cache_read_input_tokens > 0  # 60 new blocks: past the 20-block lookback


def test_a_short_prefix_is_not_cached() -> None:
    cache = PromptCache()
    body = with_breakpoints({"model": "m", "messages": [user("hi")]})
    for _ in range(2):
        outcome = cache.apply(body, min_tokens=512)
        assert (outcome.cache_read_input_tokens, outcome.cache_creation_input_tokens) == (0, 0)


def test_changing_tool_choice_keeps_tools_and_system_but_not_the_messages() -> None:
    cache = PromptCache()
    messages = conversation(1)
    base = bill(cache, messages)
    forced = bill(cache, messages, tool_choice={"type": "none"})
    fixed = base.cache_creation_input_tokens + base.cache_read_input_tokens
    assert 0 < forced.cache_read_input_tokens < fixed
    assert miss_reason(base.fingerprint, forced) == {
        "type": "messages_changed",
        "cache_missed_input_tokens": forced.input_tokens + forced.cache_creation_input_tokens,
    }


def test_miss_reasons() -> None:
    cache = PromptCache()
    base = bill(cache, conversation(1))
    assert miss_reason(base.fingerprint, bill(cache, conversation(2))) is None
    other = cache.apply(
        with_breakpoints(
            {"model": "claude-opus-5-5", "tools": TOOLS, "system": SYSTEM, "messages": conversation(1)}
        ),
        min_tokens=512,
    )
    assert miss_reason(base.fingerprint, other)["type"] == "model_changed"  # type: ignore[index]
    assert (
        miss_reason(base.fingerprint, bill(cache, conversation(1), system="x" * 3000))["type"]
        == "system_changed"
    )  # type: ignore[index]
    assert miss_reason(None, base) == {"type": "previous_message_not_found"}


def test_one_hour_writes_are_reported_apart() -> None:
    cache = PromptCache()
    body = with_breakpoints(
        {"model": "claude-sonnet-5-5", "tools": TOOLS, "system": SYSTEM, "messages": conversation(1)},
        ttl="1h",
    )
    outcome = cache.apply(body, min_tokens=512)
    usage = outcome.usage(5)
    assert 0 < usage["cache_creation"]["ephemeral_1h_input_tokens"] < usage["cache_creation_input_tokens"]


# ── the per-model 400s ────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("model", "extra", "message"),
    [
        (
            "claude-sonnet-5-5",
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            '"thinking.type.enabled" is not supported for this model',
        ),
        (
            "claude-sonnet-5-5",
            {"thinking": {"type": "disabled"}},
            'Use "thinking.type.between_tools" for the lowest thinking setting',
        ),
        (
            "claude-opus-5-5",
            {"thinking": {"type": "disabled"}},
            '"thinking.type.disabled" is not supported for this model',
        ),
        (
            "claude-sonnet-5-5",
            {"thinking": {"type": "between_tools", "display": "summarized"}},
            "Extra inputs are not permitted",
        ),
        (
            "claude-sonnet-5-5",
            {"thinking": {"type": "between_tools"}, "output_config": {"effort": "max"}},
            "between_tools",
        ),
        (
            "claude-haiku-5-5",
            {"thinking": {"type": "disabled"}, "output_config": {"effort": "xhigh"}},
            'not supported with effort "xhigh"',
        ),
        ("claude-sonnet-5-5", {"tool_choice": {"type": "tool", "name": "t"}}, FORCED),
        ("claude-opus-5-5", {"tool_choice": {"type": "any"}}, FORCED),
        (
            "claude-haiku-4-5",
            {"tool_choice": {"type": "any"}, "thinking": {"type": "enabled", "budget_tokens": 2048}},
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        ("claude-haiku-4-5", {"output_config": {"effort": "low"}}, "does not support the effort"),
        ("claude-sonnet-5-5", {"temperature": 0.2}, "temperature"),
        ("claude-sonnet-5-5", {"max_tokens": 200_000}, "maximum allowed number of output tokens"),
    ],
)
def test_what_each_model_refuses(model: str, extra: dict[str, Any], message: str) -> None:
    body = {"model": model, "max_tokens": 1024, "messages": [user("hi")], **extra}
    found = check_request(body)
    assert found is not None and found[:2] == (400, "invalid_request_error")
    assert message in found[2]


def test_prefill_is_refused_on_5x_and_taken_on_haiku_45() -> None:
    messages = [user("hi"), reply("Sure")]
    assert check_request({"model": "claude-sonnet-5-5", "messages": messages}) == (
        400,
        "invalid_request_error",
        PREFILL,
    )
    assert check_request({"model": "claude-haiku-4-5", "messages": messages}) is None
    assert check_request({"model": "claude-test-1", "messages": messages}) is None


def test_a_thinking_block_replayed_behind_a_changed_prefix_is_refused() -> None:
    model = "claude-sonnet-5-5"
    first = {"model": model, "system": "s", "messages": [user("q")]}
    block = {"type": "thinking", "thinking": "", "signature": thinking_signature(model, first, 1, "")}
    answered = [
        user("q"),
        {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]},
        user("next"),
    ]
    assert check_request({"model": model, "system": "s", "messages": answered}) is None
    marked = json.loads(json.dumps(answered))
    marked[0]["content"][0]["cache_control"] = {"type": "ephemeral"}  # markers are not content
    assert check_request({"model": model, "system": "s", "messages": marked}) is None
    changed = [user("q, reworded"), *answered[1:]]
    found = check_request({"model": model, "system": "s", "messages": changed})
    assert found is not None and "messages.1.content.0" in found[2]
    assert check_request({"model": model, "system": "other", "messages": answered}) is not None
    # Opus 5.5 can read Sonnet 5.5's block; Sonnet 5.5 drops Opus's without a word.
    assert check_request({"model": "claude-opus-5-5", "system": "s", "messages": answered}) is None
    opus_block = {**block, "signature": thinking_signature("claude-opus-5-5", first, 1, "")}
    dropped = [answered[0], {"role": "assistant", "content": [opus_block]}, answered[2]]
    assert check_request({"model": model, "system": "other", "messages": dropped}) is None
