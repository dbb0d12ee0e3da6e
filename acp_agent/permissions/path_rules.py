"""The path a `Read(…)` or `Edit(…)` rule names, read as Claude Code reads it (gitignore globs).

Where a pattern is anchored (Claude Code's table): `//path` at the filesystem root; `~/path` at
the user's home; `/path` at the settings file's own place (`SettingsFile.anchor`: the project for
`.claude/settings.json`, the starting directory for the local file, `~/.claude` for the user's);
`path` and `./path` at the session's cwd.

`*` and `?` stay inside one path segment, `**` crosses directories (elsewhere in a segment it is
a `*`, as gitignore has it), `[…]` is a class. A pattern
with no `/` but a trailing one (`.env`, `*.pem`, `build/`) matches at any depth below its anchor
(`Read(.env)` is `Read(**/.env)`). A single directory and `/**` (`src/**`) is that directory at the
anchor in an allow rule, and at any depth in a deny or ask rule. A pattern that names a directory
names everything below it too, as gitignore has it.

A pattern is matched segment by segment (`SegmentGlob`), never by a backtracking expression: the
segments between two `**` are placed leftmost, and within a segment the pieces between two `*`
too, which is exact for such globs and linear in the path (a repository's `./**/**/…/**/zz` deny
once froze the agent). A pattern longer than `MAX_SEGMENTS` keeps its first segments and ends in
`**` (it matches more, never less); an unreadable class is taken literally; a `~user` that names
nobody is taken as written. So a deny or ask rule is never skipped; an allow rule may be.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from acp_agent.tools.globs import Segment, glob_class, segment

__all__ = ["MAX_SEGMENTS", "PathPattern", "SegmentGlob", "escaped_path", "read_path_pattern", "segment_glob"]

_GLOB = re.compile(r"[*?\[]")
MAX_SEGMENTS = 64
"""Segments of a pattern matched as written; a longer one ends in `**` past them."""


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A rule's path pattern: its anchor (`base`, absolute, ending in '/') and the glob below it,
    compiled over '/'-separated paths relative to the anchor."""

    text: str
    base: str
    glob: str
    """The glob below the anchor, compiled on first use (a session that never matches a path
    compiles nothing: its `session/new` pays only for reading the rules)."""

    def matches(self, path: str) -> bool:
        """`path` (absolute, '/'-separated) lies below the anchor and matches the glob there."""
        return path.startswith(self.base) and segment_glob(self.glob).matches(path[len(self.base) :])


def read_path_pattern(
    text: str, *, anchor: Path, cwd: Path, home: Path | None, anywhere: bool
) -> PathPattern | str:
    """The pattern of `Read(text)` / `Edit(text)`, or why it cannot be read.

    `anchor` is what a leading `/` means for the rule's file; `anywhere` is set for deny and ask
    rules (a single directory then matches at any depth)."""
    pattern = text.strip()
    if not pattern or "\0" in pattern:
        return "an empty path"
    if pattern.startswith("//"):
        base, rest = Path("/"), pattern[2:]
    elif pattern == "~" or pattern.startswith("~/"):
        home = home or (Path(os.path.expanduser("~")) if anywhere else None)
        if home is None or not home.is_absolute():
            return "`~` names no home directory here"
        base, rest = home, pattern[2:]
    elif pattern.startswith("~"):
        user, _, after = pattern.partition("/")
        named = Path(os.path.expanduser(user))
        if not named.is_absolute():
            if not anywhere:
                return "`~user` names no home directory here"
            named = cwd / user  # taken as written: a deny or ask rule is never skipped
        base, rest = named, after
    elif pattern.startswith("/"):
        base, rest = anchor, pattern[1:]
    else:
        explicit = pattern.startswith("./") or pattern == "."
        base, rest = cwd, pattern[2:] if pattern.startswith("./") else pattern
        if explicit:
            pass
        elif "/" not in rest.rstrip("/"):
            rest = "**/" + rest  # a bare name: at any depth
        elif anywhere and re.fullmatch(r"[^/*?\[]+/\*\*", rest):
            rest = "**/" + rest  # a deny or ask rule's single directory: at any depth
    rest = rest.rstrip("/")
    while rest.startswith("./"):
        rest = rest[2:]
    if rest in ("", "."):
        rest = "**"
    if not anywhere and (len(rest.split("/")) > MAX_SEGMENTS or _bad_class(rest)):
        return f"longer than {MAX_SEGMENTS} segments, or a character class that cannot be read"
    return PathPattern(text, str(base).rstrip("/") + "/", rest)


_DOUBLE = None
"""A `**` segment: any number of segments, none included."""


@dataclass(frozen=True, slots=True)
class SegmentGlob:
    """A glob over '/'-separated paths, matched without backtracking (see the module's docstring).

    Groups of single segments separated by `**`: the first at the start, each later one at its
    leftmost place after the one before; the pattern always ends in `**` (it names what is below)."""

    groups: tuple[tuple[Segment, ...], ...]
    anchored: bool
    """The first group must start at the first segment (the pattern does not begin with `**`)."""

    def matches(self, path: str) -> bool:
        names = path.split("/")
        position = 0
        for index, group in enumerate(self.groups):
            if index == 0 and self.anchored:
                if len(names) < len(group) or not all(
                    s.matches(n) for s, n in zip(group, names, strict=False)
                ):
                    return False
                position = len(group)
                continue
            found = next(
                (
                    i
                    for i in range(position, len(names) - len(group) + 1)
                    if all(s.matches(names[i + k]) for k, s in enumerate(group))
                ),
                None,
            )
            if found is None:
                return False
            position = found + len(group)
        return True


@functools.lru_cache(maxsize=4096)
def segment_glob(glob: str) -> SegmentGlob:
    """`glob` compiled (once per process): `**` segments, `**` elsewhere read as `*`, a trailing
    `**` one segment or more, past `MAX_SEGMENTS` segments a `**`."""
    parts = glob.split("/")
    if len(parts) > MAX_SEGMENTS:
        parts = [*parts[:MAX_SEGMENTS], "**"]
    items: list[Segment | None] = []
    for index, part in enumerate(parts):
        if part == "**":
            if index == len(parts) - 1:
                items.append(segment("*"))  # `src/**`: what is inside src, not src itself
            if not items or items[-1] is not _DOUBLE:
                items.append(_DOUBLE)
        else:
            items.append(segment(part.replace("**", "*")))
    if items[-1] is not _DOUBLE:
        items.append(_DOUBLE)
    groups: list[tuple[Segment, ...]] = [()]
    for item in items:
        if item is None:
            groups.append(())
        else:
            groups[-1] = (*groups[-1], item)
    anchored = items[0] is not _DOUBLE
    return SegmentGlob(tuple(g for i, g in enumerate(groups) if g or (i == 0 and anchored)), anchored)


def _bad_class(glob: str) -> bool:
    return any(
        glob[i] == "[" and glob.find("]", i + 1) != -1 and glob_class(glob, i) is None
        for i in range(len(glob))
    )


def escaped_path(path: Path) -> str:
    """`path` as a rule's pattern naming that one file: absolute (`//…`), its glob characters in
    classes of their own (`[*]`), so a saved answer names only the path it was given for."""
    text = _GLOB.sub(lambda m: f"[{m.group()}]", str(path))
    return "/" + text if text.startswith("/") else text
