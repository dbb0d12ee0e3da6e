"""The tool seam: a name, an input schema, and an async `run` that returns a ToolResult.

A tool raises `ToolError` (or a subclass) for anything the model should hear about and retry;
the runner turns any other exception into a failed tool call as well, so a tool never ends a turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Tool", "ToolContext", "ToolResult"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may touch: the session's working directory (an absolute, resolved path)."""

    cwd: Path


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool produced.

    `text` goes back to the model as the tool_result and is shown to the editor;
    `locations` are absolute paths (with an optional 1-based line) the editor can follow.
    """

    text: str
    is_error: bool = False
    locations: tuple[tuple[Path, int | None], ...] = ()
    raw_output: dict[str, Any] | None = field(default=None)


class Tool(Protocol):
    """A tool the model can call.

    `kind` is one of read, edit, delete, move, search, execute, think, fetch, other.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: str

    def title(self, args: dict[str, Any]) -> str:
        """A short human title for the editor, e.g. "Read src/app.py"."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work. Raises ToolError for recoverable failures."""
        ...
