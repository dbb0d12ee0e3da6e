"""read_file: a text file (or a window of its lines), or an image, within line and byte caps.

Every path goes through `resolve_inside` (`ToolContext.resolve`), and the agent's hidden paths
are never read, listed or found (`hidden.py`); the blocking filesystem work runs in a worker thread
that a cancel abandons at once and that stops itself at its next check (a shared stop flag), so
neither a cancel nor the per-tool timeout ever waits on the disk or on a runaway regex.
"""

from __future__ import annotations

import codecs
import io
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from acp_agent.errors import Stopped, ToolError
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.files.disk import (
    BLOCK,
    SNIFF_BYTES,
    in_thread,
    iter_lines,
    open_regular,
    os_error,
)
from acp_agent.tools.files.images import read_image

__all__ = ["ReadFile"]


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
        result = await self._read(args, ctx)
        return replace(result, read=(ctx.resolve(str(args["path"])),))

    async def _read(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
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
