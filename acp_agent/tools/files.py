"""The read-only file tools: read_file, list_files and search_text.

Every path goes through `resolve_inside`; the blocking filesystem work runs in a worker thread
that a cancel abandons at once and that stops itself at its next check (a shared stop flag), so
neither a cancel nor the per-tool timeout ever waits on the disk or on a runaway regex.
"""

from __future__ import annotations

import codecs
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import anyio.to_thread
import regex  # type: ignore[import-untyped]  # no stubs in the venv (types-regex)

from acp_agent.errors import ToolError, ToolTimeout
from acp_agent.tools.base import Tool, ToolContext, ToolResult
from acp_agent.tools.paths import display_path, glob_to_regex, resolve_inside, walk_tree
from acp_agent.tools.truncate import clip_line

__all__ = ["ListFiles", "ReadFile", "SearchText", "read_only_tools"]

SNIFF_BYTES = 8192  # like git: a NUL in the first 8 KiB means binary
_BLOCK = 1 << 20
# Regex parts whose meaning depends on where a line starts or ends: \A \Z \z \G, lookarounds,
# and turning a flag off (e.g. (?-m)). Patterns with them are searched line by line only.
_LINE_CONTEXT = re.compile(r"\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*-")
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")


class _Stopped(Exception):
    """The caller went away (cancel or timeout); the worker thread just ends."""


async def _in_thread(work: Callable[[threading.Event], ToolResult]) -> ToolResult:
    """Run `work(stop)` in a thread; on cancel, abandon it and raise its stop flag."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    finally:
        stop.set()


def _os_error(exc: OSError, shown: str) -> ToolError:
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"no such file or directory: {shown!r}")
    if isinstance(exc, IsADirectoryError):
        return ToolError(f"{shown!r} is a directory; use list_files to see what it holds")
    if isinstance(exc, PermissionError):
        return ToolError(f"permission denied: {shown!r}")
    return ToolError(f"cannot read {shown!r}: {exc.strerror or exc}")


def _lines(f: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Yield (line, full size): lines longer than `cap` are cut to `cap` bytes, never held whole."""
    while part := f.readline(cap + 1):
        if len(part) <= cap or part.endswith(b"\n"):
            yield part, len(part)
            continue
        size = len(part)
        while more := f.readline(_BLOCK):
            size += len(more)
            if more.endswith(b"\n"):
                break
        yield part[:cap], size


def _count_rest(f: BinaryIO, stop: threading.Event) -> int:
    count, last = 0, b"\n"
    while block := f.read(_BLOCK):
        if stop.is_set():
            raise _Stopped
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")


def _prefix(cwd: Path, top: Path) -> str:
    """What to put before a path relative to `top` to make it relative to the cwd."""
    shown = display_path(cwd, top)
    return "" if shown == "." else shown + "/"


def _left(deadline: float) -> float:
    """Seconds left before `deadline`; raises TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


@dataclass(frozen=True, slots=True)
class ReadFile:
    """Read a text file, or a window of its lines, within line and byte caps."""

    max_lines: int = 2000
    max_bytes: int = 256 * 1024

    name = "read_file"
    kind = "read"
    description = (
        "Read a UTF-8 text file inside the working directory and return its contents verbatim "
        "(no line numbers added). `path` is relative to the working directory (absolute paths "
        "must lie inside it). Optional `offset` is the 1-based line to start at and `limit` the "
        "number of lines to return. At most 2000 lines and 256 KiB are returned per call; when "
        "the output is cut, it ends with a bracketed note giving the line range shown, the total "
        "line count and the offset to call again with. Binary files are refused."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read, relative to the cwd."},
            "offset": {"type": "integer", "minimum": 1, "description": "1-based first line."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        path, offset = args.get("path"), args.get("offset")
        if not isinstance(path, str) or not path:
            return "Read file"
        return f"Read {path}" + (f" (from line {offset})" if isinstance(offset, int) else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown = str(args["path"])
        offset = int(args.get("offset") or 1)
        limit = args.get("limit")
        want = min(int(limit), self.max_lines) if limit is not None else self.max_lines
        user_window = limit is not None and int(limit) <= self.max_lines

        def work(stop: threading.Event) -> ToolResult:
            path = resolve_inside(ctx.cwd, shown)
            try:
                with path.open("rb") as f:
                    if b"\0" in f.read(SNIFF_BYTES):
                        raise ToolError(f"{shown!r} is a binary file; read_file reads text only")
                    f.seek(0)
                    return self._window(f, path, shown, offset, want, user_window, stop)
            except OSError as exc:
                raise _os_error(exc, shown) from exc

        return await _in_thread(work)

    def _window(self, f: BinaryIO, path: Path, shown: str, offset: int, want: int,
                user_window: bool, stop: threading.Event) -> ToolResult:
        out: list[str] = []
        used, lineno, cut, long_line, long_size = 0, 0, "", 0, 0
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        for chunk, size in _lines(f, self.max_bytes):
            lineno += 1
            if lineno % 4096 == 0 and stop.is_set():
                raise _Stopped
            if lineno < offset:
                continue
            if len(out) == want:
                cut = "limit" if user_window else "lines"
                break
            if out and used + len(chunk) > self.max_bytes:
                cut = "bytes"
                break
            if b"\0" in chunk:
                raise ToolError(f"{shown!r} is a binary file; read_file reads text only")
            if size > len(chunk):  # only the first line of a window can be this long
                long_line, long_size = lineno, size
                out.append(decoder.decode(chunk, final=False) + "\n")
                decoder.reset()
            else:
                out.append(chunk.decode("utf-8", errors="replace"))
            used += len(chunk)
        total = lineno + (_count_rest(f, stop) if cut else 0)
        if offset > max(total, 1):
            raise ToolError(f"offset {offset} is past the end of {shown!r} ({total} lines)")
        first, last = offset, offset + len(out) - 1
        text = "".join(out)
        if text and not text.endswith("\n"):
            text += "\n"
        notes = []
        if long_line:
            notes.append(f"[line {long_line} is {long_size:,} bytes long; only its first "
                         f"{self.max_bytes:,} bytes are shown]")
        if total == 0:
            notes.append("[empty file]")
        elif cut == "limit":
            notes.append(f"[showing lines {first}-{last} of {total}; "
                         f"call again with offset={last + 1} to read more]")
        elif cut:
            why = f" at the {self.max_bytes:,}-byte cap" if cut == "bytes" else ""
            notes.append(f"[truncated{why}: showing lines {first}-{last} of {total}; "
                         f"call again with offset={last + 1}]")
        raw = {"path": str(path), "startLine": first, "endLine": last, "totalLines": total,
               "truncated": cut in ("lines", "bytes") or bool(long_line)}
        return ToolResult(text=text + "\n".join(notes), locations=((path, offset),),
                          raw_output=raw)


@dataclass(frozen=True, slots=True)
class ListFiles:
    """List entries under a directory that match a glob, as sorted relative paths."""

    max_entries: int = 1000

    name = "list_files"
    kind = "search"
    description = (
        "List files and directories inside the working directory whose path (relative to "
        "`path`) matches the glob `pattern`. `*` and `?` match within one path segment, `**/` "
        "matches any number of directories (so '**/*.py' finds Python files at any depth, "
        "'*.py' only directly in `path`), `[abc]` is a character class. Returns paths relative "
        "to the working directory, sorted, one per line; directories end with '/'. Skips .git, "
        "node_modules, .venv and __pycache__, and does not follow symlinks. At most 1000 "
        "entries are returned, with a note saying how many were omitted."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob; default '**/*' (everything)."},
            "path": {"type": "string", "description": "Directory to list; default '.'."},
        },
        "required": [],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        pattern, path = args.get("pattern") or "**/*", args.get("path") or "."
        return f"List {pattern}" + (f" in {path}" if path != "." else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str(args.get("pattern") or "**/*").removeprefix("./")
        shown = str(args.get("path") or ".")

        def work(stop: threading.Event) -> ToolResult:
            top = resolve_inside(ctx.cwd, shown)
            if not top.is_dir():
                raise ToolError(f"{shown!r} is not a directory; use read_file to read it"
                                if top.exists() else f"no such directory: {shown!r}")
            matcher = glob_to_regex(pattern)
            prefix = _prefix(ctx.cwd, top)
            found: list[str] = []
            for _, rel, kind in walk_tree(top, ctx.cwd):
                if stop.is_set():
                    raise _Stopped
                if matcher.match(rel):
                    found.append(prefix + rel + ("/" if kind == "dir" else ""))
            found.sort()
            if not found:
                return ToolResult(text=f"No entries match {pattern!r} under {shown!r}.")
            text = "\n".join(found[: self.max_entries])
            omitted = len(found) - self.max_entries
            if omitted > 0:
                text += (f"\n[{omitted:,} more entries omitted (showing the first "
                         f"{self.max_entries:,} of {len(found):,}); narrow the pattern or path]")
            return ToolResult(text=text, locations=((top, None),))

        return await _in_thread(work)


@dataclass(frozen=True, slots=True)
class SearchText:
    """Search file contents line by line for a regex, within a time budget."""

    max_matches: int = 200
    max_line_chars: int = 300
    budget_seconds: float = 10.0
    max_file_bytes: int = 32 * 1024 * 1024

    name = "search_text"
    kind = "search"
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
        return await _in_thread(lambda stop: self._search(args, ctx, stop))

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
            prefix = _prefix(ctx.cwd, target)
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
                raise _Stopped
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
                _TRAILING_CR.sub("", text) if "\r" in text else text, timeout=_left(deadline)
            ):
                return ""
        except TimeoutError:
            return where
        for lineno, line in enumerate(text.removesuffix("\n").split("\n") if text else (), 1):
            line = line.rstrip("\r")
            try:
                found = per_line.search(line, timeout=_left(deadline))
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
