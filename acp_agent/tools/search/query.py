"""What a `search_text` call asks for and what it has found so far, shared by its rg and Python paths.

Both paths fill the same `Found` in tree order, so they return the same lines, and both stop with
the same note when the time budget runs out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from acp_agent.errors import ToolTimeout
from acp_agent.tools.globs import PathGlob
from acp_agent.tools.search.listing import Visibility
from acp_agent.tools.truncate import clip_line

__all__ = ["LINE_CONTEXT", "Found", "Query", "budget_spent"]

LINE_CONTEXT = re.compile(r"\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*-")
"""Regex parts whose meaning depends on where a line starts or ends: \\A \\Z \\z \\G, lookarounds,
and turning a flag off (e.g. (?-m)). Patterns with them are searched line by line only."""


@dataclass(slots=True)
class Found:
    """What a search has found so far, in tree order, and how to show it."""

    mode: str
    cap: int
    max_line_chars: int
    grouped: bool = False
    lines: list[str] = field(default_factory=list)
    hits: int = 0
    skipped_large: list[str] = field(default_factory=list)
    """The files left unsearched for their size, as shown."""
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
class Query:
    """One search: the pattern, what to show of each match, and which files to look in."""

    pattern: str
    ignore_case: bool
    mode: str
    before: int
    after: int
    seen: Visibility
    glob: str
    matcher: PathGlob | None

    def keeps(self, relative: str) -> bool:
        """The file at `relative` passes the glob and is none of the agent's hidden paths."""
        if self.seen.withheld.leaves_out(relative):
            return False
        if self.matcher is None:
            return True
        return self.matcher.matches(relative if "/" in self.glob else relative.rsplit("/", 1)[-1])


def budget_spent(found: Found, at: str, budget_seconds: float, *, slow_call: bool = False) -> ToolTimeout:
    """The error a search ends with when its budget runs out at `at` (or, `slow_call`, when one
    regex call alone ran too long there): the matches so far, and why."""
    shown = found.lines
    what = f"the {found.hits} match(es) above" if found.hits else "no matches"
    why = "one regex call ran too long" if slow_call else f"its {budget_seconds:g} s budget"
    note = (
        f"[search stopped after {why} at {at}; the pattern "
        f"may backtrack catastrophically: simplify it or narrow path/glob; {what} were "
        f"found before stopping]"
    )
    return ToolTimeout("\n".join([*shown, note]), partial="\n".join(shown))
