"""Bounds on a search pattern before the `regex` package compiles it (issue 29 item 7).

`regex` expands a counted repetition of a fixed piece into that many copies, and a nested one
into the product: `(?:x{65535}){65535}` asked for gigabytes before the first line was searched
(rg refuses such a pattern; the Python path is the fallback). So the pattern is read once, in
linear time, and refused with a clear error when it is too long, nests too deep, or its counted
repetitions multiply past `MAX_EXPANSION` pieces. Open-ended repetition (`*`, `+`, `{2,}`) is a
loop, not copies, and costs nothing here.
"""

from __future__ import annotations

import re
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.lazy import deferred

__all__ = ["MAX_DEPTH", "MAX_EXPANSION", "MAX_PATTERN_CHARS", "check_pattern", "regex_module"]

MAX_PATTERN_CHARS = 10_000
MAX_DEPTH = 100
MAX_EXPANSION = 100_000
"""Pieces a pattern may stand for once its counted repetitions are written out (~30 MB compiled)."""


@deferred
def regex_module() -> Any:
    """The `regex` package (~8 ms of import): only a hook matcher that is an expression and the
    Python search path compile with it, so a first request never waits for it (issue 46)."""
    import regex  # type: ignore[import-untyped]  # no stubs in the venv (types-regex)

    return regex


_COUNT = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_BRACED_ESCAPES = frozenset("xNpPuUgk")  # \x{41}, \N{name}, \p{L}, \g{1}: braces are the escape's


def _skip_class(pattern: str, i: int) -> int:
    """The index after the character class starting at `pattern[i] == "["`."""
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a leading "]" is a literal
        i += 1
    depth = 1
    while i < len(pattern) and depth:
        c = pattern[i]
        if c == "\\":
            i += 1
        elif c == "[":  # a nested set (regex's V1) or a POSIX class: count it, to be safe
            depth += 1
        elif c == "]":
            depth -= 1
        i += 1
    return i


def _skip_escape(pattern: str, i: int) -> int:
    """The index after the escape starting at `pattern[i] == "\\"`."""
    if i + 1 < len(pattern) and pattern[i + 1] in _BRACED_ESCAPES and pattern[i + 2 : i + 3] == "{":
        end = pattern.find("}", i + 3)
        return len(pattern) if end == -1 else end + 1
    return i + 2


def check_pattern(pattern: str) -> None:
    """Raise ToolError when compiling `pattern` could take more memory or time than a search may."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            f"the pattern is {len(pattern):,} characters long; search_text takes at most "
            f"{MAX_PATTERN_CHARS:,}: search for a shorter, distinctive part"
        )
    frames: list[list[int]] = [[0, 0]]  # per open group: [total pieces, pieces of the last item]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "(":
            if pattern.startswith("(?#", i):  # a comment
                end = pattern.find(")", i)
                i = len(pattern) if end == -1 else end + 1
                continue
            frames.append([0, 0])
            if len(frames) > MAX_DEPTH + 1:
                raise ToolError(f"the pattern nests groups more than {MAX_DEPTH} deep; simplify it")
            i += 1
            continue
        if c == ")" and len(frames) > 1:
            inner = max(frames.pop()[0], 1)
            frames[-1][0] += inner
            frames[-1][1] = inner
            i += 1
        elif c == "{" and (count := _COUNT.match(pattern, i)) and (count.group(1) or count.group(3)):
            low, comma, high = count.groups()  # {n}: n copies; {n,m} and {,m}: up to m; {n,}: n
            times = int(high) if comma and high else int(low)
            frame = frames[-1]
            frame[0] += frame[1] * (max(times, 1) - 1)
            frame[1] *= max(times, 1)
            i = count.end()
        else:
            if c == "[":
                i = _skip_class(pattern, i)
            elif c == "\\":
                i = _skip_escape(pattern, i)
            else:
                i += 1
            if c not in "|*+?":
                frames[-1][0] += 1
                frames[-1][1] = 1
        if frames[-1][0] > MAX_EXPANSION:
            raise ToolError(
                f"the pattern's counted repetitions ({{n}}, {{n,m}}) multiply to more than "
                f"{MAX_EXPANSION:,} pieces, more than a search may compile; use smaller counts, "
                f"or + and * for runs of any length"
            )
