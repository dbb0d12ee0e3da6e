"""What the Messages API accepts as a history: one checker every test can use on a request body."""

from __future__ import annotations

import itertools
import json
from typing import Any

__all__ = ["assert_valid_history", "history_problems"]


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Every rule the history breaks (empty when valid).

    User first and last, roles alternating, no empty content or text, every tool_use answered by a
    tool_result in the very next message (results first, in order) and no orphan tool_result, and
    the whole of it encodable as UTF-8 JSON (no lone surrogate).
    """
    if not messages:
        return ["the request carried no messages"]
    problems: list[str] = []
    roles = [m.get("role") for m in messages]
    if roles[0] != "user" or roles[-1] != "user":
        problems.append(f"the history must start and end with a user message: {roles}")
    if any(a == b for a, b in itertools.pairwise(roles)):
        problems.append(f"roles do not alternate: {roles}")
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list) or not content:
            problems.append(f"message {index} has no content")
            continue
        if any(b.get("type") == "text" and not b.get("text") for b in content):
            problems.append(f"message {index} has an empty text block")
        if message.get("role") == "assistant":
            problems.extend(_answered(messages, index))
        elif index > 0:
            used = {
                b.get("id")
                for b in messages[index - 1].get("content") or []
                if isinstance(b, dict) and b.get("type") == "tool_use"
            }
            problems.extend(
                f"orphan tool_result {b.get('tool_use_id')} in message {index}"
                for b in content
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in used
            )
    try:
        json.dumps(messages, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        problems.append(f"the history is not UTF-8 encodable: {exc}")
    return problems


def _answered(messages: list[dict[str, Any]], index: int) -> list[str]:
    asked = [b.get("id") for b in messages[index]["content"] if b.get("type") == "tool_use"]
    if not asked:
        return []
    if index + 1 >= len(messages):
        return [f"message {index}: tool_use {asked} has no next message"]
    following = messages[index + 1].get("content") or []
    results = [b for b in following if isinstance(b, dict) and b.get("type") == "tool_result"]
    problems = []
    if [b.get("tool_use_id") for b in results] != asked:
        problems.append(
            f"message {index}: tool_use {asked} answered by {[b.get('tool_use_id') for b in results]}"
        )
    if following[: len(results)] != results:
        problems.append(f"message {index + 1}: tool_result blocks must come first")
    return problems


def assert_valid_history(messages: list[dict[str, Any]]) -> None:
    problems = history_problems(messages)
    assert not problems, "invalid history:\n" + "\n".join(problems)
