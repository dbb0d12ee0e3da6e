"""The API's prompt cache, applied by the fake to the markers it receives.

Rules (from the platform docs): a request is one prefix, tools then system then messages, block by
block. A breakpoint (`cache_control` on a block, or the top-level param on the last block) asks for
the prefix up to it to be cached; at most 4 per request. On a request the longest cached prefix is
found by checking each breakpoint and up to 20 blocks before it. What is read is billed as
`cache_read_input_tokens`, what the breakpoints write beyond it as `cache_creation_input_tokens`,
the rest as `input_tokens`. A prefix shorter than the model's minimum is not cached. Changing
`tool_choice`, `thinking`, effort or the output format invalidates the message blocks only.

Tokens are estimated as 4 characters of canonical JSON each: exact enough for ratios.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "CacheOutcome",
    "PromptCache",
    "as_mapping",
    "breakpoint_errors",
    "canonical",
    "estimate_tokens",
    "miss_reason",
    "strip_cache_control",
]

MAX_BREAKPOINTS = 4
LOOKBACK = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def strip_cache_control(value: Any) -> Any:
    """A copy of `value` without any `cache_control` key, at any depth."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """JSON with sorted keys and no cache_control: the bytes the prefix is compared by."""
    return json.dumps(strip_cache_control(value), sort_keys=True, separators=(",", ":"))


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one (a request field of the wrong shape)."""
    return value if isinstance(value, Mapping) else {}


def estimate_tokens(value: Any) -> int:
    """About 4 characters of JSON per token."""
    return max(1, math.ceil(len(canonical(value)) / 4))


@dataclass(frozen=True, slots=True)
class _Block:
    part: str
    """tools, system or messages."""
    material: str
    tokens: int
    marker: Mapping[str, Any] | None


def _blocks(body: Mapping[str, Any]) -> list[_Block]:
    out = [
        _Block("tools", canonical(tool), estimate_tokens(tool), tool.get("cache_control"))
        for tool in body.get("tools") or []
    ]
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append(_Block("system", canonical(system), estimate_tokens(system), None))
    elif isinstance(system, list):
        out.extend(_Block("system", canonical(b), estimate_tokens(b), b.get("cache_control")) for b in system)
    output = as_mapping(body.get("output_config"))
    salt = canonical(
        [body.get("tool_choice"), body.get("thinking"), output.get("effort"), output.get("format")]
    )
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for j, block in enumerate(blocks):
            head = f"{salt}|" if i == 0 and j == 0 else ""
            out.append(
                _Block(
                    "messages",
                    f"{head}{message.get('role')}|{j}|{canonical(block)}",
                    estimate_tokens(block),
                    block.get("cache_control"),
                )
            )
    top = body.get("cache_control")
    if top and out:
        last = out[-1]
        out[-1] = _Block(last.part, last.material, last.tokens, top)
    return out


def breakpoint_errors(body: Mapping[str, Any]) -> str | None:
    """The 400 message for misplaced or too many breakpoints; None when they are fine."""
    count = 1 if body.get("cache_control") else 0
    for tool in body.get("tools") or []:
        count += "cache_control" in tool
    system = body.get("system")
    if isinstance(system, list):
        count += sum("cache_control" in b for b in system)
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" not in block:
                continue
            count += 1
            if block.get("type") in UNMARKABLE:
                return f"messages.{i}.content.{j}: cache_control cannot be set on thinking blocks"
            if block.get("type") == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}: cache_control cannot be set for empty text blocks"
    if count > MAX_BREAKPOINTS:
        return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {count}."
    return None


@dataclass(frozen=True, slots=True)
class CacheOutcome:
    """What one request was billed for, and its fingerprint for diagnostics."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cache_creation_1h_input_tokens: int
    fingerprint: tuple[str, str, str, tuple[str, ...]]

    def usage(self, output_tokens: int) -> dict[str, Any]:
        """The response's `usage` object."""
        one_hour = self.cache_creation_1h_input_tokens
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens - one_hour,
                "ephemeral_1h_input_tokens": one_hour,
            },
        }


class PromptCache:
    """Cached prefixes by model, with expiry; thread-safe use is the caller's (the fake's lock)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._entries: dict[str, tuple[float, float]] = {}
        """prefix key → (expiry, ttl seconds)."""

    def apply(self, body: Mapping[str, Any], *, min_tokens: int) -> CacheOutcome:
        """Bill `body` against the cache and store what its breakpoints ask for."""
        model = str(body.get("model") or "")
        blocks = _blocks(body)
        keys, totals = [], []
        digest, total = hashlib.sha256(model.encode()), 0
        for block in blocks:
            digest.update(b"\x1e" + block.material.encode())
            keys.append(f"{model}:{digest.hexdigest()}")
            total += block.tokens
            totals.append(total)
        now = self.clock()
        marks = [i for i, b in enumerate(blocks) if b.marker]
        read_at = -1
        for p in marks:
            for q in range(p, max(-1, p - LOOKBACK - 1), -1):
                entry = self._entries.get(keys[q])
                if entry is not None and entry[0] > now and q > read_at:
                    read_at = q
                    break
        if read_at >= 0:  # a hit refreshes the entry
            ttl = self._entries[keys[read_at]][1]
            self._entries[keys[read_at]] = (now + ttl, ttl)
        read = totals[read_at] if read_at >= 0 else 0
        written_to, one_hour_to = read_at, read_at
        for p in marks:
            if p <= read_at or totals[p] < min_tokens:
                continue
            ttl_name = str(as_mapping(blocks[p].marker).get("ttl", "5m"))
            ttl = TTL_SECONDS.get(ttl_name, 300.0)
            self._entries[keys[p]] = (now + ttl, ttl)
            written_to = max(written_to, p)
            if ttl_name == "1h":
                one_hour_to = max(one_hour_to, p)
        created = (totals[written_to] if written_to >= 0 else 0) - read
        one_hour = max(0, (totals[one_hour_to] if one_hour_to >= 0 else 0) - read)
        fingerprint = (
            model,
            canonical(body.get("tools") or []),
            canonical(body.get("system") or ""),
            tuple(b.material for b in blocks if b.part == "messages"),
        )
        return CacheOutcome(total - read - created, read, created, min(one_hour, created), fingerprint)


def miss_reason(
    previous: tuple[str, str, str, tuple[str, ...]] | None, outcome: CacheOutcome
) -> dict[str, Any] | None:
    """Why the previous request's prefix was not reused (`cache_miss_reason`), or None."""
    if previous is None:
        return {"type": "previous_message_not_found"}
    model, tools, system, messages = outcome.fingerprint
    missed = outcome.input_tokens + outcome.cache_creation_input_tokens
    if previous[0] != model:
        return {"type": "model_changed", "cache_missed_input_tokens": missed}
    if previous[1] != tools:
        return {"type": "tools_changed", "cache_missed_input_tokens": missed}
    if previous[2] != system:
        return {"type": "system_changed", "cache_missed_input_tokens": missed}
    if messages[: len(previous[3])] != previous[3]:
        return {"type": "messages_changed", "cache_missed_input_tokens": missed}
    return None
