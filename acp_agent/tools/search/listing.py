"""list_files, and the files a tool may see under a directory: by `rg --files` when there is an
rg, else by walking (`search_text` walks the same way).

Both ways apply the same ignore rules (`ignore.py`) and leave out the agent's hidden paths
(`hidden.py`: the Python walk never enters them, rg's output is filtered), so they return the same
files; either way only the first `cap` paths in tree order are kept, and the rest are only counted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.files.disk import in_thread, prefix_for
from acp_agent.tools.hidden import HiddenUnder
from acp_agent.tools.paths import name_glob
from acp_agent.tools.search.ignore import names_hidden, tree_key, walk_files
from acp_agent.tools.search.ripgrep import COMMON_ARGS, find_rg, run_rg
from acp_agent.tools.shown import shown_path

__all__ = ["Capped", "ListFiles", "Visibility", "list_files", "rg_filter_args"]


@dataclass(frozen=True, slots=True)
class Visibility:
    """What a listing shows beyond the default (ignored files, hidden ones), and what it never
    shows: the agent's own paths under the listed directory (`withheld`)."""

    include_ignored: bool = False
    include_hidden: bool = False
    withheld: HiddenUnder = field(default_factory=HiddenUnder)


@dataclass(slots=True)
class Capped:
    """The first `cap` paths in tree order, whatever order they arrive in; the rest only counted."""

    cap: int
    total: int = 0
    _keys: list[str] = field(default_factory=list)
    _bound: str | None = None  # once `cap` are kept, anything sorting after this is only counted

    def add(self, path: str) -> None:
        self.total += 1
        key = tree_key(path)
        if self._bound is not None and key >= self._bound:
            return
        self._keys.append(key)
        if len(self._keys) >= 2 * self.cap:  # memory stays O(cap), sorting amortised
            self._keys.sort()
            del self._keys[self.cap :]
            self._bound = self._keys[-1]

    def first(self) -> list[str]:
        self._keys.sort()
        return [key.replace("\0", "/") for key in self._keys[: self.cap]]


def rg_filter_args(seen: Visibility, name_glob: str | None) -> list[str]:
    """The rg flags for `seen`, and a pre-filter on file names that ignore rules still apply to."""
    args = [*COMMON_ARGS]
    if seen.include_hidden:
        args.append("--hidden")
    if seen.include_ignored:
        args.append("--no-ignore")
    # A file type, unlike --glob, cannot re-include an ignored file; the caller still filters.
    # But a type match does re-include a hidden file, so the type leaves names with a dot out.
    if (
        not name_glob
        or name_glob == "*"
        or "**" in name_glob
        or set(name_glob) & set("/{},:\\")
        or name_glob.startswith("[")
    ):
        return args
    if not seen.include_hidden and name_glob[0] in "*?":
        name_glob = "[!.]" + name_glob.removeprefix("?")
    return [*args, f"--type-add=acpsel:{name_glob}", "--type=acpsel"]


async def list_files(
    top: Path,
    seen: Visibility,
    keep: Callable[[str], bool],
    cap: int,
    rg: str | None,
    name_glob: str | None = None,
) -> Capped:
    """The files under `top` (relative to it, '/'-separated) that `keep` accepts."""
    found = Capped(cap)
    if rg is not None:

        def take(line: bytes) -> bool:
            relative = os.fsdecode(line)
            if os.sep != "/":
                relative = relative.replace(os.sep, "/")
            if relative and keep(relative) and not seen.withheld.leaves_out(relative):
                found.add(relative)
            return True

        # NUL-ended: a name may hold a newline ("x\ninnocent.txt" is one file, not two).
        run = await run_rg([rg, "--files", "--null", *rg_filter_args(seen, name_glob)], top, take, "nul")
        if run.code in (0, 1):
            return found
        found = Capped(cap)  # rg failed (a glob it rejects, say): walk instead

    def walk(stop: threading.Event) -> Capped:
        for _, relative in walk_files(
            top,
            include_ignored=seen.include_ignored,
            include_hidden=seen.include_hidden,
            stop=stop,
            withheld=seen.withheld,
        ):
            if keep(relative):
                found.add(relative)
        return found

    return await in_thread(walk)


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
        matcher = name_glob(pattern)
        seen = Visibility(
            include_ignored=bool(args.get("include_ignored")),
            include_hidden=names_hidden(pattern),
            withheld=ctx.hidden.under(top),
        )
        rg = find_rg() if self.ripgrep is not False else None
        last = pattern.rsplit("/", 1)[-1]
        found = await list_files(top, seen, matcher.matches, self.max_entries, rg, name_glob=last)
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
