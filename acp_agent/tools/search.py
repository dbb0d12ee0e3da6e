"""search_text: a regex search over the workspace that a cancel or its time budget can always stop.

With an rg binary the search is ripgrep's: a process whose output is streamed and which is killed
at the cap, on cancel and at the budget. Without one (or for a pattern only Python's syntax
accepts) the stdlib `re` would not be interruptible, so the `regex` package runs with a timeout in
a worker thread (docs/decisions.md D6). Matches found before the budget ran out are returned with a note.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import regex  # type: ignore[import-untyped]  # no stubs in the venv (types-regex)
import structlog

from acp_agent.errors import Stopped, ToolError, ToolTimeout
from acp_agent.tools.base import Tool, ToolContext, ToolResult
from acp_agent.tools.disk import in_thread, prefix_for, time_left
from acp_agent.tools.files import ListFiles, ReadFile
from acp_agent.tools.ignore import names_hidden, walk_files
from acp_agent.tools.listing import Visibility, rg_filter_args
from acp_agent.tools.paths import display_path, glob_to_regex, resolve_inside
from acp_agent.tools.ripgrep import find_rg, run_rg
from acp_agent.tools.truncate import clip_line

__all__ = ["SearchText", "read_only_tools"]

HEAD_START_SECONDS = 0.02
"""How long the sorted run over the whole tree may try to reach the cap on its own."""
PREPASS_FILES = 20_000
"""Matching files a search collects before its sorted run; past this, one sorted run over the tree."""

# Regex parts whose meaning depends on where a line starts or ends: \A \Z \z \G, lookarounds,
# and turning a flag off (e.g. (?-m)). Patterns with them are searched line by line only.
_LINE_CONTEXT = re.compile(r"\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*-")
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")
_BINARY_SNIFF = 64 * 1024  # rg reads 64 KiB at a time and gives up on a file at its first NUL

log = structlog.get_logger(__name__)

_MODES = ("content", "files_with_matches", "count")
_MAX_CONTEXT = 20


@dataclass(slots=True)
class _Found:
    """What a search has found so far, in tree order, and how to show it."""

    mode: str
    cap: int
    max_line_chars: int
    grouped: bool = False
    lines: list[str] = field(default_factory=list)
    hits: int = 0
    skipped_large: int = 0
    binary_target: bool = False
    _last: tuple[str, int] | None = None

    @property
    def full(self) -> bool:
        return self.hits >= self.cap

    def line(self, where: str, lineno: int, text: str, *, match: bool) -> None:
        """A matching line, or a context line around one; a gap between groups shows as '--'."""
        last = self._last
        if self.grouped and last is not None and (last[0] != where or lineno > last[1] + 1):
            self.lines.append("--")
        self.lines.append(
            f"{where}{':' if match else '-'}{lineno}{':' if match else '-'} "
            f"{clip_line(text.rstrip(chr(13)), self.max_line_chars)}"
        )
        self._last = (where, lineno)
        self.hits += match

    def file(self, where: str, count: int) -> None:
        self.lines.append(where if self.mode == "files_with_matches" else f"{where}:{count}")
        self.hits += 1


@dataclass(frozen=True, slots=True)
class _Query:
    pattern: str
    ignore_case: bool
    mode: str
    before: int
    after: int
    seen: Visibility
    glob: str
    matcher: re.Pattern[str] | None

    def keeps(self, relative: str) -> bool:
        if self.matcher is None:
            return True
        return self.matcher.match(relative if "/" in self.glob else relative.rsplit("/", 1)[-1]) is not None


class _NotForRg(Exception):
    """rg could not run this search (a pattern in Python-only syntax, say): search in Python."""


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
        name_glob = str(args.get("glob") or "")
        context = int(args.get("context") or 0)
        mode = str(args.get("output_mode") or "content")
        query = _Query(
            pattern=str(args["pattern"]),
            ignore_case=bool(args.get("ignore_case")),
            mode=mode,
            before=int(args.get("before", context) or 0) if mode == "content" else 0,
            after=int(args.get("after", context) or 0) if mode == "content" else 0,
            seen=Visibility(
                include_ignored=bool(args.get("include_ignored")), include_hidden=names_hidden(name_glob)
            ),
            glob=name_glob,
            matcher=glob_to_regex(name_glob) if name_glob else None,
        )
        target = resolve_inside(ctx.cwd, shown)
        if not target.exists():
            raise ToolError(f"no such file or directory: {shown!r}")
        found = _Found(
            mode,
            self.max_matches if mode == "content" else self.max_files,
            self.max_line_chars,
            grouped=bool(query.before or query.after),
        )
        # Anchors and lookarounds keep Python's line-by-line meaning: those stay with `regex`.
        line_bound = _LINE_CONTEXT.search(query.pattern) is not None
        rg = find_rg() if self.ripgrep is not False and target.is_dir() and not line_bound else None
        if rg is not None:
            try:
                return self._result(await self._rg(rg, query, target, ctx.cwd, found), query, shown, target)
            except _NotForRg:
                found = _Found(found.mode, found.cap, found.max_line_chars, found.grouped)
        return await in_thread(
            lambda stop: self._result(self._search(query, target, ctx.cwd, found, stop), query, shown, target)
        )

    def _result(self, found: _Found, query: _Query, shown: str, target: Path) -> ToolResult:
        notes = []
        if found.full:
            what = "matches" if query.mode == "content" else "files"
            notes.append(f"[stopped at {found.cap} {what}; more may exist: narrow the pattern, path or glob]")
        if found.skipped_large:
            notes.append(
                f"[skipped {found.skipped_large} file(s) larger than "
                f"{self.max_file_bytes // (1024 * 1024)} MiB]"
            )
        if found.binary_target:
            notes.append(f"[{shown!r} is a binary file and was not searched]")
        body = "\n".join(found.lines) if found.lines else f"No matches for {query.pattern!r} in {shown!r}."
        return ToolResult(text="\n".join([body, *notes]))

    async def _rg(self, rg: str, query: _Query, top: Path, cwd: Path, found: _Found) -> _Found:
        """A sorted run over the tree gets a head start: it answers when the cap comes early. If
        it has not finished by then, it is stopped; a parallel pre-pass finds the matching files
        (`--sort` makes rg walk on one core) and a sorted run reads just those, so a search with
        few or no matches costs about what `rg` itself does."""
        common = [
            rg,
            *rg_filter_args(query.seen, query.glob if "/" not in query.glob else None),
            "--encoding=none",
            f"--max-filesize={self.max_file_bytes}",
        ]
        if query.ignore_case:
            common.append("--ignore-case")
        narrow = _Found(found.mode, found.cap, found.max_line_chars, found.grouped)
        with anyio.move_on_after(self.budget_seconds):
            with anyio.move_on_after(HEAD_START_SECONDS) as head:
                return await self._rg_sorted(common, query, top, cwd, found, None)
            files = await self._files_with_matches(common, query, top)
            if files is None:  # too many files match: one sorted run over the tree
                return await self._rg_sorted(common, query, top, cwd, narrow, None)
            if not files:
                return narrow
            return await self._rg_sorted(common, query, top, cwd, narrow, files)
        raise self._timeout(narrow if head.cancelled_caught else found, top.name, cwd)

    async def _rg_sorted(
        self, common: list[str], query: _Query, top: Path, cwd: Path, found: _Found, files: list[str] | None
    ) -> _Found:
        """One rg run in tree order (`--sort=path`), over `files` or the whole tree, into `found`."""
        argv = [*common, "--sort=path"]
        if query.mode == "content":
            argv += [
                "--crlf",
                "--line-number",
                "--with-filename",
                "--no-heading",
                "--null",
                "--max-columns=4096",
                "--max-columns-preview",
                f"--before-context={query.before}",
                f"--after-context={query.after}",
            ]
        elif query.mode == "files_with_matches":
            argv += ["--files-with-matches"]  # one path a line (--null would end them with NUL)
        else:
            argv += ["--crlf", "--count", "--with-filename", "--null"]
        argv += ["--regexp", query.pattern]
        if files is not None:  # only the files that match, in tree order
            argv += ["--", *files]
        prefix = prefix_for(cwd, top)
        keeps: dict[bytes, str | None] = {}
        files_only = query.mode == "files_with_matches"

        def take(line: bytes) -> bool:
            line = line.removesuffix(b"\r")
            raw, sep, rest = (line, True, b"1") if files_only else line.partition(b"\0")
            if not sep:
                return True  # rg's own '--' group separator: groups are drawn again below
            if (where := keeps.get(raw, "")) == "":
                relative = os.fsdecode(raw).replace(os.sep, "/")
                where = keeps[raw] = prefix + relative if query.keeps(relative) else None
            if where is None:
                return True
            if query.mode == "content":
                digits = len(rest) - len(rest.lstrip(b"0123456789"))
                found.line(
                    where,
                    int(rest[:digits]),
                    rest[digits + 1 :].decode("utf-8", "replace"),
                    match=rest[digits : digits + 1] == b":",
                )
            else:
                found.file(where, int(rest or b"0"))
            return not found.full

        run = await run_rg(argv, top, take)
        if run.code not in (0, 1) and not found.lines:
            log.debug("search.rg_refused", stderr=run.stderr[:300])
            raise _NotForRg
        return found

    async def _files_with_matches(self, common: list[str], query: _Query, top: Path) -> list[str] | None:
        """The files with a match, in tree order, found by rg on every core (`--sort` would make it
        walk on one); None when there are more than PREPASS_FILES (then one sorted run does it all).

        The sorted run that follows reads only these files, so a search with few or no matches
        costs about what `rg` itself does, and the output is still in a stable order.
        """
        names: list[bytes] = []

        def take(line: bytes) -> bool:
            names.append(line.removesuffix(b"\r"))
            return len(names) <= PREPASS_FILES

        run = await run_rg([*common, "--files-with-matches", "--regexp", query.pattern], top, take)
        if run.code not in (0, 1) and not names:
            raise _NotForRg
        if len(names) > PREPASS_FILES:
            return None
        names.sort(key=lambda name: name.replace(b"/", b"\0"))  # rg's --sort=path: tree order
        return [os.fsdecode(name) for name in names]

    def _timeout(self, found: _Found, at: str, cwd: Path) -> ToolTimeout:
        shown = found.lines
        what = f"the {found.hits} match(es) above" if found.hits else "no matches"
        note = (
            f"[search stopped after its {self.budget_seconds:g} s budget at {at}; the pattern "
            f"may backtrack catastrophically: simplify it or narrow path/glob; {what} were "
            f"found before stopping]"
        )
        return ToolTimeout("\n".join([*shown, note]), partial="\n".join(shown))

    def _search(self, query: _Query, target: Path, cwd: Path, found: _Found, stop: threading.Event) -> _Found:
        flags = regex.IGNORECASE if query.ignore_case else 0
        pattern = query.pattern
        try:
            per_line = regex.compile(pattern, flags)
            # One search over the whole file rules most files out ~50x faster than line by
            # line; only where it is exact (no anchors or lookarounds that see past a line).
            whole = None if _LINE_CONTEXT.search(pattern) else regex.compile(pattern, flags | regex.MULTILINE)
        except regex.error as exc:
            raise ToolError(f"invalid regex {pattern!r}: {exc}") from exc
        if target.is_file():
            files: Iterator[tuple[str, str]] = iter(((str(target), display_path(cwd, target)),))
        else:
            prefix = prefix_for(cwd, target)
            files = (
                (p, prefix + rel)
                for p, rel in walk_files(
                    target,
                    include_ignored=query.seen.include_ignored,
                    include_hidden=query.seen.include_hidden,
                    stop=stop,
                )
                if query.keeps(rel)
            )
        deadline = time.monotonic() + self.budget_seconds
        for path, where in files:
            if stop.is_set():
                raise Stopped
            try:
                # Non-blocking and not following a symlink: a file swapped for a FIFO or a link
                # since the walk saw it is skipped, never waited on (issue 19).
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
                with open(fd, "rb") as f:
                    info = os.fstat(f.fileno())
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    if info.st_size > self.max_file_bytes:
                        found.skipped_large += 1
                        continue
                    if b"\0" in (data := f.read(_BINARY_SNIFF)):
                        found.binary_target = target.is_file()
                        continue
                    data += f.read()
            except OSError:
                continue  # unreadable files are skipped, as rg does
            text = data.decode("utf-8", errors="replace")
            stopped_at = self._scan(text, per_line, whole, where, deadline, query, found)
            if stopped_at:  # the message carries the partial matches too, so it stands alone
                raise self._timeout(found, stopped_at, cwd)
            if found.full:
                break
        return found

    def _scan(
        self, text: str, per_line: Any, whole: Any, where: str, deadline: float, query: _Query, found: _Found
    ) -> str:
        """Record matching lines (with context); return where the budget ran out, else ""."""
        try:
            if whole is not None and not whole.search(
                _TRAILING_CR.sub("", text) if "\r" in text else text, timeout=time_left(deadline)
            ):
                return ""
        except TimeoutError:
            return where
        lines = text.removesuffix("\n").split("\n") if text else []
        count, shown_to = 0, 0  # shown_to: the last line number already recorded
        for index, line in enumerate(lines):
            line = line.rstrip("\r")
            try:
                hit = per_line.search(line, timeout=time_left(deadline))
            except TimeoutError:
                return f"{where}:{index + 1}"
            if not hit:
                continue
            count += 1
            if query.mode != "content":
                continue
            for n in range(max(shown_to + 1, index + 1 - query.before), index + 1):
                found.line(where, n, lines[n - 1], match=False)
            found.line(where, index + 1, line, match=True)
            shown_to = index + 1
            if found.full:
                return ""
            for n in range(index + 2, min(index + 1 + query.after, len(lines)) + 1):
                if n > shown_to and not per_line.search(
                    lines[n - 1].rstrip("\r"), timeout=time_left(deadline)
                ):
                    found.line(where, n, lines[n - 1], match=False)
                    shown_to = n
                else:
                    break
        if count and query.mode != "content":
            found.file(where, count)
        return ""


def read_only_tools() -> list[Tool]:
    """The tools that only look: safe to run without asking."""
    return [ReadFile(), ListFiles(), SearchText()]
