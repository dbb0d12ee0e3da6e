"""search_text: a regex search over the workspace that a cancel or its time budget can always stop.

The stdlib `re` cannot be interrupted, so the `regex` package runs with a timeout in a worker thread
(decisions D6); matches found before the budget ran out are returned with a note.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex  # type: ignore[import-untyped]  # no stubs in the venv (types-regex)

from acp_agent.errors import ToolError, ToolTimeout
from acp_agent.tools.base import Tool, ToolContext, ToolResult
from acp_agent.tools.disk import (
    SNIFF_BYTES,
    Stopped,
    in_thread,
    prefix_for,
    time_left,
)
from acp_agent.tools.files import ListFiles, ReadFile
from acp_agent.tools.paths import display_path, glob_to_regex, resolve_inside, walk_tree
from acp_agent.tools.truncate import clip_line

__all__ = ["SearchText", "read_only_tools"]

# Regex parts whose meaning depends on where a line starts or ends: \A \Z \z \G, lookarounds,
# and turning a flag off (e.g. (?-m)). Patterns with them are searched line by line only.
_LINE_CONTEXT = re.compile(r"\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*-")
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")

@dataclass(frozen=True, slots=True)
class SearchText:
    """Search file contents line by line for a regex, within a time budget."""

    max_matches: int = 200
    max_line_chars: int = 300
    budget_seconds: float = 10.0
    max_file_bytes: int = 32 * 1024 * 1024

    name = "search_text"
    kind = "search"
    permission = None
    description = (
        "Search text files inside the working directory for lines matching a regular "
        "expression (Python `re` syntax, matched against each line separately, without its "
        "newline). `path` is a directory or a single file (default: the working directory); "
        "`glob` filters files by name (e.g. '*.py'; a glob containing '/' is matched against "
        "the path relative to `path`); `ignore_case` makes the match case-insensitive. Returns "
        "lines as 'relative/path:LINE: text', at most 200 matches and 300 characters per line. "
        "Skips binary files and .git, node_modules, .venv, __pycache__. The whole search has a "
        "10 s budget: a pattern that backtracks badly stops with the matches found so far."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "Directory or file; default '.'."},
            "glob": {"type": "string", "description": "File-name filter, e.g. '*.py'."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive match."},
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
        return await in_thread(lambda stop: self._search(args, ctx, stop))

    def _search(self, args: dict[str, Any], ctx: ToolContext, stop: threading.Event) -> ToolResult:
        pattern, shown = str(args["pattern"]), str(args.get("path") or ".")
        flags = regex.IGNORECASE if args.get("ignore_case") else 0
        try:
            per_line = regex.compile(pattern, flags)
            # One search over the whole file rules most files out ~50x faster than line by
            # line; only where it is exact (no anchors or lookarounds that see past a line).
            whole = None if _LINE_CONTEXT.search(pattern) else regex.compile(
                pattern, flags | regex.MULTILINE)
        except regex.error as exc:
            raise ToolError(f"invalid regex {pattern!r}: {exc}") from exc
        target = resolve_inside(ctx.cwd, shown)
        name_glob = str(args.get("glob") or "")
        matcher = glob_to_regex(name_glob) if name_glob else None
        if target.is_file():
            files: Iterator[tuple[Path, str]] = iter(((target, display_path(ctx.cwd, target)),))
        elif target.is_dir():
            prefix = prefix_for(ctx.cwd, target)
            files = ((p, prefix + rel) for p, rel, kind in walk_tree(target, ctx.cwd)
                     if kind == "file" and (matcher is None or matcher.match(
                         rel if "/" in name_glob else p.name)))
        else:
            raise ToolError(f"no such file or directory: {shown!r}")
        deadline = time.monotonic() + self.budget_seconds
        matches: list[str] = []
        skipped_large = skipped_binary = 0
        for path, where in files:
            if stop.is_set():
                raise Stopped
            try:
                with path.open("rb") as f:
                    if os.fstat(f.fileno()).st_size > self.max_file_bytes:
                        skipped_large += 1
                        continue
                    if b"\0" in (data := f.read(SNIFF_BYTES)):
                        skipped_binary += 1
                        continue
                    data += f.read()
            except OSError:
                continue  # unreadable files are skipped, as grep -s would
            text = data.decode("utf-8", errors="replace")
            stopped_at = self._scan(text, per_line, whole, where, deadline, matches)
            if stopped_at:  # the message carries the partial matches too, so it stands alone
                found = f"the {len(matches)} match(es) above" if matches else "no matches"
                note = (f"[search stopped after its {self.budget_seconds:g} s budget at "
                        f"{stopped_at}; the pattern may backtrack catastrophically: simplify it "
                        f"or narrow path/glob; {found} were found before stopping]")
                raise ToolTimeout("\n".join([*matches, note]), partial="\n".join(matches))
            if len(matches) >= self.max_matches:
                break
        notes = []
        if len(matches) >= self.max_matches:
            notes.append(f"[stopped at {self.max_matches} matches; more may exist: narrow the "
                         f"pattern, path or glob]")
        if skipped_large:
            notes.append(f"[skipped {skipped_large} file(s) larger than "
                         f"{self.max_file_bytes // (1024 * 1024)} MiB]")
        if skipped_binary and target.is_file():
            notes.append(f"[{shown!r} is a binary file and was not searched]")
        body = "\n".join(matches) if matches else f"No matches for {pattern!r} in {shown!r}."
        return ToolResult(text="\n".join([body, *notes]))

    def _scan(self, text: str, per_line: Any, whole: Any, where: str, deadline: float,
              matches: list[str]) -> str:
        """Append matching lines; return where the budget ran out ("path:LINE"), else ""."""
        try:
            if whole is not None and not whole.search(
                _TRAILING_CR.sub("", text) if "\r" in text else text, timeout=time_left(deadline)
            ):
                return ""
        except TimeoutError:
            return where
        for lineno, line in enumerate(text.removesuffix("\n").split("\n") if text else (), 1):
            line = line.rstrip("\r")
            try:
                found = per_line.search(line, timeout=time_left(deadline))
            except TimeoutError:
                return f"{where}:{lineno}"
            if found:
                matches.append(f"{where}:{lineno}: {clip_line(line, self.max_line_chars)}")
                if len(matches) >= self.max_matches:
                    break
        return ""


def read_only_tools() -> list[Tool]:
    """The tools that only look: safe to run without asking."""
    return [ReadFile(), ListFiles(), SearchText()]
