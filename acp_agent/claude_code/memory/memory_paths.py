"""Path patterns of Claude Code's memory: a rule's `paths:` frontmatter and the `claudeMdExcludes` setting.

Glob syntax as gitignore reads it (pathspec, which the listing's ignore rules already use): `*`
within a name, `**` across directories, `?` and `[...]`; a pattern with a slash is anchored at the
base it is matched from, one without matches a name at any depth (`*.md`). Braces are expanded
first, as Claude Code does (`src/**/*.{ts,tsx}`), at most MAX_EXPANDED patterns per list: a list
that would expand past it keeps its first MAX_EXPANDED. A pattern pathspec cannot read matches
nothing, and costs the others nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.tools.globs import few_stars, gitignore_spec

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["MAX_EXPANDED", "PathPatterns", "expand_braces", "split_paths"]

MAX_EXPANDED = 1000
"""Patterns one list may expand to (Claude Code's budget per rule)."""


def _first_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """(start, end, alternatives) of the first `{a,b}` group with a comma at its own level; None
    when there is none (a `{x}` without a comma stays literal)."""
    start, depth = -1, 0
    commas: list[int] = []
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start, commas = index, []
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0 and commas:
                cuts = [start, *commas, index]
                return start, index, [pattern[a + 1 : b] for a, b in itertools.pairwise(cuts)]
        elif char == "," and depth == 1:
            commas.append(index)
    return None


def expand_braces(pattern: str, limit: int = MAX_EXPANDED) -> list[str]:
    """`pattern` with its brace groups expanded, in order, at most `limit` of them."""
    out: list[str] = []
    stack = [pattern]
    while stack and len(out) < limit:
        current = stack.pop()
        group = _first_group(current)
        if group is None:
            out.append(current)
            continue
        start, end, options = group
        stack.extend(current[:start] + option + current[end + 1 :] for option in reversed(options))
    return out


def split_paths(value: str) -> list[str]:
    """The patterns of a `paths:` value as the frontmatter reader gives it: a `- item` list (joined
    with ", "), a `[a, b]` flow list, or one string; commas inside braces stay in their pattern."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        depth += (char == "{") - (char == "}" and depth > 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in (part.strip().strip("'\"").strip() for part in parts) if p]


@dataclass(frozen=True, slots=True)
class PathPatterns:
    """A list of patterns as written, and the matcher they make."""

    written: tuple[str, ...] = ()
    spec: GitIgnoreSpec | None = None

    @classmethod
    def of(cls, patterns: Iterable[str]) -> PathPatterns:
        written = tuple(p for p in patterns if p.strip())
        expanded: list[str] = []
        for pattern in written:
            room = MAX_EXPANDED - len(expanded)
            if room <= 0:
                break
            expanded += [p.removeprefix("./") for p in expand_braces(pattern, room)]
        return cls(written, _spec(expanded))

    def __bool__(self) -> bool:
        return self.spec is not None

    def matches(self, relative: str) -> bool:
        """Whether the path `relative` ('/'-separated, from the base) matches any pattern."""
        return self.spec is not None and self.spec.match_file(relative)

    def matches_absolute(self, path: Path) -> bool:
        """Whether the absolute `path` matches (a pattern's leading `/` is the filesystem root)."""
        return self.matches(path.as_posix().lstrip("/"))


def _spec(patterns: list[str]) -> GitIgnoreSpec | None:
    if not patterns:
        return None
    patterns = [few_stars(p) for p in patterns]  # pathspec backtracks on many `*`s in one name
    try:
        return gitignore_spec.now().from_lines(patterns)
    except Exception:  # one unreadable pattern: keep the others
        kept = [p for p in patterns if _readable(p)]
        return gitignore_spec.now().from_lines(kept) if kept else None


def _readable(pattern: str) -> bool:
    try:
        gitignore_spec.now().from_lines([pattern])
    except Exception:
        return False
    return True
