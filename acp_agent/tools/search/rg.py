"""`search_text` on ripgrep: streamed, in tree order, killed at the cap, on cancel and at the budget.

A sorted run over the tree gets a head start: it answers when the cap comes early. If it has not
finished by then, it is stopped; a parallel pre-pass finds the matching files (`--sort` makes rg
walk on one core) and a sorted run reads just those, so a search with few or no matches costs
about what `rg` itself does. The list of files goes to rg in slices that fit any argument list.

rg's output is split on NUL, never on newlines alone: a path comes before a NUL (`--null`), so
a file named "x\\ninnocent.txt" is never read as matches in `innocent.txt`. The files rg skips for
their size are read from its `--debug` lines (a whole-tree run that ran to its end, or a walk of
their own when a name filter would make `--debug` print a line per file) and named in the answer.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import structlog

from acp_agent.tools.files.disk import prefix_for
from acp_agent.tools.search.listing import rg_filter_args
from acp_agent.tools.search.query import Found, Query, budget_spent
from acp_agent.tools.search.ripgrep import RgRun, run_rg
from acp_agent.tools.shown import shown_path

__all__ = ["ARGV_BYTES", "HEAD_START_SECONDS", "PREPASS_FILES", "SIZES_GRACE", "search_with_rg"]

log = structlog.get_logger(__name__)

HEAD_START_SECONDS = 0.02
"""How long the sorted run over the whole tree may try to reach the cap on its own."""
PREPASS_FILES = 20_000
"""Matching files a search collects before its sorted run; past this, one sorted run over the tree."""
ARGV_BYTES = 128 * 1024
"""File names per sorted run, in bytes: far below any system's argument-list limit (Linux: 2 MiB
with the environment; ~19,000 long names overflowed it)."""
SIZES_GRACE = 2.0
"""Seconds a finished search waits for the walk that finds the files skipped for their size."""
_NAME_FILTER = "--type=acpsel"  # rg_filter_args's pre-filter on file names


class _NotForRg(Exception):
    """rg could not run this search (a pattern in Python-only syntax, say): search in Python."""


async def search_with_rg(
    rg: str, query: Query, top: Path, cwd: Path, found: Found, *, budget_seconds: float, max_file_bytes: int
) -> Found | None:
    """Search the directory `top` with the rg at `rg` into `found`; None when rg refuses the search.

    Raises the budget's ToolTimeout past `budget_seconds`.
    """
    try:
        return await _search(rg, query, top, cwd, found, budget_seconds, max_file_bytes)
    except _NotForRg:
        return None


async def _search(
    rg: str, query: Query, top: Path, cwd: Path, found: Found, budget_seconds: float, max_file_bytes: int
) -> Found:
    """The head-start run, else the pre-pass and a sorted run over just the files it found."""
    walk = [*rg_filter_args(query.seen, None), f"--max-filesize={max_file_bytes}"]
    common = [
        rg,
        *rg_filter_args(query.seen, query.glob if "/" not in query.glob else None),
        "--encoding=none",
        f"--max-filesize={max_file_bytes}",
    ]
    if query.ignore_case:
        common.append("--ignore-case")
    narrow = Found(found.mode, found.cap, found.max_line_chars, found.grouped)
    sizes = _Sizes(query, prefix_for(cwd, top), [rg, "--files", "--null", "--debug", *walk], top)
    sizes.debug = _NAME_FILTER not in common
    result: Found | None = None
    with anyio.move_on_after(budget_seconds) as budget:
        async with anyio.create_task_group() as group:
            try:
                result = await _runs(common, query, top, cwd, found, narrow, sizes, group)
            except _NotForRg:  # raised out of the group, it would come wrapped in a group
                group.cancel_scope.cancel()
            else:
                # The answer is in: the budget is met, and the walk for sizes gets a short grace
                # (none at the cap, whose note says more may exist), then goes unreported.
                budget.deadline = math.inf
                group.cancel_scope.deadline = anyio.current_time() + (0 if result.full else SIZES_GRACE)
                if not result.full and not sizes.debug and not sizes.walking:
                    await sizes.walk()  # the head start answered: a small tree, a short walk
    if result is not None:
        sizes.report(result)
        return result
    if budget.cancelled_caught:  # both are in tree order from the top: the longer is better
        raise budget_spent(max(found, narrow, key=lambda f: len(f.lines)), top.name, budget_seconds)
    raise _NotForRg


async def _runs(
    common: list[str],
    query: Query,
    top: Path,
    cwd: Path,
    found: Found,
    narrow: Found,
    sizes: _Sizes,
    group: anyio.abc.TaskGroup,
) -> Found:
    with anyio.move_on_after(HEAD_START_SECONDS):
        return await _sorted_run(common, query, top, cwd, found, None, sizes)
    if not sizes.debug:  # a walk of its own tells what is skipped for its size, meanwhile
        sizes.walking = True
        group.start_soon(sizes.walk)
    files = await _files_with_matches(common, query, top, sizes)
    if files is None:  # too many files match: one sorted run over the tree
        return await _sorted_run(common, query, top, cwd, narrow, None, sizes)
    for names in _slices(files):
        await _sorted_run(common, query, top, cwd, narrow, names, sizes)
        if narrow.full:
            break
    return narrow


class _Sizes:
    """The files skipped for their size, from the first whole-tree run that ran to its end."""

    def __init__(self, query: Query, prefix: str, walk: list[str], top: Path) -> None:
        self.query, self.prefix, self._walk, self._top = query, prefix, walk, top
        self.debug = True
        """Whole-tree runs carry `--debug` (off with a name filter: it prints a line per file)."""
        self.walking = False
        self.skipped: list[str] | None = None

    def take(self, run: RgRun) -> None:
        if self.skipped is None and run.code in (0, 1):
            relevant = [p for p, _ in run.skipped if self.query.keeps(p)]
            self.skipped = [shown_path(self.prefix + p) for p in relevant]

    async def walk(self) -> None:
        """`rg --files --debug` with the search's rules but no name filter: few debug lines."""
        self.take(await run_rg(self._walk, self._top, lambda _: True, "nul"))

    def report(self, found: Found) -> None:
        found.skipped_large += self.skipped or []


def _slices(files: list[str]) -> Iterator[list[str]]:
    """`files` in order, cut so that each slice's names take at most ARGV_BYTES."""
    start, used = 0, 0
    for index, name in enumerate(files):
        size = len(os.fsencode(name)) + 1
        if used + size > ARGV_BYTES and index > start:
            yield files[start:index]
            start, used = index, 0
        used += size
    if start < len(files):
        yield files[start:]


async def _sorted_run(
    common: list[str],
    query: Query,
    top: Path,
    cwd: Path,
    found: Found,
    files: list[str] | None,
    sizes: _Sizes,
) -> Found:
    """One rg run in tree order (`--sort=path`), over `files` or the whole tree, into `found`."""
    argv = [*common, "--sort=path", "--null"]
    if query.mode == "content":
        argv += [
            "--crlf",
            "--line-number",
            "--with-filename",
            "--no-heading",
            "--no-context-separator",  # groups are drawn again below
            "--max-columns=4096",
            "--max-columns-preview",
            f"--before-context={query.before}",
            f"--after-context={query.after}",
        ]
    elif query.mode == "files_with_matches":
        argv += ["--files-with-matches"]  # each path ends with a NUL
    else:
        argv += ["--crlf", "--count", "--with-filename"]
    if files is None and sizes.debug:
        argv.append("--debug")
    argv += ["--regexp", query.pattern]
    if files is not None:  # only the files that match, in tree order
        argv += ["--", *files]
    prefix = prefix_for(cwd, top)
    keeps: dict[bytes, str | None] = {}
    files_only = query.mode == "files_with_matches"

    def take(record: bytes) -> bool:
        raw, sep, rest = (record, True, b"1") if files_only else record.partition(b"\0")
        rest = rest.removesuffix(b"\r")
        if (where := keeps.get(raw, "")) == "":
            relative = os.fsdecode(raw).replace(os.sep, "/")
            shown = query.keeps(relative) and not query.seen.withheld.linked(os.path.join(top, relative))
            where = keeps[raw] = shown_path(prefix + relative) if shown else None
        digits = len(rest) - len(rest.lstrip(b"0123456789"))
        if where is None or not sep or not digits:
            return True  # left out by the glob (or not a record of rg's)
        if query.mode == "content":
            found.line(
                where,
                int(rest[:digits]),
                rest[digits + 1 :].decode("utf-8", "replace"),
                match=rest[digits : digits + 1] == b":",
            )
        else:
            found.file(where, int(rest[:digits]))
        return not found.full

    run = await run_rg(argv, top, take, "nul" if files_only else "path-nul-line")
    if run.code not in (0, 1) and not found.lines:
        log.debug("search.rg_refused", stderr=run.stderr[:300])
        raise _NotForRg
    if files is None and sizes.debug:
        sizes.take(run)
    return found


async def _files_with_matches(common: list[str], query: Query, top: Path, sizes: _Sizes) -> list[str] | None:
    """The files with a match, in tree order, found by rg on every core (`--sort` would make it
    walk on one); None when there are more than PREPASS_FILES (then one sorted run does it all).

    The sorted run that follows reads only these files, so a search with few or no matches
    costs about what `rg` itself does, and the output is still in a stable order.
    """
    names: list[bytes] = []

    def take(name: bytes) -> bool:
        names.append(name)
        return len(names) <= PREPASS_FILES

    argv = [*common, "--files-with-matches", "--null", "--regexp", query.pattern]
    if sizes.debug:
        argv.insert(-2, "--debug")
    run = await run_rg(argv, top, take, "nul")
    if run.code not in (0, 1) and not names:
        raise _NotForRg
    if sizes.debug:
        sizes.take(run)
    if len(names) > PREPASS_FILES:
        return None
    names.sort(key=lambda name: name.replace(b"/", b"\0"))  # rg's --sort=path: tree order
    return [os.fsdecode(name) for name in names]
