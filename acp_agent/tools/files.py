"""The read-only file tools: read_file, list_files and search_text.

Every path goes through `resolve_inside` (`ToolContext.resolve`), and the agent's hidden paths
are never read, listed or found (`hidden.py`); the blocking filesystem work runs in a worker thread
that a cancel abandons at once and that stops itself at its next check (a shared stop flag), so
neither a cancel nor the per-tool timeout ever waits on the disk or on a runaway regex.
"""

from __future__ import annotations

import codecs
import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from acp_agent.errors import Stopped, ToolError
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.disk import (
    BLOCK,
    SNIFF_BYTES,
    in_thread,
    iter_lines,
    open_regular,
    os_error,
    prefix_for,
)
from acp_agent.tools.ignore import names_hidden
from acp_agent.tools.images import read_image
from acp_agent.tools.listing import Visibility, list_files
from acp_agent.tools.paths import glob_to_regex
from acp_agent.tools.ripgrep import find_rg
from acp_agent.tools.shown import shown_path

__all__ = ["ListFiles", "ReadFile"]


def _count_rest(f: BinaryIO, stop: threading.Event) -> int:
    count, last = 0, b"\n"
    while block := f.read(BLOCK):
        if stop.is_set():
            raise Stopped
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")


@dataclass(frozen=True, slots=True)
class ReadFile:
    """Read a text file, or a window of its lines, within line and byte caps."""

    max_lines: int = 2000
    max_bytes: int = 256 * 1024

    name = "read_file"
    kind = "read"
    permission = None
    read_only = True
    description = (
        "Read a UTF-8 text file inside the working directory and return its contents verbatim "
        "(no line numbers added). `path` is relative to the working directory (absolute paths "
        "must lie inside it). Optional `offset` is the 1-based line to start at and `limit` the "
        "number of lines to return. At most 2000 lines and 256 KiB are returned per call; when "
        "the output is cut, it ends with a bracketed note giving the line range shown, the total "
        "line count and the offset to call again with. PNG, JPEG, GIF and WebP images (up to "
        "3.75 MB) are returned as images for you to look at; other binary files are refused."
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

        # Images are read from disk on both paths (an editor's buffers hold text only).
        picture = await in_thread(lambda stop: read_image(ctx.resolve(shown), shown, stop))
        if picture is not None:
            return picture
        if ctx.fs is not None:  # the editor's buffers (fs/read_text_file): same window and caps
            path = ctx.resolve(shown)
            if path.is_dir():
                raise ToolError(f"{shown!r} is a directory; use list_files to see what it holds")
            data = (await ctx.fs.read_text(path)).encode("utf-8", errors="surrogatepass")

            def window(stop: threading.Event) -> ToolResult:
                if b"\0" in data[:SNIFF_BYTES]:
                    raise ToolError(f"{shown!r} is a binary file; read_file reads text only")
                return self._window(io.BytesIO(data), path, shown, offset, want, user_window, stop)

            return await in_thread(window)

        def work(stop: threading.Event) -> ToolResult:
            path = ctx.resolve(shown)
            try:
                with open_regular(path, shown) as f:
                    if b"\0" in f.read(SNIFF_BYTES):
                        raise ToolError(f"{shown!r} is a binary file; read_file reads text only")
                    f.seek(0)
                    return self._window(f, path, shown, offset, want, user_window, stop)
            except OSError as exc:
                raise os_error(exc, shown) from exc

        return await in_thread(work)

    def _window(
        self,
        f: BinaryIO,
        path: Path,
        shown: str,
        offset: int,
        want: int,
        user_window: bool,
        stop: threading.Event,
    ) -> ToolResult:
        out: list[str] = []
        used, lineno, cut, long_line, long_size = 0, 0, "", 0, 0
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        for chunk, size in iter_lines(f, self.max_bytes):
            lineno += 1
            if lineno % 4096 == 0 and stop.is_set():
                raise Stopped
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
            notes.append(
                f"[line {long_line} is {long_size:,} bytes long; only its first "
                f"{self.max_bytes:,} bytes are shown]"
            )
        if total == 0:
            notes.append("[empty file]")
        elif cut == "limit":
            notes.append(
                f"[showing lines {first}-{last} of {total}; call again with offset={last + 1} to read more]"
            )
        elif cut:
            why = f" at the {self.max_bytes:,}-byte cap" if cut == "bytes" else ""
            notes.append(
                f"[truncated{why}: showing lines {first}-{last} of {total}; "
                f"call again with offset={last + 1}]"
            )
        raw = {
            "path": str(path),
            "startLine": first,
            "endLine": last,
            "totalLines": total,
            "truncated": cut in ("lines", "bytes") or bool(long_line),
        }
        return ToolResult(text=text + "\n".join(notes), locations=((path, offset),), raw_output=raw)


@dataclass(frozen=True, slots=True)
class ListFiles:
    """List the files under a directory that match a glob, as sorted relative paths.

    Ignored and hidden files are left out as ripgrep leaves them out (`ignore.py`); `rg --files`
    does the walk when there is an rg, else the same rules are applied in Python.
    """

    max_entries: int = 1000
    ripgrep: bool | None = None
    """None: use rg when one is found; False: always the pure-Python path."""

    name = "list_files"
    kind = "search"
    permission = None
    read_only = True
    description = (
        "List files inside the working directory whose path (relative to `path`) matches the "
        "glob `pattern`. `*` and `?` match within one path segment, `**/` matches any number of "
        "directories (so '**/*.py' finds Python files at any depth, '*.py' only directly in "
        "`path`), `[abc]` is a character class. Returns file paths relative to the working "
        "directory, sorted, one per line (directories show in their files' paths). Like git and "
        "ripgrep, leaves out files matched by .gitignore, .ignore and .git/info/exclude rules, "
        "hidden files (unless `pattern` names them, e.g. '.github/**') and .git; set "
        "`include_ignored: true` to list ignored files too. Symlinks are not followed. At most "
        "1000 paths are returned, with a note saying how many were omitted."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob; default '**/*' (every file)."},
            "path": {"type": "string", "description": "Directory to list; default '.'."},
            "include_ignored": {
                "type": "boolean",
                "description": "Also list files that ignore rules leave out.",
            },
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
        top = ctx.resolve(shown)
        if not top.is_dir():
            raise ToolError(
                f"{shown!r} is not a directory; use read_file to read it"
                if top.exists()
                else f"no such directory: {shown!r}"
            )
        matcher = glob_to_regex(pattern)
        seen = Visibility(
            include_ignored=bool(args.get("include_ignored")),
            include_hidden=names_hidden(pattern),
            withheld=ctx.hidden.under(top),
        )
        rg = find_rg() if self.ripgrep is not False else None
        last = pattern.rsplit("/", 1)[-1]
        found = await list_files(
            top, seen, lambda rel: matcher.match(rel) is not None, self.max_entries, rg, name_glob=last
        )
        if not found.total:
            return ToolResult(text=f"No entries match {pattern!r} under {shown!r}.")
        prefix = prefix_for(ctx.cwd, top)
        text = "\n".join(shown_path(prefix + rel) for rel in found.first())
        omitted = found.total - self.max_entries
        if omitted > 0:
            text += (
                f"\n[{omitted:,} more entries omitted (showing the first "
                f"{self.max_entries:,} of {found.total:,}); narrow the pattern or path]"
            )
        return ToolResult(text=text, locations=((top, None),))
