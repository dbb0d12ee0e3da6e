"""A JSON object nested deeper than `json` can recurse, read without recursion: its envelope.

`json.loads` raises RecursionError at about 990 levels, and such a line used to be answered
-32700 with `id: null`, although it is valid JSON whose id can be read. `read_deep_object`
checks the whole text with an iterative scanner and returns the object's members: each one as
`json` parses it, or `TOO_DEEP`. It is the slow path, taken only after RecursionError, and only
for lines of at most `MAX_DEEP_CHARS` (a 256 KiB line of one-level tokens takes about 0.1 s).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["MAX_DEEP_CHARS", "TOO_DEEP", "read_deep_object"]

MAX_DEEP_CHARS = 256 * 1024
"""Longer lines are not scanned: they stay -32700."""


class _TooDeep:
    def __repr__(self) -> str:
        return "TOO_DEEP"


TOO_DEEP: Final = _TooDeep()
"""The value of a member nested too deeply to parse."""

_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
        (?P<string>"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+")
      | (?P<scalar>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null)
      | (?P<opens>\[(?:[ \t\n\r]*\[)+)
      | (?P<closes>\](?:[ \t\n\r]*\])+)
      | (?P<punct>[][{}:,])
    )""",
    re.VERBOSE,
)
"""One token; a run of `[` or of `]` is one token, so `[[[…]]]` costs a few steps, not one per level.
A string's quantifiers are possessive: an unterminated string fails in one pass, where backtracking
into the runs of plain characters took time exponential in its length (a hostile line froze the agent)."""
_SPACE = re.compile(r"[ \t\n\r]*")

# What the scanner expects next.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _AFTER = range(6)


def read_deep_object(text: str) -> dict[str, Any] | None:
    """The members of the JSON object `text` (those `json` cannot parse as `TOO_DEEP`); None when
    `text` is not one well-formed JSON object, or is longer than `MAX_DEEP_CHARS`."""
    if len(text) > MAX_DEEP_CHARS or not text.lstrip(" \t\n\r").startswith("{"):
        return None
    members: dict[str, Any] = {}
    stack: list[str] = []
    expect = _VALUE
    key = ""
    start = pos = 0
    while stack or expect != _AFTER:
        match = _TOKEN.match(text, pos)
        if match is None:
            return None
        pos = match.end()
        kind = match.lastgroup
        token = match[kind] if kind else ""
        if kind == "closes":
            count = token.count("]")
            if expect not in (_AFTER, _VALUE_OR_CLOSE) or stack[-count:].count("[") != count:
                return None
            del stack[-count:]
            expect = _AFTER
            if len(stack) == 1:
                members[key] = _member(text[start:pos])
        elif expect == _COLON:
            if token != ":":
                return None
            expect = _VALUE
        elif expect == _AFTER:
            if token == ",":
                expect = _KEY if stack[-1] == "{" else _VALUE
            elif token in ("}", "]") and kind == "punct":
                if not _close(stack, token):
                    return None
                if len(stack) == 1:
                    members[key] = _member(text[start:pos])
            else:
                return None
        elif expect in (_KEY, _KEY_OR_CLOSE):
            if kind == "string":
                if len(stack) == 1:
                    key = json.loads(token)
                expect = _COLON
            elif token == "}" and expect == _KEY_OR_CLOSE:
                _close(stack, token)
                expect = _AFTER
                if len(stack) == 1:
                    members[key] = _member(text[start:pos])
            else:
                return None
        elif kind == "opens" and expect in (_VALUE, _VALUE_OR_CLOSE):
            if len(stack) == 1:
                start = match.start(kind)
            stack.extend("[" * token.count("["))
            expect = _VALUE_OR_CLOSE
        elif kind == "punct" and token in ("{", "["):  # expecting a value
            if len(stack) == 1:
                start = match.start(kind)
            stack.append(token)
            expect = _KEY_OR_CLOSE if token == "{" else _VALUE_OR_CLOSE
        elif kind in ("string", "scalar"):
            if len(stack) == 1:
                members[key] = json.loads(token)
            expect = _AFTER
        elif token == "]" and expect == _VALUE_OR_CLOSE:
            _close(stack, token)
            expect = _AFTER
            if len(stack) == 1:
                members[key] = _member(text[start:pos])
        else:
            return None
    end = _SPACE.match(text, pos)
    return members if end is not None and end.end() == len(text) else None


def _close(stack: list[str], token: str) -> bool:
    """Pop the container `token` closes; False when it closes another kind (or none)."""
    if not stack or stack[-1] != ("{" if token == "}" else "["):
        return False
    stack.pop()
    return True


def _member(value: str) -> Any:
    """A top-level member's value: parsed when `json` can, else `TOO_DEEP`."""
    try:
        return json.loads(value)
    except RecursionError:
        return TOO_DEEP
