"""What the editor is shown of a tool call, journaled with its result and replayed from there.

To add a kind of tool-call content (an image, a server tool's result): a field on `ToolCallShown`
with an empty default, filled in `ToolCallShown.of_result`, and rendered to ACP content in
`session/editor/updates.py:tool_content`; the live update, the replay and the preview then all show it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from acp_agent.tools.base import Preview, ToolResult
from acp_agent.turn.journal.journaled import journaled

__all__ = ["ShownDiff", "ShownLink", "ShownLocation", "ToolCallShown"]


class ShownLocation(NamedTuple):
    """A place the editor can follow: an absolute path and a 1-based line (None: the whole file)."""

    path: str
    line: int | None


class ShownDiff(NamedTuple):
    """A file change for the editor: `old_text` None means a new file."""

    path: str
    old_text: str | None
    new_text: str


class ShownLink(NamedTuple):
    """A page a call found or read (a web search's result, a fetched URL), for the editor to open."""

    uri: str
    title: str


@journaled
class ToolCallShown:
    """What the editor is shown of a tool call: its final update, its replay and its preview.

    One value, journaled with the call's result (`ToolResultEntry.shown`) and carried by the live
    `ToolCallFinished` event, so the live and the replayed update come from the same data.
    `hidden`: the call was never shown live (skipped by a limit), so a replay skips it too. None
    fields are unknown (an older or a cancelled call): the replay falls back to the result block.
    """

    title: str | None = None
    kind: str | None = None
    status: str | None = None
    raw_input: dict[str, Any] | None = None
    text: str | None = None
    locations: tuple[ShownLocation, ...] = ()
    diffs: tuple[ShownDiff, ...] = ()
    raw_output: dict[str, Any] | None = None
    hidden: bool = False
    links: tuple[ShownLink, ...] = ()
    """Pages the call found or read (a server tool's results), shown as `resource_link`s."""
    images: int = 0
    """How many images the call's result gave the model, shown too: they are the image blocks of
    the result's `tool_result` (journaled there once, never twice)."""
    steps: tuple[str, ...] = ()
    """What a subagent did, one short line per tool call it made, shown before its answer."""

    @classmethod
    def of_result(cls, title: str, kind: str, raw_input: dict[str, Any], result: ToolResult) -> ToolCallShown:
        """A finished call as its tool's result shows it."""
        return cls(
            title=title,
            kind=kind,
            status="failed" if result.is_error else "completed",
            raw_input=raw_input,
            text=result.text,
            locations=tuple(ShownLocation(str(path), line) for path, line in result.locations),
            diffs=tuple(ShownDiff(str(d.path), d.old_text, d.new_text) for d in result.diffs),
            raw_output=result.raw_output,
            images=sum(1 for block in result.media if block.get("type") == "image"),
            steps=result.steps,
        )

    @classmethod
    def of_preview(cls, preview: Preview) -> ToolCallShown:
        """What a call would do, shown with its permission question (`text`: None when empty)."""
        return cls(
            text=preview.text or None,
            locations=tuple(ShownLocation(str(path), line) for path, line in preview.locations),
            diffs=tuple(ShownDiff(str(d.path), d.old_text, d.new_text) for d in preview.diffs),
        )
