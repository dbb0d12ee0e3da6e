"""`search_text` on ripgrep: streamed, in tree order, killed at the cap, on cancel and at the budget.

A sorted run over the tree gets a head start: it answers when the cap comes early. If it has not
finished by then, it is stopped; a parallel pre-pass finds the matching files (`--sort` makes rg
walk on one core) and a sorted run reads just those, so a search with few or no matches costs
about what `rg` itself does.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import structlog

from acp_agent.tools.disk import prefix_for
from acp_agent.tools.listing import rg_filter_args
from acp_agent.tools.ripgrep import run_rg
from acp_agent.tools.search_query import Found, Query, budget_spent

__all__ = ["HEAD_START_SECONDS", "PREPASS_FILES", "search_with_rg"]

log = structlog.get_logger(__name__)

HEAD_START_SECONDS = 0.02
"""How long the sorted run over the whole tree may try to reach the cap on its own."""
PREPASS_FILES = 20_000
"""Matching files a search collects before its sorted run; past this, one sorted run over the tree."""


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
    common = [
        rg,
        *rg_filter_args(query.seen, query.glob if "/" not in query.glob else None),
        "--encoding=none",
        f"--max-filesize={max_file_bytes}",
    ]
    if query.ignore_case:
        common.append("--ignore-case")
    narrow = Found(found.mode, found.cap, found.max_line_chars, found.grouped)
    with anyio.move_on_after(budget_seconds):
        with anyio.move_on_after(HEAD_START_SECONDS) as head:
            return await _sorted_run(common, query, top, cwd, found, None)
        files = await _files_with_matches(common, query, top)
        if files is None:  # too many files match: one sorted run over the tree
            return await _sorted_run(common, query, top, cwd, narrow, None)
        if not files:
            return narrow
        return await _sorted_run(common, query, top, cwd, narrow, files)
    raise budget_spent(narrow if head.cancelled_caught else found, top.name, budget_seconds)


async def _sorted_run(
    common: list[str], query: Query, top: Path, cwd: Path, found: Found, files: list[str] | None
) -> Found:
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


async def _files_with_matches(common: list[str], query: Query, top: Path) -> list[str] | None:
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
