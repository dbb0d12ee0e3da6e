"""JSON text a project, the home directory or a hook hands the agent, read with a bound on its depth.

`json.loads` raises RecursionError, not ValueError, past about 1,000 levels, and a value a few
hundred levels deep still breaks what recurses over it later (a deepcopy fails at 500). So the
settings files, `.mcp.json`, `~/.claude.json`, the plugins' index and manifests, the trust store
and a hook's stdout are read with `loads`: text nested deeper than MAX_DEPTH is refused with
ValueError, as invalid JSON is, and each reader's warning names the file (or the hook) while the
session and the turn go on.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "loads"]

MAX_DEPTH = 100
"""Levels of arrays and objects a JSON text may nest (Claude Code's files nest fewer than ten)."""


def loads(text: str | bytes) -> Any:
    """`text` parsed as JSON.

    Raises:
        ValueError: it is not JSON (UnicodeDecodeError for bytes that are not UTF-8), or it nests
            deeper than MAX_DEPTH.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if _deeper_than(value, MAX_DEPTH):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` levels of lists and dicts (walked without recursion,
    containers only: a large file of scalars costs little)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > limit:
            return True
        children = container.values() if isinstance(container, dict) else container
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
