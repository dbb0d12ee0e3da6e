"""What the editor is shown of a server tool's call (web search, web fetch): a tool call, from blocks.

The API runs these calls inside a model request: the reply holds a `server_tool_use` block and,
later in the same reply (or in the continuation of a paused one), its result block. The live turn
announces the call when its `server_tool_use` is complete and finishes it at its result; session/load
replays the journaled reply's blocks through the same two functions, so both show the same call:
kind `search` or `fetch`, titled with the query or the URL, the results as text and links.
"""

from __future__ import annotations

from typing import Any

from acp_agent.model.stream_events import is_server_block
from acp_agent.tools.printable import one_line
from acp_agent.tools.truncate import clip_line
from acp_agent.turn.context.history import INTERRUPTED
from acp_agent.turn.events import ToolCallFinished, ToolCallStarted, ToolCallUpdated
from acp_agent.turn.journal.entries import ShownLink, ToolCallShown

__all__ = ["KINDS", "ServerCalls", "call_finished", "call_started", "is_server_block"]

KINDS = {"web_search": "search", "web_fetch": "fetch"}
"""ACP's tool kind of each server tool (any other: `other`)."""
MAX_LISTED = 20
"""Results a search's update lists and links: 3,000 results were one 9.3 MB update (issue 35);
the rest are counted in a note ("… and 2,980 more"), and all of them stay in the model's history."""
MAX_URL_CHARS = 2048
"""The longest URL shown or linked (the common browser limit); a longer one is counted only."""
TITLE_CHARS = 120


def call_started(block: dict[str, Any]) -> ToolCallStarted:
    """The announcement of a complete `server_tool_use` block."""
    name = str(block.get("name") or "server tool")
    raw = block.get("input")
    args = raw if isinstance(raw, dict) else {}
    return ToolCallStarted(str(block.get("id")), _title(name, args), KINDS.get(name, "other"), args, name)


def _title(name: str, args: dict[str, Any]) -> str:
    query, url = args.get("query"), args.get("url")
    if name == "web_search" and isinstance(query, str):
        return f"Search the web for {clip_line(one_line(query), 80)!r}"
    if name == "web_fetch" and isinstance(url, str):
        return f"Fetch {clip_line(url, 120)}"
    return name


def call_finished(block: dict[str, Any]) -> ToolCallFinished:
    """The final update of the call a result block answers (`tool_use_id`)."""
    call_id = str(block.get("tool_use_id"))
    content = block.get("content")
    kind = str(block.get("type"))
    if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
        what = {"web_search_tool_result": "Web search", "web_fetch_tool_result": "Web fetch"}.get(kind, kind)
        failed = ToolCallShown(status="failed", text=f"{what} failed: {content.get('error_code')}")
        return ToolCallFinished(call_id, failed)
    if kind == "web_search_tool_result" and isinstance(content, list):
        return ToolCallFinished(call_id, _search_results(content))
    if kind == "web_fetch_tool_result" and isinstance(content, dict):
        return ToolCallFinished(call_id, _fetched(content))
    return ToolCallFinished(call_id, ToolCallShown(status="completed"))


def _search_results(results: list[Any]) -> ToolCallShown:
    found = [r["url"] for r in results if isinstance(r, dict) and isinstance(r.get("url"), str)]
    if not found:
        return ToolCallShown(status="completed", text="No results.")
    links: list[ShownLink] = []
    for result in results:
        if len(links) == MAX_LISTED:
            break
        url = result.get("url") if isinstance(result, dict) else None
        if isinstance(url, str) and _linkable(url):
            links.append(ShownLink(url, _link_title(result.get("title"), url)))
    lines = [f"- {title}: {uri}" for uri, title in links]
    if len(found) > len(links):
        lines.append(f"… and {len(found) - len(links):,} more")
    count = f"{len(found):,} result{'s' if len(found) != 1 else ''}"
    return ToolCallShown(status="completed", text=f"{count}:\n" + "\n".join(lines), links=tuple(links))


def _linkable(url: str) -> bool:
    """Not too long to show, and with no control character (a URL cannot hold one)."""
    return len(url) <= MAX_URL_CHARS and url.isprintable()


def _link_title(title: Any, url: str) -> str:
    """The page's title as the API gave it, one printable line (or the URL, without one)."""
    shown = one_line(title) if isinstance(title, str) else ""
    return clip_line(shown, TITLE_CHARS) if shown else url


def _fetched(result: dict[str, Any]) -> ToolCallShown:
    url = str(result.get("url") or "")
    document = result.get("content")
    document = document if isinstance(document, dict) else {}
    title = document.get("title")
    source = document.get("source")
    source = source if isinstance(source, dict) else {}
    data = source.get("data")
    size = f" ({len(data):,} characters)" if isinstance(data, str) and source.get("type") == "text" else ""
    named = f": {_link_title(title, '')}" if isinstance(title, str) and one_line(title) else ""
    return ToolCallShown(
        status="completed",
        text=f"Fetched {one_line(clip_line(url, MAX_URL_CHARS))}{named}{size}",
        links=(ShownLink(url, _link_title(title, url)),) if url and _linkable(url) else (),
    )


class ServerCalls:
    """The server tool calls shown so far and not yet finished: one per turn's runner, and one
    per replay. A call left open when its run ends (a limit, a cancel, a reply cut short) is
    finished `failed`, as a tool call the turn did not run; a result that comes after is not shown."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[str, None] = {}

    def events(self, block: dict[str, Any]) -> list[ToolCallStarted | ToolCallUpdated | ToolCallFinished]:
        """The editor's events for one complete server block: a call announced (and running),
        or a shown call finished."""
        if block.get("type") == "server_tool_use":
            started = call_started(block)
            if started.call_id in self.open:
                return []
            self.open[started.call_id] = None
            return [started, ToolCallUpdated(started.call_id)]
        call_id = str(block.get("tool_use_id"))
        if call_id not in self.open:
            return []  # a result of a call never shown, or closed already
        del self.open[call_id]
        return [call_finished(block)]

    def close(self) -> list[ToolCallFinished]:
        """Finish every open call `failed` (the run ended before the API ran it)."""
        closed = [ToolCallFinished.of(call_id, "failed", INTERRUPTED) for call_id in self.open]
        self.open.clear()
        return closed
