"""structlog set-up: stderr only (stdout belongs to the protocol), JSON lines when not a TTY.

structlog's default configuration prints to stdout, which would corrupt the JSON-RPC stream, so
`configure()` must run before anything logs. INFO stays a few lines per turn: the official SDK
client pipes stderr and never reads it, so a chatty agent would block once 64 KiB are written.
No line holds more than LINE_CHARS: a long value (a client's 5 MB session id, a traceback that
quotes it) is cut in the middle, saying how long it was.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

__all__ = ["configure"]

VALUE_CHARS = 2_000
"""At most this many characters of one logged value (16 KiB for a traceback)."""
TRACEBACK_CHARS = 16_384
LINE_CHARS = 65_536
"""The hard cap of one rendered line, whatever it holds."""

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


def configure(level: str | None = None, stream: TextIO | None = None) -> None:
    """Send every log event to stderr; level from the argument or ACP_AGENT_LOG_LEVEL (default info)."""
    stream = stream or sys.stderr
    name = (level or os.environ.get("ACP_AGENT_LOG_LEVEL") or "info").strip().lower()
    numeric = _LEVELS.get(name, logging.INFO)
    renderer: structlog.typing.Processor
    if stream.isatty():
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            cap_values,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=lambda *_: _NeverBlockingWriter(stream),
        cache_logger_on_first_use=True,
    )
    # Libraries that use the stdlib logging (httpx2, anthropic) must not reach stdout either.
    logging.basicConfig(stream=stream, level=max(numeric, logging.WARNING), force=True)


def _cut(text: str, keep: int) -> str:
    if len(text) <= keep:
        return text
    half = keep // 2
    return f"{text[:half]}…[{len(text) - 2 * half:,} of {len(text):,} characters cut]…{text[-half:]}"


def cap_values(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A structlog processor: every value is cut to VALUE_CHARS (TRACEBACK_CHARS for a traceback)."""
    for key, value in event.items():
        if isinstance(value, str):
            event[key] = _cut(value, TRACEBACK_CHARS if key == "exception" else VALUE_CHARS)
        elif isinstance(value, dict | list | tuple | set | bytes) and len(text := repr(value)) > VALUE_CHARS:
            event[key] = _cut(text, VALUE_CHARS)  # a big structure is logged as its cut repr
    return event


class _NeverBlockingWriter:
    """Writes rendered lines to stderr without ever blocking the agent.

    When stderr is a pipe nobody reads (the official SDK client does this), a full pipe would stall
    the event loop; lines that do not fit are dropped and counted instead. A TTY is written as is.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._fd: int | None = None
        self.dropped = 0
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            return
        if not os.isatty(fd):
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            self._fd = fd

    def msg(self, message: str) -> None:
        message = _cut(message, LINE_CHARS)
        data = (message + "\n").encode("utf-8", "replace")
        if self._fd is None:
            self._stream.write(message + "\n")
            self._stream.flush()
            return
        try:
            written = os.write(self._fd, data)
        except (BlockingIOError, BrokenPipeError):
            self.dropped += 1
            return
        except OSError:
            self.dropped += 1
            return
        if written < len(data):
            self.dropped += 1  # the rest of a partial line is lost; never wait for the pipe

    log = debug = info = warn = warning = err = error = critical = exception = fatal = msg

    def __repr__(self) -> str:
        return f"<_NeverBlockingWriter fd={self._fd}>"
