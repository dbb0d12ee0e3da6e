"""Scripted web search and web fetch for the fake: the blocks the API returns when it runs them.

    from acp_agent.testing import replies, web_replies

    api.script(web_replies.searched(web_replies.web_search("acp spec", [("ACP", "https://…")]),
                                    text="The spec says …"))

Each call is a `server_tool_use` block and its result block, in the API's shapes (the SDK's
`ServerToolUseBlock`, `WebSearchToolResultBlock`, `WebFetchToolResultBlock`); `error=` gives the
result's error form instead (`unavailable`, `max_uses_exceeded`, `url_not_accessible`, …). The fake
bills them as `usage.server_tool_use` and refuses a script that searches past `max_uses`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from acp_agent.testing.replies import Block, Message, ServerBlock, TextBlock

__all__ = ["searched", "server_tool_use", "web_fetch", "web_search"]

_ids = itertools.count(1)
RETRIEVED_AT = "2026-11-25T10:00:00Z"


def _new_id() -> str:
    return f"srvtoolu_fake_{next(_ids):06d}"


def server_tool_use(name: str, input: Mapping[str, Any], *, id: str | None = None) -> ServerBlock:
    """A `server_tool_use` block alone (a call the API paused, or that waits for client tools)."""
    return ServerBlock({"type": "server_tool_use", "id": id or _new_id(), "name": name, "input": dict(input)})


def web_search(
    query: str,
    results: Iterable[tuple[str, str]] = (),
    *,
    id: str | None = None,
    error: str | None = None,
) -> tuple[ServerBlock, ServerBlock]:
    """A search for `query` and its result: (title, url) pairs, or the error `error`."""
    use = server_tool_use("web_search", {"query": query}, id=id)
    content: Any
    if error is not None:
        content = {"type": "web_search_tool_result_error", "error_code": error}
    else:
        content = [
            {
                "type": "web_search_result",
                "title": title,
                "url": url,
                "encrypted_content": f"enc.{n}.{url}",
                "page_age": "2 days ago",
            }
            for n, (title, url) in enumerate(results)
        ]
    result = {"type": "web_search_tool_result", "tool_use_id": use.content["id"], "content": content}
    return use, ServerBlock(result)


def web_fetch(
    url: str,
    text: str = "",
    *,
    title: str | None = None,
    id: str | None = None,
    error: str | None = None,
) -> tuple[ServerBlock, ServerBlock]:
    """A fetch of `url` and its result: the page as a text document, or the error `error`."""
    use = server_tool_use("web_fetch", {"url": url}, id=id)
    content: dict[str, Any]
    if error is not None:
        content = {"type": "web_fetch_tool_result_error", "error_code": error}
    else:
        document: dict[str, Any] = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
        }
        if title is not None:
            document["title"] = title
        content = {"type": "web_fetch_result", "url": url, "content": document, "retrieved_at": RETRIEVED_AT}
    result = {"type": "web_fetch_tool_result", "tool_use_id": use.content["id"], "content": content}
    return use, ServerBlock(result)


def searched(
    *calls: Sequence[Block] | Block,
    text: str | None = None,
    stop_reason: str | None = "end_turn",
    usage: tuple[int, int] = (10, 5),
    **faults: Any,
) -> Message:
    """A reply of server tool calls (each a pair, or any block), then `text` when given."""
    blocks: list[Block] = []
    for call in calls:
        if isinstance(call, Sequence):
            blocks.extend(call)
        else:
            blocks.append(call)
    if text is not None:
        blocks.append(TextBlock(text))
    return Message(tuple(blocks), stop_reason, usage, **faults)
