"""search_text: a regex search over the workspace that a cancel or its time budget can always stop.

With an rg binary the search is ripgrep's (`rg.py`): a process whose output is streamed and
which is killed at the cap, on cancel and at the budget. Without one (or for a pattern only
Python's syntax accepts) the stdlib `re` would not be interruptible, so the `regex` package runs
with a timeout in a worker thread (`python.py`, docs/decisions.md D6). Matches found before
the budget ran out are returned with a note.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.files.disk import in_thread
from acp_agent.tools.paths import name_glob
from acp_agent.tools.search.ignore import names_hidden
from acp_agent.tools.search.listing import Visibility
from acp_agent.tools.search.python import search_in_python
from acp_agent.tools.search.query import LINE_CONTEXT, Found, Query
from acp_agent.tools.search.rg import search_with_rg
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.truncate import clip_line

__all__ = ["SearchText"]

_MODES = ("content", "files_with_matches", "count")
_MAX_CONTEXT = 20
_NAMED_SKIPS = 5


@dataclass(frozen=True, slots=True)
class SearchText:
    """Search file contents line by line for a regex, within a time budget.

    With an rg binary the search runs there (streamed, killed at the cap, on cancel or timeout);
    without one, or for a pattern rg's syntax rejects, the `regex` package runs it in a worker
    thread with a timeout (D6). Both skip what `list_files` skips, and return the same lines.
    """

    max_matches: int = 200
    max_files: int = 1000
    max_line_chars: int = 300
    budget_seconds: float = 10.0
    max_file_bytes: int = 32 * 1024 * 1024
    ripgrep: bool | None = None
    """None: use rg when one is found; False: always the pure-Python path."""

    name = "search_text"
    kind = "search"
    permission = None
    read_only = True
    description = (
        "Search text files inside the working directory for lines matching a regular expression "
        "(matched against each line without its newline; ripgrep syntax, Python extras such as "
        "lookarounds also work). `path` is a directory or a single file (default: the working "
        "directory); `glob` filters files by name (e.g. '*.py'; a glob containing '/' is matched "
        "against the path relative to `path`); `ignore_case` makes the match case-insensitive. "
        "`output_mode`: 'content' (default) gives 'path:LINE: text' lines, at most 200 matches "
        "and 300 characters a line; `before`/`after` (or `context` for both) add up to 20 "
        "surrounding lines as 'path-LINE- text', groups split by '--'; 'files_with_matches' gives "
        "the paths only; 'count' gives 'path:N' (matching lines per file); at most 1000 files. "
        "Skips binary files, .git, hidden files (unless `glob` or `path` names them) and files "
        "ignored by .gitignore/.ignore rules; set `include_ignored: true` to search those too. "
        "Files over 32 MiB are not searched (the answer names them). "
        "The search has a 10 s budget and stops with what it found by then."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "Directory or file; default '.'."},
            "glob": {"type": "string", "description": "File-name filter, e.g. '*.py'."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive match."},
            "output_mode": {
                "type": "string",
                "enum": list(_MODES),
                "description": "content (default), files_with_matches or count.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": _MAX_CONTEXT,
                "description": "Lines shown before and after each match.",
            },
            "before": {
                "type": "integer",
                "minimum": 0,
                "maximum": _MAX_CONTEXT,
                "description": "Lines shown before each match.",
            },
            "after": {
                "type": "integer",
                "minimum": 0,
                "maximum": _MAX_CONTEXT,
                "description": "Lines shown after each match.",
            },
            "include_ignored": {
                "type": "boolean",
                "description": "Also search files that ignore rules leave out.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        pattern, path = args.get("pattern"), args.get("path")
        if not isinstance(pattern, str):
            return "Search"
        return f"Search {clip_line(pattern, 60)!r}" + (f" in {path}" if path else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown = str(args.get("path") or ".")
        glob = str(args.get("glob") or "")
        context = int(args.get("context") or 0)
        mode = str(args.get("output_mode") or "content")
        matcher = name_glob(glob) if glob else None
        target = ctx.resolve(shown)
        if not target.exists():
            raise ToolError(f"no such file or directory: {shown!r}")
        query = Query(
            pattern=str(args["pattern"]),
            ignore_case=bool(args.get("ignore_case")),
            mode=mode,
            before=int(args.get("before", context) or 0) if mode == "content" else 0,
            after=int(args.get("after", context) or 0) if mode == "content" else 0,
            seen=Visibility(
                include_ignored=bool(args.get("include_ignored")),
                include_hidden=names_hidden(glob),
                withheld=ctx.hidden.under(target),
            ),
            glob=glob,
            matcher=matcher,
        )
        found = Found(
            mode,
            self.max_matches if mode == "content" else self.max_files,
            self.max_line_chars,
            grouped=bool(query.before or query.after),
        )
        # Anchors and lookarounds keep Python's line-by-line meaning: those stay with `regex`.
        line_bound = LINE_CONTEXT.search(query.pattern) is not None
        rg = find_rg() if self.ripgrep is not False and target.is_dir() and not line_bound else None
        budget, max_bytes = self.budget_seconds, self.max_file_bytes
        if rg is not None:
            searched = await search_with_rg(
                rg, query, target, ctx.cwd, found, budget_seconds=budget, max_file_bytes=max_bytes
            )
            if searched is not None:
                return self._result(searched, query, shown)
            found = Found(found.mode, found.cap, found.max_line_chars, found.grouped)  # rg refused it

        def search(stop: threading.Event) -> ToolResult:
            searched = search_in_python(
                query, target, ctx.cwd, found, stop, budget_seconds=budget, max_file_bytes=max_bytes
            )
            return self._result(searched, query, shown)

        return await in_thread(search)

    def _result(self, found: Found, query: Query, shown: str) -> ToolResult:
        notes = []
        if found.full:
            what = "matches" if query.mode == "content" else "files"
            notes.append(f"[stopped at {found.cap} {what}; more may exist: narrow the pattern, path or glob]")
        if skipped := found.skipped_large:
            named = ", ".join(skipped[:_NAMED_SKIPS]) + (
                f" and {len(skipped) - _NAMED_SKIPS:,} more" if len(skipped) > _NAMED_SKIPS else ""
            )
            notes.append(
                f"[not searched: {len(skipped):,} file(s) larger than "
                f"{self.max_file_bytes // (1024 * 1024)} MiB: {named}]"
            )
        if found.binary_target:
            notes.append(f"[{shown!r} is a binary file and was not searched]")
        body = "\n".join(found.lines) if found.lines else f"No matches for {query.pattern!r} in {shown!r}."
        return ToolResult(text="\n".join([body, *notes]))
