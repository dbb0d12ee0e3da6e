"""Partial JSON patterns for the harness: match a message, capture `$names`, and say what differs.

A pattern is JSON. An object matches an object that has at least its keys (extra keys are fine);
a list matches a list of the same length, item by item; other values must be equal. Strings are
special: `"*"` matches any value, `"$name"` captures the value (or, once bound, must equal it),
`"${name}"` inside a longer string is replaced by the bound value, and `"$$"` is a literal `$`.
One-key objects are operators: `{"$regex": "…"}` (a string that `re.search` matches),
`{"$contains": [p, …]}` (a list with an item matching each pattern), `{"$type": "string"}`
(JSON type name), `{"$absent": true}` (as a value: the key must be missing) and
`{"$literal": value}` (compared exactly, as a whole).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acp_agent.errors import HarnessError

__all__ = [
    "OPERATORS",
    "Mismatch",
    "PatternError",
    "format_mismatches",
    "match",
    "substitute",
]

OPERATORS = frozenset({"$regex", "$contains", "$type", "$absent", "$literal"})
_CAPTURE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_INTERPOLATE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
_MISSING: Any = object()


class PatternError(HarnessError, ValueError):
    """A pattern or a substitution that cannot be used (an unbound `$name`, a bad operator)."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One difference: where, what the pattern wanted, and what the message had."""

    path: str
    expected: str
    got: str


def _show(value: Any, limit: int = 160) -> str:
    if value is _MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _interpolate(text: str, bound: Mapping[str, Any]) -> str:
    def one(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        name = found.group(1)
        if name not in bound:
            raise PatternError(f"${{{name}}} is used before it was captured or set")
        value = bound[name]
        return value if isinstance(value, str) else json.dumps(value)

    return _INTERPOLATE.sub(one, text)


def substitute(value: Any, bound: Mapping[str, Any]) -> Any:
    """Fill `$name` and `${name}` from `bound` in something the harness is about to send."""
    if isinstance(value, str):
        if (whole := _CAPTURE.fullmatch(value)) is not None:
            if whole.group(1) not in bound:
                raise PatternError(f"{value} is used before it was captured or set")
            return bound[whole.group(1)]
        return _interpolate(value, bound)
    if isinstance(value, list):
        return [substitute(item, bound) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, bound) for key, item in value.items()}
    return value


def _equal(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    return bool(expected == got)


def _operator(pattern: Any) -> str | None:
    if isinstance(pattern, dict) and len(pattern) == 1:
        (key,) = pattern
        if key in OPERATORS:
            return str(key)
        if isinstance(key, str) and key.startswith("$") and not key.startswith("$$"):
            raise PatternError(f"unknown operator {key!r} (known: {', '.join(sorted(OPERATORS))})")
    return None


class _Matcher:
    def __init__(self, bound: Mapping[str, Any]) -> None:
        self.bound = bound
        self.captured: dict[str, Any] = {}
        self.mismatches: list[Mismatch] = []

    def miss(self, path: str, expected: Any, got: Any) -> None:
        text = expected if isinstance(expected, str) and expected.startswith("(") else _show(expected)
        self.mismatches.append(Mismatch(path, text, _show(got)))

    def run(self, pattern: Any, got: Any, path: str) -> None:
        if isinstance(pattern, str):
            self.string(pattern, got, path)
        elif (op := _operator(pattern)) is not None:
            self.operator(op, pattern[op], got, path)
        elif isinstance(pattern, dict):
            if not isinstance(got, dict):
                self.miss(path, "(an object)", got)
                return
            for key, sub in pattern.items():
                key = key[1:] if key.startswith("$$") else key
                if _operator(sub) == "$absent":
                    if key in got and sub["$absent"]:
                        self.miss(f"{path}.{key}", "(absent)", got[key])
                    continue
                self.run(sub, got.get(key, _MISSING), f"{path}.{key}")
        elif isinstance(pattern, list):
            if not isinstance(got, list) or len(got) != len(pattern):
                self.miss(path, f"(a list of {len(pattern)})", got)
                return
            for index, (sub, item) in enumerate(zip(pattern, got, strict=True)):
                self.run(sub, item, f"{path}[{index}]")
        elif got is _MISSING or not _equal(pattern, got):
            self.miss(path, pattern, got)

    def string(self, pattern: str, got: Any, path: str) -> None:
        if pattern == "*":
            if got is _MISSING:
                self.miss(path, "(any value)", got)
            return
        if (whole := _CAPTURE.fullmatch(pattern)) is not None:
            name = whole.group(1)
            if got is _MISSING:
                self.miss(path, f"(a value for ${name})", got)
            elif name in self.captured or name in self.bound:
                known = self.captured.get(name, self.bound.get(name))
                if not _equal(known, got):
                    self.miss(path, known, got)
            else:
                self.captured[name] = got
            return
        expected = _interpolate(pattern, {**self.bound, **self.captured})
        if got is _MISSING or not _equal(expected, got):
            self.miss(path, expected, got)

    def operator(self, op: str, arg: Any, got: Any, path: str) -> None:
        if op == "$literal":
            if got is _MISSING or not _equal(arg, got):
                self.miss(path, arg, got)
        elif op == "$regex":
            if not isinstance(got, str) or re.search(str(arg), got) is None:
                self.miss(path, f"(a string matching /{arg}/)", got)
        elif op == "$type":
            types = _TYPES.get(str(arg))
            if types is None:
                raise PatternError(f"unknown $type {arg!r} (known: {', '.join(_TYPES)})")
            bad = isinstance(got, bool) and bool not in types
            if got is _MISSING or bad or not isinstance(got, types):
                self.miss(path, f"(a value of type {arg})", got)
        elif op == "$contains":
            self.contains(arg if isinstance(arg, list) else [arg], got, path)
        else:  # "$absent" outside an object: only "absent" itself can match
            if got is not _MISSING and arg:
                self.miss(path, "(absent)", got)

    def contains(self, patterns: list[Any], got: Any, path: str) -> None:
        if not isinstance(got, list):
            self.miss(path, "(a list)", got)
            return
        for index, sub in enumerate(patterns):
            for item in got:
                trial = _Matcher({**self.bound, **self.captured})
                trial.run(sub, item, path)
                if not trial.mismatches:
                    self.captured.update(trial.captured)
                    break
            else:
                self.miss(f"{path} (item {index} of $contains)", f"(an item matching {_show(sub)})", got)


def match(pattern: Any, got: Any, bound: Mapping[str, Any]) -> tuple[list[Mismatch], dict[str, Any]]:
    """Compare `got` with `pattern`; return the differences and, when there are none, the captures."""
    matcher = _Matcher(bound)
    matcher.run(pattern, got, "$")
    return matcher.mismatches, ({} if matcher.mismatches else matcher.captured)


def format_mismatches(mismatches: list[Mismatch], indent: str = "    ", limit: int = 12) -> str:
    """A diff of the differences: `-` what the pattern expected, `+` what the message had."""
    lines: list[str] = []
    for item in mismatches[:limit]:
        lines += [f"{indent}@ {item.path}", f"{indent}- {item.expected}", f"{indent}+ {item.got}"]
    if len(mismatches) > limit:
        lines.append(f"{indent}… and {len(mismatches) - limit} more differences")
    return "\n".join(lines)
