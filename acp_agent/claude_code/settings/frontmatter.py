"""The `---` block at the top of a command file or a SKILL.md: the small YAML subset they use.

Claude Code's command files and Agent Skills carry `key: value` lines (`description`, `name`,
`argument-hint`, `model`, `allowed-tools`...), now and then a quoted value, a `>`/`|` block, an
indented continuation or a `- item` list. That subset is parsed here, with no YAML dependency: a
value is always a string (a `- item` list is joined with ", "; a `[a, b]` flow list stays as
written, as `argument-hint: [file]` is meant), and a line outside the subset makes the
block invalid, with the line named, rather than guessed at.
"""

from __future__ import annotations

import re

__all__ = ["Frontmatter", "split_frontmatter"]

Frontmatter = dict[str, str]

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$")
_FENCE = "---"
MAX_LINES = 200
"""A block longer than this is not frontmatter but a file that forgot to close it."""


def split_frontmatter(text: str) -> tuple[Frontmatter, str, str | None]:
    """(fields, body, problem): the block's fields, the text after it, and what is wrong with the
    block (None when it parsed). A text without a block is all body, with no fields."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[0].rstrip() != _FENCE:
        return {}, text, None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == _FENCE), None)
    if end is None or end > MAX_LINES:
        return {}, text, f"the frontmatter's `---` block is not closed within {MAX_LINES} lines"
    fields, problem = _fields(lines[1:end])
    return fields, "\n".join(lines[end + 1 :]).lstrip("\n"), problem


def _fields(lines: list[str]) -> tuple[Frontmatter, str | None]:
    fields: Frontmatter = {}
    key: str | None = None
    style = ""  # the block style of `key` (">" folded, "|" literal), or "" for a plain value
    parts: list[str] = []

    def close() -> None:
        if key is not None:
            joiner = "\n" if style == "|" else (", " if style == "-" else " ")
            fields[key] = _unquote(joiner.join(p for p in parts if p or style == "|").strip())

    for number, raw in enumerate(lines, 2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            if style == "|" and key is not None:
                parts.append("")
            continue
        indented = line[:1] in (" ", "\t")
        if indented and key is not None:
            item = line.strip()
            if item.startswith("- ") and (style == "-" or (style == "" and not parts)):
                style = "-"
                item = _unquote(item[2:].strip())
            parts.append(item)
            continue
        match = _KEY.match(line)
        if match is None:
            return fields, f"line {number} of the frontmatter is not `key: value`: {line.strip()[:60]!r}"
        close()
        key, value = match.group(1).lower(), (match.group(2) or "").strip()
        style, parts = "", []
        if value[:1] in (">", "|") and value.rstrip("+-") in (">", "|"):
            style = value[0]
        elif value:
            parts = [_strip_comment(value)]
    close()
    return fields, None


def _strip_comment(value: str) -> str:
    """`value # note` → `value` (YAML's comment needs the space; quoted values keep their `#`)."""
    if value[:1] in ("'", '"'):
        return value
    return value.split(" #", 1)[0].rstrip()


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner.replace('\\"', '"')
    return value
