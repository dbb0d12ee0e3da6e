"""What the Messages API refuses in its server tools (web search, web fetch), and what a scripted
reply may do with them.

The API's side, from the platform docs and the SDK's types (late 2026): a tool version the model
does not take is a 400, so is an unknown version, a `max_uses` below 1, or `allowed_domains` with
`blocked_domains`. A result block must follow its `server_tool_use` in the same message. A reply
that ends `pause_turn` is continued by sending it back as the last (assistant) message: not a
prefill, which the 5.x models refuse.

The script's side: a reply that searches more often than the request's `max_uses` allows, or uses
a server tool the request did not offer, is a broken test (the real API could not have answered
so): the fake says so with a 500, and the test fails. Its `usage.server_tool_use` is counted from
its blocks, as the API bills them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ALL_VERSIONS",
    "BASIC_VERSIONS",
    "is_server_continuation",
    "misplaced_result",
    "script_error",
    "server_tool_error",
    "server_usage",
]

SEARCH_VERSIONS = ("web_search_20250305", "web_search_20260209", "web_search_20260318")
FETCH_VERSIONS = ("web_fetch_20250910", "web_fetch_20260209", "web_fetch_20260309", "web_fetch_20260318")
ALL_VERSIONS = frozenset(SEARCH_VERSIONS + FETCH_VERSIONS)
BASIC_VERSIONS = frozenset({"web_search_20250305", "web_fetch_20250910"})
"""What Haiku 4.5 takes: dynamic filtering (20260209 on) needs Claude 4.6 or later."""
_NAMES = {"web_search": SEARCH_VERSIONS, "web_fetch": FETCH_VERSIONS}
_RESULTS = {"web_search_tool_result": "web_search", "web_fetch_tool_result": "web_fetch"}
REFUSED_USE = "max_uses_exceeded"
"""The error a result carries when the API refused the call: not a search that ran."""


def _name_of(kind: str) -> str | None:
    return next((name for name in _NAMES if kind.startswith(name + "_")), None)


def server_tool_error(model: str, tools: Any, accepted: frozenset[str] | None) -> str | None:
    """The 400 message for the request's server tools, or None. `accepted`: the versions the
    model takes (None: any known version, for a model without rules)."""
    if not isinstance(tools, list):
        return None
    for i, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        name = _name_of(kind) if isinstance(kind, str) else None
        if name is None:
            continue
        if kind not in ALL_VERSIONS:
            return f"tools.{i}: Input tag '{kind}' found using 'type' does not match any of the expected tags"
        if accepted is not None and kind not in accepted:
            return f"tools.{i}.type: '{kind}' is not supported by {model}"
        if tool.get("name") != name:
            return f"tools.{i}.name: Input should be '{name}'"
        max_uses = tool.get("max_uses")
        if max_uses is not None and (
            isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1
        ):
            return f"tools.{i}.max_uses: Input should be greater than 0"
        if tool.get("allowed_domains") is not None and tool.get("blocked_domains") is not None:
            return f"tools.{i}: Cannot specify both allowed_domains and blocked_domains."
    return None


def misplaced_result(messages: Any) -> str | None:
    """The 400 for a server tool result without its `server_tool_use` before it in its message."""
    if not isinstance(messages, list):
        return None
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        used: set[str] = set()
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "server_tool_use":
                used.add(str(block.get("id")))
            elif block.get("type") in _RESULTS and str(block.get("tool_use_id")) not in used:
                kind = block["type"]
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `{kind}` blocks: "
                    f"{block.get('tool_use_id')}. Each `{kind}` block must have a corresponding "
                    "`server_tool_use` block before it."
                )
    return None


def is_server_continuation(message: Mapping[str, Any]) -> bool:
    """A trailing assistant message that a server tool paused (`pause_turn`): sent back to go on."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "server_tool_use" for b in content
    )


def _uses(blocks: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Calls per server tool name that the API ran in this reply: one per result block (a call
    paused without its result runs, and is counted, in the reply that holds its result), the
    API's own `max_uses_exceeded` refusals aside."""
    counts: dict[str, int] = {}
    for block in blocks:
        name = _RESULTS.get(str(block.get("type")))
        if name is not None and _error_code(block.get("content")) != REFUSED_USE:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _error_code(content: Any) -> Any:
    return content.get("error_code") if isinstance(content, dict) else None


def server_usage(blocks: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """The reply's `usage.server_tool_use`, or None when it used no server tool."""
    counts = _uses(blocks)
    if not counts:
        return None
    return {
        "web_search_requests": counts.get("web_search", 0),
        "web_fetch_requests": counts.get("web_fetch", 0),
    }


def script_error(tools: Any, blocks: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the real API could not have sent these blocks for a request with `tools`, or None."""
    offered: dict[str, Mapping[str, Any]] = {}
    for tool in tools if isinstance(tools, list) else []:
        name = _name_of(str(tool.get("type"))) if isinstance(tool, dict) else None
        if name is not None:
            offered[name] = tool
    for name, count in _uses(blocks).items():
        if name not in offered:
            return f"fake: the script uses {name}, which the request does not offer"
        cap = offered[name].get("max_uses")
        if isinstance(cap, int) and count > cap:
            return f"fake: the script uses {name} {count} times, but the request's max_uses is {cap}"
    return None
