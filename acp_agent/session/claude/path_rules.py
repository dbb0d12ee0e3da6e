"""The path a `Read(…)` or `Edit(…)` rule names, read as Claude Code reads it (gitignore globs).

Where a pattern is anchored (Claude Code's table): `//path` at the filesystem root; `~/path` at
the user's home; `/path` at the settings file's own place (`SettingsFile.anchor`: the project for
`.claude/settings.json`, the starting directory for the local file, `~/.claude` for the user's);
`path` and `./path` at the session's cwd.

`*` and `?` stay inside one path segment, `**` crosses directories, `[…]` is a class. A pattern
with no `/` but a trailing one (`.env`, `*.pem`, `build/`) matches at any depth below its anchor
(`Read(.env)` is `Read(**/.env)`). A single directory and `/**` (`src/**`) is that directory at the
anchor in an allow rule, and at any depth in a deny or ask rule. A pattern that names a directory
names everything below it too, as gitignore has it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from acp_agent.tools.paths import glob_source

__all__ = ["PathPattern", "compiled", "escaped_path", "read_path_pattern"]

_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A rule's path pattern: its anchor (`base`, absolute, ending in '/') and the glob below it,
    compiled over '/'-separated paths relative to the anchor."""

    text: str
    base: str
    source: str
    """The glob as a regular expression, compiled on first use (a session that never matches a
    path compiles nothing: its `session/new` pays only for reading the rules)."""

    def matches(self, path: str) -> bool:
        """`path` (absolute, '/'-separated) lies below the anchor and matches the glob there."""
        return path.startswith(self.base) and compiled(self.source).match(path, len(self.base)) is not None


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
        if home is None:
            return "`~` names no home directory here"
        base, rest = home, pattern[2:]
    elif pattern.startswith("~"):
        return "`~user` is not supported"
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
    source = f"(?s:{glob_source(rest)}(?:/.*)?)\\Z"
    if "[" in rest:  # only a character class can fail to compile: found now, not at a match
        try:
            compiled(source)
        except re.error as exc:
            return f"not a glob ({exc})"
    return PathPattern(text, str(base).rstrip("/") + "/", source)


@functools.lru_cache(maxsize=4096)
def compiled(source: str) -> re.Pattern[str]:
    """A path rule's expression, compiled once per process."""
    return re.compile(source)


def escaped_path(path: Path) -> str:
    """`path` as a rule's pattern naming that one file: absolute (`//…`), its glob characters in
    classes of their own (`[*]`), so a saved answer names only the path it was given for."""
    text = _GLOB.sub(lambda m: f"[{m.group()}]", str(path))
    return "/" + text if text.startswith("/") else text
