"""What the real Messages API refuses, per model: the fake answers 400 exactly there (D13).

Written from the platform docs (late 2026) independently of the agent's own profiles
(`acp_agent.model.profiles`), so a test on the fake catches a profile that is wrong; a unit test
checks both tables against the same document. The messages are the API's own where the docs quote
them. A model id not in the table (`claude-test-1`, a gateway's) gets no per-model rule.

Thinking blocks are signed to the prefix that produced them (model, tools, system and the earlier
messages): replaying one behind a changed prefix is the 5.5 models' 400, a block written by a model
that cannot read it is dropped without a word, as the API does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acp_agent.testing.prompt_cache import as_mapping, canonical
from acp_agent.testing.rules.server_rules import (
    ALL_VERSIONS,
    BASIC_VERSIONS,
    is_server_continuation,
    misplaced_result,
    server_tool_error,
)

__all__ = ["RULES", "ModelRules", "check_request", "thinking_output", "thinking_signature"]

ALL_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
LOW_TO_HIGH = frozenset({"low", "medium", "high"})
SAMPLING = ("temperature", "top_p", "top_k")
PREFILL = (
    "This model does not support assistant message prefill. The conversation must end with a user message."
)
FORCED = 'tool_choice: type "tool" and "any" are not supported for this model.'
ENABLED = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
    'and "output_config.effort" to control thinking behavior.'
)
DISABLED_SONNET = (
    '"thinking.type.disabled" is not supported for this model. Use '
    '"thinking.type.between_tools" for the lowest thinking setting, or '
    '"thinking.type.adaptive" and "output_config.effort" to control thinking '
    "behavior."
)
DISABLED = (
    '"thinking.type.disabled" is not supported for this model. Use '
    '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
)
PREFIX = (
    "messages.{i}.content.{j}: this thinking block was produced behind a different prefix "
    "(system, tools or earlier messages changed, or a block was left out or moved). Keep the "
    "history append-only, or set thinking.block_binding.prefix_mismatch_behavior to "
    '"drop_block".'
)


@dataclass(frozen=True, slots=True)
class ModelRules:
    """One model's contract as the API enforces it."""

    window: int
    max_output: int
    thinking: frozenset[str]
    thinking_default: str
    efforts: frozenset[str] = ALL_EFFORTS
    disabled_efforts: frozenset[str] = ALL_EFFORTS
    """Effort levels at which `disabled` is accepted (when it is at all)."""
    forced_tool_choice: bool = False
    prefill: bool = False
    display_default: str = "omitted"
    prefix_check: bool = False
    min_cache: int = 512
    reads: frozenset[str] = frozenset()
    disabled_message: str = DISABLED
    server_tools: frozenset[str] = ALL_VERSIONS
    """The web search and web fetch versions it takes (`server_rules.py`)."""
    pdf: bool = True
    """PDF `document` blocks accepted (every current model)."""


M, K = 1_000_000, 1_000
RULES: dict[str, ModelRules] = {
    "claude-sonnet-5-5": ModelRules(
        M,
        128 * K,
        frozenset({"adaptive", "between_tools"}),
        "adaptive",
        prefix_check=True,
        reads=frozenset({"claude-sonnet-5", "claude-opus-4-8", "claude-haiku-4-5"}),
        disabled_message=DISABLED_SONNET,
    ),
    "claude-opus-5-5": ModelRules(
        M,
        128 * K,
        frozenset({"adaptive"}),
        "adaptive",
        prefix_check=True,
        reads=frozenset({"claude-sonnet-5-5"}),
    ),
    "claude-haiku-5-5": ModelRules(
        M,
        128 * K,
        frozenset({"adaptive", "disabled"}),
        "adaptive",
        disabled_efforts=LOW_TO_HIGH,
        forced_tool_choice=True,
        prefix_check=True,
    ),
    "claude-fable-5-1": ModelRules(M, 128 * K, frozenset({"adaptive"}), "adaptive", prefix_check=True),
    "claude-sonnet-5": ModelRules(
        M, 128 * K, frozenset({"adaptive", "disabled"}), "adaptive", forced_tool_choice=True, min_cache=1024
    ),
    "claude-opus-5": ModelRules(
        M,
        128 * K,
        frozenset({"adaptive", "disabled"}),
        "adaptive",
        disabled_efforts=LOW_TO_HIGH,
        forced_tool_choice=True,
    ),
    "claude-haiku-4-5": ModelRules(
        200 * K,
        64 * K,
        frozenset({"disabled", "enabled"}),
        "disabled",
        efforts=frozenset(),
        forced_tool_choice=True,
        prefill=True,
        display_default="summarized",
        min_cache=4096,
        server_tools=BASIC_VERSIONS,
    ),
}


def thinking_signature(producer: str, body: Mapping[str, Any], before: int, text: str) -> str:
    """The signature of a thinking block `producer` wrote after `messages[:before]` of `body`."""
    digest = hashlib.sha256(
        "\x1e".join(
            [
                producer,
                canonical(body.get("tools") or []),
                canonical(body.get("system") or ""),
                canonical(list(body.get("messages") or [])[:before]),
                text,
            ]
        ).encode()
    ).hexdigest()[:32]
    return f"fakesig.{producer}.{digest}"


def _error(message: str) -> tuple[int, str, str]:
    return 400, "invalid_request_error", message


def _thinking_errors(rules: ModelRules, body: Mapping[str, Any]) -> str | None:
    thinking = body.get("thinking")
    effort = as_mapping(body.get("output_config")).get("effort")
    if effort is not None and effort not in rules.efforts:
        return (
            "output_config.effort: this model does not support the effort parameter."
            if not rules.efforts
            else f"output_config.effort: {effort!r} is not supported."
        )
    if not isinstance(thinking, dict):
        return None
    kind = thinking.get("type")
    if kind not in rules.thinking:
        if kind == "enabled":
            return ENABLED
        if kind == "disabled":
            return rules.disabled_message
        return f'"thinking.type.{kind}" is not supported for this model.'
    extra = set(thinking) - {"type"}
    if kind == "disabled":
        if extra:
            return f"thinking.disabled.{sorted(extra)[0]}: Extra inputs are not permitted"
        if effort is not None and effort not in rules.disabled_efforts:
            return f'"thinking.type.disabled" is not supported with effort "{effort}" for this model.'
    if kind == "between_tools":
        if extra:
            return f"thinking.between_tools.{sorted(extra)[0]}: Extra inputs are not permitted"
        if effort is not None and effort not in LOW_TO_HIGH:
            return f'"thinking.type.between_tools" is not supported with effort "{effort}".'
    if kind == "enabled" and not isinstance(thinking.get("budget_tokens"), int):
        return "thinking.enabled.budget_tokens: Field required"
    return None


def _replayed_thinking(model: str, rules: ModelRules, body: Mapping[str, Any]) -> str | None:
    """The prefix check: a readable block of a known model whose prefix changed is a 400."""
    for i, message in enumerate(body.get("messages") or []):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for j, block in enumerate(message["content"]):
            if not isinstance(block, dict) or block.get("type") != "thinking":
                continue
            signature = str(block.get("signature") or "")
            parts = signature.split(".")
            if len(parts) != 3 or parts[0] != "fakesig":
                continue  # another account's block: dropped without a word
            producer = parts[1]
            if producer != model and producer not in rules.reads:
                continue  # a block this model cannot read: dropped without a word
            expected = thinking_signature(producer, body, i, str(block.get("thinking") or ""))
            if signature != expected and rules.prefix_check:
                return PREFIX.format(i=i, j=j)
    return None


def check_request(body: Mapping[str, Any]) -> tuple[int, str, str] | None:
    """(status, error type, message) of the 400 the API gives this request; None: accepted."""
    model = str(body.get("model") or "")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens < 1:  # every model
        return _error("max_tokens: Input should be greater than or equal to 1")
    rules = RULES.get(model)
    server = server_tool_error(model, body.get("tools"), rules.server_tools if rules else None)
    if server is not None:
        return _error(server)
    misplaced = misplaced_result(body.get("messages"))
    if misplaced is not None:
        return _error(misplaced)
    if rules is None:
        return None
    if isinstance(max_tokens, int) and max_tokens > rules.max_output:
        return _error(
            f"max_tokens: {max_tokens} > {rules.max_output}, which is the maximum "
            f"allowed number of output tokens for {model}"
        )
    problem = _thinking_errors(rules, body)
    if problem:
        return _error(problem)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        if not rules.forced_tool_choice:
            return _error(FORCED)
        thinking = body.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") == "enabled":
            return _error("Thinking may not be enabled when tool_choice forces tool use.")
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and not rules.prefill and not is_server_continuation(last):
        return _error(PREFILL)
    for name in SAMPLING:
        if name in body and not (name == "temperature" and body[name] == 1):
            return _error(f"{name}: only the default value is supported for this model.")
    problem = _replayed_thinking(model, rules, body)
    return _error(problem) if problem else None


def thinking_output(body: Mapping[str, Any]) -> tuple[bool, bool] | None:
    """How the model returns thinking under this request: (any blocks, their text shown).

    Thinking off or a forced tool: no thinking blocks. Display "omitted" (the 5.x default): empty
    text. None for a model without rules (the script's blocks go out as written).
    """
    rules = RULES.get(str(body.get("model") or ""))
    if rules is None:
        return None
    thinking = as_mapping(body.get("thinking"))
    kind = thinking.get("type", rules.thinking_default)
    display = "summarized" if kind == "between_tools" else thinking.get("display", rules.display_default)
    choice = body.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    return kind != "disabled" and not forced, display != "omitted"
