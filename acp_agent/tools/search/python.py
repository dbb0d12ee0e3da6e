"""`search_text` without rg (or for a pattern only Python's syntax accepts): the `regex` package.

The stdlib `re` cannot be interrupted, so `regex` runs with a timeout, in the worker thread the
caller lends, and the walk checks the caller's stop event (docs/decisions.md D6). The timeout
counts CPU time and cannot see the stop event, so no call is given more than `CALL_SECONDS`: a
file is ruled out block by block, and the stop event is checked between calls, so a cancelled
search frees its core within about that long (issue 29 item 7); one call that needs more is
catastrophic backtracking, and the search stops there with what it found. The pattern's size is
bounded before it is compiled (`regex_bounds.py`). Files are skipped as rg skips them: binary,
too large, unreadable, or not a regular file.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp_agent.errors import Stopped, ToolError
from acp_agent.tools.files.disk import prefix_for, time_left
from acp_agent.tools.paths import display_path
from acp_agent.tools.search.ignore import walk_files
from acp_agent.tools.search.query import LINE_CONTEXT, Found, Query, budget_spent
from acp_agent.tools.search.regex_bounds import check_pattern, regex_module
from acp_agent.tools.shown import shown_path

__all__ = ["search_in_python"]

CALL_SECONDS = 0.25
"""CPU time one regex call may take (a 256 KiB block takes a few ms): past it, the search stops."""
BLOCK_CHARS = 1 << 18
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")
_BINARY_SNIFF = 64 * 1024  # rg reads 64 KiB at a time and gives up on a file at its first NUL


def search_in_python(
    query: Query,
    target: Path,
    cwd: Path,
    found: Found,
    stop: threading.Event,
    *,
    budget_seconds: float,
    max_file_bytes: int,
) -> Found:
    """Search the file or directory `target` into `found`; blocking, so run it in a worker thread.

    Raises ToolError for an invalid pattern, Stopped once `stop` is set, and the budget's
    ToolTimeout (carrying the matches so far) past `budget_seconds`.
    """
    regex = regex_module.now()
    flags = regex.IGNORECASE if query.ignore_case else 0
    pattern = query.pattern
    check_pattern(pattern)
    try:
        per_line = regex.compile(pattern, flags)
        # One search over the whole file rules most files out ~50x faster than line by
        # line; only where it is exact (no anchors or lookarounds that see past a line).
        whole = None if LINE_CONTEXT.search(pattern) else regex.compile(pattern, flags | regex.MULTILINE)
    except regex.error as exc:
        raise ToolError(f"invalid regex {pattern!r}: {exc}") from exc
    if target.is_file():
        files: Iterator[tuple[str, str]] = iter(((str(target), shown_path(display_path(cwd, target))),))
    else:
        prefix = prefix_for(cwd, target)
        files = (
            (p, shown_path(prefix + rel))
            for p, rel in walk_files(
                target,
                include_ignored=query.seen.include_ignored,
                include_hidden=query.seen.include_hidden,
                stop=stop,
                withheld=query.seen.withheld,
            )
            if query.keeps(rel)
        )
    deadline = time.monotonic() + budget_seconds
    for path, where in files:
        if stop.is_set():
            raise Stopped
        try:
            # Non-blocking and not following a symlink: a file swapped for a FIFO or a link
            # since the walk saw it is skipped, never waited on (issue 19).
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
            with open(fd, "rb") as f:
                info = os.fstat(f.fileno())
                if not stat.S_ISREG(info.st_mode) or query.seen.withheld.hidden.linked(info):
                    continue  # a hidden file under another name (a hard link) is never read
                if info.st_size > max_file_bytes:
                    found.skipped_large.append(where)
                    continue
                if b"\0" in (data := f.read(_BINARY_SNIFF)):
                    found.binary_target = target.is_file()
                    continue
                data += f.read()
        except OSError:
            continue  # unreadable files are skipped, as rg does
        text = data.decode("utf-8", errors="replace")
        stopped_at = _scan(text, per_line, whole, where, deadline, query, found, stop)
        if stopped_at:  # the message carries the partial matches too, so it stands alone
            raise budget_spent(found, stopped_at, budget_seconds, slow_call=deadline > time.monotonic())
        if found.full:
            break
    return found


def _call_timeout(deadline: float, stop: threading.Event) -> float:
    """The timeout of the next regex call; Stopped once the caller has gone."""
    if stop.is_set():
        raise Stopped
    return min(time_left(deadline), CALL_SECONDS)


def _ruled_out(whole: Any, text: str, deadline: float, stop: threading.Event) -> bool:
    """No match anywhere in `text`, searched in line-aligned blocks (one call each)."""
    if "\r" in text:
        text = _TRAILING_CR.sub("", text)
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos + BLOCK_CHARS)
        end = len(text) if end == -1 else end + 1
        if whole.search(text, pos, end, timeout=_call_timeout(deadline, stop)):
            return False
        pos = end
    return True


def _scan(
    text: str,
    per_line: Any,
    whole: Any,
    where: str,
    deadline: float,
    query: Query,
    found: Found,
    stop: threading.Event,
) -> str:
    """Record matching lines (with context); return where a call ran out of time, else ""."""
    try:
        if whole is not None and _ruled_out(whole, text, deadline, stop):
            return ""
    except TimeoutError:
        return where
    lines = text.removesuffix("\n").split("\n") if text else []
    count, shown_to = 0, 0  # shown_to: the last line number already recorded
    for index, line in enumerate(lines):
        line = line.rstrip("\r")
        try:
            hit = per_line.search(line, timeout=_call_timeout(deadline, stop))
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
            if n <= shown_to:
                break
            try:
                if per_line.search(lines[n - 1].rstrip("\r"), timeout=_call_timeout(deadline, stop)):
                    break  # a match of its own: the loop above shows it
            except TimeoutError:
                return f"{where}:{n}"
            found.line(where, n, lines[n - 1], match=False)
            shown_to = n
    if count and query.mode != "content":
        found.file(where, count)
    return ""
