"""Replies chosen by what a request says: for conversations that interleave on one fake.

A turn that runs subagents sends the requests of several conversations at once (the parent's and
each child's), in an order no test can script. A `Route` serves its own queue of replies to the
requests its predicate matches (`FakeMessagesAPI.route`), before the fake's plain script; the
predicates here tell a conversation by its system prompt or by its first user message (a
subagent's task).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp_agent.testing.replies import Reply, ReplyFactory

__all__ = ["RequestMatch", "Route", "first_prompt_has", "system_has"]

RequestMatch = Callable[[dict[str, Any]], bool]
"""A predicate on a request's parsed JSON body."""


@dataclass(slots=True)
class Route:
    """Replies for the requests `when` matches: its queue in order, then `otherwise` (if given)
    for every further match; with neither left, a match falls through to the next route and then
    to the fake's script."""

    when: RequestMatch
    replies: deque[Reply | ReplyFactory] = field(default_factory=deque)
    otherwise: Reply | ReplyFactory | None = None
    served: int = 0
    """How many requests this route answered."""

    def take(self, body: dict[str, Any]) -> Reply | ReplyFactory | None:
        """The reply for `body`, or None when this route does not answer it."""
        if not self.when(body):
            return None
        planned = self.replies.popleft() if self.replies else self.otherwise
        if planned is not None:
            self.served += 1
        return planned


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def system_has(text: str) -> RequestMatch:
    """Requests whose system prompt (a string or text blocks) contains `text`."""
    return lambda body: text in _text_of(body.get("system"))


def first_prompt_has(text: str) -> RequestMatch:
    """Requests whose first user message contains `text`: one conversation (a subagent's task,
    or the prompt that began a session)."""

    def match(body: dict[str, Any]) -> bool:
        messages = body.get("messages")
        first = messages[0] if isinstance(messages, list) and messages else None
        return (
            isinstance(first, dict) and first.get("role") == "user" and text in _text_of(first.get("content"))
        )

    return match
