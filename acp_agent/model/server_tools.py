"""The API's web server tools: which versions a session offers, and their definitions in `tools`.

`web_search` and `web_fetch` run on Anthropic's side: the reply holds a `server_tool_use` block and
its result block (`web_search_tool_result`, `web_fetch_tool_result`), which go back unchanged and
never get a `tool_result` from the agent. A model's profile says which version of each it takes
(`profiles.py`); `--web off` offers neither.

`tools` is the head of the cached prefix, and on the 5.5 models the thinking blocks are signed to
it (claude-models.md rule 6): the definitions are the same bytes on every request, except the
search tool's `max_uses`, which carries what is left of the turn's search budget
(`search_allowance`, docs/decisions.md D26).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acp_agent.settings import domain_lists

__all__ = [
    "SERVER_RESULT_TYPES",
    "WEB_FETCH_BASIC",
    "WEB_FETCH_NEWEST",
    "WEB_SEARCH_BASIC",
    "WEB_SEARCH_NEWEST",
    "WebTools",
    "search_allowance",
    "web_tools",
    "web_versions",
]

WEB_SEARCH_BASIC = "web_search_20250305"
"""The basic web search: every model that has web search takes it (Haiku 4.5 takes only this)."""
WEB_FETCH_BASIC = "web_fetch_20250910"
WEB_SEARCH_NEWEST = "web_search_20260318"
"""Dynamic filtering (the model filters results with code before reading them), Claude 4.6+."""
WEB_FETCH_NEWEST = "web_fetch_20260318"

SERVER_RESULT_TYPES = frozenset({"web_search_tool_result", "web_fetch_tool_result"})
"""The result blocks of the web server tools, each answering a `server_tool_use` by `tool_use_id`."""


@dataclass(frozen=True, slots=True)
class WebTools:
    """What a session offers of the web: on or off, each tool's version, the domain rules.

    `search` / `fetch` are tool types (`web_search_20260318`), None where the model has none.
    At most one of the domain lists is set (the API refuses both at once); they apply to both tools.
    """

    enabled: bool = True
    search: str | None = None
    fetch: str | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    names: frozenset[str] = frozenset({"web_search", "web_fetch"})
    """Which of the two the session offers at all (a client's tool set may leave one out)."""

    def definitions(self, *, max_uses: int | None) -> list[dict[str, Any]]:
        """The server tools for `tools`: search (unless `max_uses` is 0), then fetch.

        `max_uses` None leaves the field out (no search budget).
        """
        if not self.enabled:
            return []
        domains: dict[str, Any] = {}
        if self.allowed_domains:
            domains["allowed_domains"] = list(self.allowed_domains)
        elif self.blocked_domains:
            domains["blocked_domains"] = list(self.blocked_domains)
        out: list[dict[str, Any]] = []
        if self.search is not None and max_uses != 0 and "web_search" in self.names:
            search: dict[str, Any] = {"type": self.search, "name": "web_search", **domains}
            if max_uses is not None:
                search["max_uses"] = max_uses
            out.append(search)
        if self.fetch is not None and "web_fetch" in self.names:
            out.append({"type": self.fetch, "name": "web_fetch", **domains})
        return out


def search_allowance(budget: int | None, used: int) -> int | None:
    """The search tool's `max_uses` for the next request of a turn that has searched `used` times.

    The largest power of two within what is left of `budget`, so the API can never search past
    it (exact), while the value changes only when what is left falls below it: with the default
    budget of 10 it is 8 until the third search of a turn, and a turn of one or two searches
    sends the same bytes as one of none (every change of `tools` rewrites the whole cached
    prefix). 0: nothing left, the search tool is not offered (the API refuses `max_uses` 0).
    None: no budget, no `max_uses`.
    """
    if budget is None:
        return None
    left = budget - used
    return 0 if left <= 0 else 1 << (left.bit_length() - 1)


def web_versions(search: str | None, fetch: str | None, capability: Any) -> dict[str, str | None]:
    """A profile's web tool versions (`search`, `fetch`) once the Models API's
    `capabilities.server_tools` is known.

    It says only whether some version of web search exists, and nothing of web fetch: no web
    search means neither tool; a model the built-in table does not know that has it gets the
    basic versions of both (every model with web search takes those).
    """
    if not isinstance(capability, Mapping):
        return {}
    entry = capability.get("web_search")
    has_search = isinstance(entry, Mapping) and bool(entry.get("supported"))
    if capability.get("supported") is False or not has_search:
        return {"web_search": None, "web_fetch": None}
    return {"web_search": search or WEB_SEARCH_BASIC, "web_fetch": fetch or WEB_FETCH_BASIC}


def web_tools(
    *,
    enabled: bool,
    allowed: Any = None,
    blocked: Any = None,
    names: tuple[str, str] = ("allowed_domains", "blocked_domains"),
) -> WebTools:
    """The user's web choice, checked (`settings.py:domain_lists`); the versions are the model's.

    Raises:
        ValueError: a bad domain, or both lists given (the API refuses that), naming the field.
    """
    allowed_domains, blocked_domains = domain_lists(allowed, blocked, names)
    return WebTools(enabled, allowed_domains=allowed_domains, blocked_domains=blocked_domains)
