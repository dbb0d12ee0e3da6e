"""The agent's stderr, for a person: its log lines as `time level event key=value …`, never raw JSON.

This agent logs one structlog JSON object per line; any other agent's stderr is plain text, shown as
it is. `AgentLog` is the sink the smoke runner hands the spawned agent's stderr to (`smoke -v`): it
cuts the bytes into lines and gives each, rendered, to a callback that starts a line of its own, so
a log line never lands in the middle of streamed text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["AgentLog", "flat", "log_line"]

_VALUE_CHARS = 160
_SHOWN_FIRST = ("timestamp", "level", "event")


def flat(value: Any, limit: int = _VALUE_CHARS, *, inner: bool = False) -> str:
    """A value as a person reads it: text as is, a mapping as `k=v k=v` (in parentheses when it is
    inside another value), a list comma-joined (`;` between mappings)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping):
        text = " ".join(f"{k}={flat(v, limit, inner=True)}" for k, v in value.items())
        text = f"({text})" if inner else text
    elif isinstance(value, list | tuple):
        parts = [flat(item, limit, inner=True) for item in value]
        text = ", ".join(parts)
    elif value is None:
        text = "-"
    else:
        text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def log_line(line: str) -> str:
    """One stderr line rendered: a structlog JSON object as `HH:MM:SS level event k=v …`."""
    try:
        event = json.loads(line)
    except ValueError:
        return line
    if not isinstance(event, dict) or "event" not in event:
        return line
    clock = str(event.get("timestamp") or "")[11:19]
    head = " ".join(str(event[key]) for key in _SHOWN_FIRST if key != "timestamp" and event.get(key))
    rest = " ".join(
        f"{key}={flat(value, inner=True)}" for key, value in event.items() if key not in _SHOWN_FIRST
    )
    return " ".join(part for part in (clock, head, rest) if part)


class AgentLog:
    """A binary sink for the agent's stderr: each complete line, rendered, goes to `show`."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show
        self._partial = b""

    def write(self, data: bytes) -> int:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for raw in lines:
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if text.strip():
                self._show(log_line(text))
        return len(data)

    def flush(self) -> None:
        """Lines are shown as they complete; a last line without its newline waits for `close`."""

    def close(self) -> None:
        if self._partial.strip():
            self._show(log_line(self._partial.decode("utf-8", "replace")))
        self._partial = b""
