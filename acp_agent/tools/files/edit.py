"""The editing tools: write_file (create or overwrite) and edit_file (replace one exact string).

Both go through `ctx.fs` (the editor's buffers over ACP `fs/*`) when the session injected one and
through the local disk otherwise, with the same results either way. Each change comes back as a
whole-file `Diff` the editor can show and a location at the first changed line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import Diff, FileSystem, Permission, Preview, ToolContext, ToolResult
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.paths import display_path

__all__ = ["DIFF_MAX_BYTES", "EditFile", "WriteFile", "changed_lines"]

# Above this size (old or new text) no diff is attached: the editor would get megabytes per call.
DIFF_MAX_BYTES = 1024 * 1024
_MAX_LINES_LISTED = 10
# Typed, so that `permission = _EDIT` on a class matches the Tool protocol's attribute type.
_EDIT: Permission | None = "edit"


def _fs(ctx: ToolContext) -> FileSystem:
    return ctx.fs if ctx.fs is not None else LocalFileSystem()


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def changed_lines(old: str, new: str) -> tuple[int, int, int]:
    """(first changed line of `new`, 1-based; lines added; lines removed).

    Counts the region between the common leading and trailing lines: exact for one contiguous
    change, an upper bound for several, and linear in the file size.
    """
    a, b = _lines(old), _lines(new)
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    first = head + 1 if head < len(b) else max(len(b), 1)
    return first, len(b) - head - tail, len(a) - head - tail


def _too_big(text: str | None) -> bool:
    if text is None:
        return False
    return len(text) > DIFF_MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > DIFF_MAX_BYTES


def _diffs(path: Path, old: str | None, new: str) -> tuple[tuple[Diff, ...], str]:
    """The diff for the editor, or none and a note saying why."""
    if _too_big(old) or _too_big(new):
        return (), f"\n[diff not shown: the file is larger than {DIFF_MAX_BYTES // (1024 * 1024)} MiB]"
    return (Diff(path, old, new),), ""


def _target(ctx: ToolContext, shown: Any) -> tuple[Path, str]:
    """The confined absolute path and how to name it to the model."""
    path = ctx.resolve(str(shown))
    if path.is_dir():
        raise ToolError(f"{shown!r} is a directory, not a file")
    return path, display_path(ctx.roots, path)


async def _current(path: Path, fs: FileSystem) -> tuple[str | None, bool]:
    """(the file's text or None when it does not exist, whether it exists but is not text)."""
    if not path.exists():  # noqa: ASYNC240 (one stat, as run() did before)
        return None, False
    try:
        return await fs.read_text(path), False
    except ToolError:  # binary or not UTF-8: it can be overwritten, but there is no text to diff
        return None, True


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@dataclass(frozen=True, slots=True)
class WriteFile:
    """Create a file, or replace all of an existing file's contents."""

    name = "write_file"
    names_its_writes = True  # the checkpoint keeps the file's before-image: no snapshot needed
    kind = "edit"
    permission = _EDIT
    description = (
        "Create a UTF-8 text file, or overwrite an existing one, with exactly `content`. `path` "
        "is relative to the working directory (absolute paths must lie inside it); missing parent "
        "directories are created. To change part of an existing file prefer edit_file, which "
        "needs only the changed text. Returns a one-line summary of what changed."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to write, relative to the cwd."},
            "content": {"type": "string", "description": "The complete new contents of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        path = args.get("path")
        return f"Write {path}" if isinstance(path, str) and path else "Write file"

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The whole-file diff the write would make, and where it starts; the error when the path
        cannot be written (outside the roots, a directory)."""
        try:
            path, _ = _target(ctx, args["path"])
        except ToolError as exc:
            return Preview(error=str(exc))
        content = str(args["content"])
        old, unreadable = await _current(path, _fs(ctx))
        if unreadable:
            return Preview(locations=((path, 1),))
        diffs, _ = _diffs(path, old, content)
        return Preview(diffs, ((path, changed_lines(old or "", content)[0]),))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, shown = _target(ctx, args["path"])
        content = str(args["content"])
        fs = _fs(ctx)
        old, replaced_unreadable = await _current(path, fs)
        if old == content:
            return ToolResult(
                text=f"{shown} already has this content; nothing was written.", locations=((path, 1),)
            )
        await ctx.checkpoint.before_write(path)
        await fs.write_text(path, content)
        total = len(_lines(content))
        first, added, removed = changed_lines(old or "", content)
        if old is None and not replaced_unreadable:
            summary = f"Created {shown} ({_count(total, 'line')})"
        elif replaced_unreadable:
            summary = f"Wrote {shown}, replacing a file that was not UTF-8 text ({_count(total, 'line')})"
            first = 1
        else:
            summary = f"Wrote {shown} (+{added} -{removed} lines; {_count(total, 'line')} now)"
        diffs, note = ((), "") if replaced_unreadable else _diffs(path, old, content)
        raw = {
            "path": str(path),
            "created": old is None and not replaced_unreadable,
            "linesAdded": added,
            "linesRemoved": removed,
        }
        return ToolResult(text=summary + note, diffs=diffs, locations=((path, first),), raw_output=raw)


@dataclass(frozen=True, slots=True)
class EditFile:
    """Replace one exact, unique string in a file: the cheapest edit the model can describe."""

    name = "edit_file"
    names_its_writes = True
    kind = "edit"
    permission = _EDIT
    description = (
        "Edit a UTF-8 text file by replacing `old_string` with `new_string`. `old_string` must "
        "match the file's text exactly (whitespace and indentation included) and occur exactly "
        "once: include enough surrounding lines to make it unique. If it occurs several times or "
        "not at all, nothing is changed and the error says how many times and on which lines it "
        "occurs. `new_string` must differ from `old_string`; an empty `new_string` deletes the "
        "text. Use write_file to create a new file. Read the file first if unsure of its text."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to edit, relative to the cwd."},
            "old_string": {
                "type": "string",
                "minLength": 1,
                "description": "Exact text to replace; must occur exactly once.",
            },
            "new_string": {"type": "string", "description": "Replacement text."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        path = args.get("path")
        return f"Edit {path}" if isinstance(path, str) and path else "Edit file"

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The diff the edit would make, or the error that makes it fail (the text is not in the
        file, or is there more than once): then nobody is asked to allow it."""
        try:
            path, _, text, new_text = await self._change(args, ctx)
        except ToolError as exc:
            return Preview(error=str(exc))
        diffs, _ = _diffs(path, text, new_text)
        return Preview(diffs, ((path, changed_lines(text, new_text)[0]),))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, shown, text, new_text = await self._change(args, ctx)
        await ctx.checkpoint.before_write(path)
        await _fs(ctx).write_text(path, new_text)
        first, added, removed = changed_lines(text, new_text)
        diffs, note = _diffs(path, text, new_text)
        raw = {"path": str(path), "created": False, "linesAdded": added, "linesRemoved": removed}
        return ToolResult(
            text=f"Edited {shown}: replaced 1 occurrence (+{added} -{removed} lines)" + note,
            diffs=diffs,
            locations=((path, first),),
            raw_output=raw,
            read=(path,),
        )

    async def _change(self, args: dict[str, Any], ctx: ToolContext) -> tuple[Path, str, str, str]:
        """(path, its name for the model, current text, text after the edit); ToolError if the
        edit cannot be made as asked."""
        old_s, new_s = str(args["old_string"]), str(args["new_string"])
        if not old_s:
            raise ToolError("old_string must not be empty; use write_file to create a file")
        if old_s == new_s:
            raise ToolError("old_string and new_string are identical; there is nothing to change")
        path, shown = _target(ctx, args["path"])
        if ctx.fs is None and not path.exists():
            raise ToolError(f"no such file: {shown!r}; use write_file to create it")
        fs = _fs(ctx)
        text = await fs.read_text(path)
        old_s, new_s = _match_line_endings(text, old_s, new_s)
        n = text.count(old_s)
        if n == 0:
            raise ToolError(
                f"old_string was not found in {shown!r}; nothing was changed. It must "
                f"match exactly, including whitespace and indentation: read the file "
                f"and copy the text from it"
            )
        if n > 1:
            raise ToolError(
                f"old_string occurs {n} times in {shown!r} ({_where(text, old_s)}); "
                f"nothing was changed. Include more surrounding lines so it occurs "
                f"exactly once"
            )
        return path, shown, text, text.replace(old_s, new_s, 1)


def text_after(text: str, old_s: str, new_s: str) -> str | None:
    """`text` as `edit_file` leaves it after replacing `old_s` with `new_s` (its line endings
    matched), or None when `old_s` does not occur exactly once (the edit would be refused)."""
    old_s, new_s = _match_line_endings(text, old_s, new_s)
    return text.replace(old_s, new_s, 1) if old_s and text.count(old_s) == 1 else None


def _match_line_endings(text: str, old_s: str, new_s: str) -> tuple[str, str]:
    """Models write "\\n"; a CRLF file that only matches with "\\r\\n" gets its own endings back."""
    if "\r\n" in text and "\n" in old_s and "\r\n" not in old_s and old_s not in text:
        crlf = old_s.replace("\n", "\r\n")
        if crlf in text:
            return crlf, new_s.replace("\r\n", "\n").replace("\n", "\r\n")
    return old_s, new_s


def _where(text: str, needle: str) -> str:
    """ "lines 3, 17 and 42" for the first few occurrences of `needle`."""
    lines: list[int] = []
    start, line, pos = 0, 1, 0
    while len(lines) < _MAX_LINES_LISTED and (found := text.find(needle, start)) != -1:
        line += text.count("\n", pos, found)
        pos = found
        lines.append(line)
        start = found + len(needle)
    words = [str(n) for n in lines]
    more = text.count(needle) - len(lines)
    if more > 0:
        return "lines " + ", ".join(words) + f" and {more} more"
    if len(words) == 1:
        return "line " + words[0]
    return "lines " + ", ".join(words[:-1]) + " and " + words[-1]
