"""Globs over '/'-separated relative paths, matched without backtracking.

The model's `list_files` and `search_text` patterns were compiled to one regular expression, and
Python's `re` backtracks on nested repeats: `**/` eight times took 3 s on a path 30 directories
deep, twelve times never ended, and `*a*a*a*a*b` does the same inside one long name. A pattern is
the model's to write (or a file's that it read), so matching must be linear whatever it says.

Here a pattern is cut at its `**` segments into groups of single-segment globs; each single-segment
glob is cut at its `*`s into pieces of fixed length (characters, `?`, a class). The first group is
placed at the path's start, the last at its end, and each group between at its leftmost place
after the one before, as each piece within a segment is: for globs of this shape the leftmost
place never loses a match, so each group is tried at most once per segment of the path.

What a pattern means (as before): `*` and `?` stay inside one segment; a `**` segment is zero or
more directories, and a trailing one is everything below (one segment or more); `**` that shares
a segment with text crosses directories where it begins or ends the segment (`**.py` is
`**/*.py`, `build**` is `build*` and anything below) and is a `*` in the middle of one; `[…]` is a
class (`[!…]` negated), and one that does not close or compile is a literal `[`. A pattern of more
than `MAX_SEGMENTS` segments is refused.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp_agent.lazy import deferred

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = [
    "MAX_SEGMENTS",
    "MAX_SEGMENT_STARS",
    "PathGlob",
    "Segment",
    "few_stars",
    "glob_class",
    "path_glob",
    "segment",
]

MAX_SEGMENTS = 64
"""Segments a pattern may have (a path deeper than that is still matched)."""

_GLOB = re.compile(r"[*?\[]")

MAX_SEGMENT_STARS = 3
"""`*`s in one segment of a gitignore pattern handed to pathspec, whose expressions backtrack:
`*a*a*a*a*ab` took 1.3 s on a 255-character name with four, and never ended with five."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment's glob: the pieces between its `*`s, each a fixed-length expression (`?` and a
    class are one character), so each is found with one linear search."""

    literal: str | None
    pieces: tuple[re.Pattern[str], ...] = ()
    sizes: tuple[int, ...] = ()

    def matches(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        pieces, sizes = self.pieces, self.sizes
        if len(pieces) == 1:
            return len(name) == sizes[0] and pieces[0].match(name) is not None
        end = len(name) - sizes[-1]
        if end < sizes[0] or not pieces[0].match(name) or not pieces[-1].match(name, end):
            return False
        position = sizes[0]
        for piece, size in zip(pieces[1:-1], sizes[1:-1], strict=True):
            if size == 0:
                continue
            found = piece.search(name, position, end)
            if found is None:
                return False
            position = found.start() + size
        return True


@functools.lru_cache(maxsize=4096)
def segment(glob: str) -> Segment:
    """One segment's glob (no `/` in it; `**` read as `*`), compiled once per process."""
    glob = glob.replace("**", "*")
    if not _GLOB.search(glob):
        return Segment(glob)
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            pieces.append([])
        elif char == "?":
            pieces[-1].append("[^/]")
        elif char == "[" and (klass := glob_class(glob, i)) is not None:
            pieces[-1].append(klass[0])
            i = klass[1]
            continue
        else:
            pieces[-1].append(re.escape(char))
        i += 1
    return Segment(
        None, tuple(re.compile("".join(p), re.DOTALL) for p in pieces), tuple(len(p) for p in pieces)
    )


def glob_class(glob: str, i: int) -> tuple[str, int] | None:
    """The class at `glob[i]` as an expression and where it ends; None (a literal `[`) when it
    does not close or cannot be read."""
    end = glob.find("]", i + 2 if glob.startswith("[!", i) else i + 1)
    if end == -1:
        return None
    body = glob[i + 1 : end]
    if body.startswith("!"):
        body = "^" + body[1:]
    source = "[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]"
    try:
        re.compile(source)
    except re.error:
        return None
    return source, end + 1


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A pattern's groups of single segments, a `**` (any number of segments) between each two:
    the first group begins the path, the last ends it (an empty group: that end is open)."""

    groups: tuple[tuple[Segment, ...], ...]

    def matches(self, path: str) -> bool:
        names = path.split("/")
        first = self.groups[0]
        if len(self.groups) == 1:  # no `**`: one segment per name
            return len(names) == len(first) and _fits(first, names, 0)
        last = self.groups[-1]
        end = len(names) - len(last)
        if end < len(first) or not _fits(first, names, 0) or not _fits(last, names, end):
            return False
        position = len(first)
        for group in self.groups[1:-1]:
            found = next((i for i in range(position, end - len(group) + 1) if _fits(group, names, i)), None)
            if found is None:
                return False
            position = found + len(group)
        return True


def _fits(group: tuple[Segment, ...], names: list[str], at: int) -> bool:
    return all(s.matches(names[at + k]) for k, s in enumerate(group))


_DOUBLE = None


@functools.lru_cache(maxsize=1024)
def path_glob(pattern: str) -> PathGlob:
    """`pattern` compiled (once per process; see the module's docstring for what it means).

    Raises:
        ValueError: it has more than `MAX_SEGMENTS` segments.
    """
    parts = pattern.split("/")
    if len(parts) > MAX_SEGMENTS:
        raise ValueError(f"more than {MAX_SEGMENTS} path segments")
    items: list[Segment | None] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            if last:
                items.append(segment("*"))  # `src/**`: what is below src, not src itself
            items.append(_DOUBLE)
            continue
        if part.startswith("**"):  # `**.py`: any depth
            items.append(_DOUBLE)
        items.append(segment(part))
        if part.endswith("**") and len(part) > 2:  # `build**`: and anything below
            items.append(_DOUBLE)
    groups: list[tuple[Segment, ...]] = [()]
    for item in items:
        if item is _DOUBLE:
            if groups[-1] or len(groups) == 1:
                groups.append(())
        else:
            groups[-1] = (*groups[-1], item)
    return PathGlob(tuple(groups))


def few_stars(pattern: str) -> str:
    """A gitignore-style `pattern` (a repository's `.gitignore`, a memory rule's `paths:`) for
    pathspec, whose expressions backtrack: a segment with more than `MAX_SEGMENT_STARS` `*`s keeps
    its text before the first and after the last, joined by one `*` (`*a*a*a*a*b` is `*b`). That
    matches every name the pattern did and more, never fewer; the pattern is otherwise unchanged."""
    if pattern.count("*") <= MAX_SEGMENT_STARS:
        return pattern
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        if part.replace("**", "*").count("*") > MAX_SEGMENT_STARS:
            parts[index] = part[: part.index("*")] + "*" + part[part.rindex("*") + 1 :]
    return "/".join(parts)


@deferred
def gitignore_spec() -> type[GitIgnoreSpec]:
    """pathspec's `GitIgnoreSpec` (~6 ms of import), for a repository's `.gitignore` and a memory
    rule's `paths:`: loaded when one is first read, not with the session layer (issue 46)."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec
