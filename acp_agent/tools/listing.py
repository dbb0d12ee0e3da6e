"""The files a tool may see under a directory: by `rg --files` when there is an rg, else by walking.

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

from acp_agent.tools.disk import in_thread
from acp_agent.tools.hidden import HiddenUnder
from acp_agent.tools.ignore import tree_key, walk_files
from acp_agent.tools.ripgrep import COMMON_ARGS, run_rg

__all__ = ["Capped", "Visibility", "list_files", "rg_filter_args"]


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
