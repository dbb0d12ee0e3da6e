"""structlog set-up: stderr only (stdout belongs to the protocol), JSON lines when not a TTY.

structlog's default configuration prints to stdout, which would corrupt the JSON-RPC stream, so
`configure()` must run before anything logs. INFO stays a few lines per turn: the official SDK
client pipes stderr and never reads it, so a chatty agent would block once 64 KiB are written.
No line holds more than LINE_CHARS: a long value (a client's 5 MB session id, a traceback that
quotes it) is cut in the middle, saying how long it was.

Code that embeds the agent (`acp_agent.api`) may itself be a stdio server, so there the default is
the embedder's own logging (`route_to_stdlib`), and `configure(..., embedded=True)` leaves the
process's root logger and its stderr's blocking mode alone.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

__all__ = ["configure", "route_to_stdlib"]

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


def configure(level: str | None = None, stream: TextIO | None = None, *, embedded: bool = False) -> None:
    """Send every log event to stderr; level from the argument or ACP_AGENT_LOG_LEVEL (default info).

    `embedded`: the process belongs to code that embeds the agent: lines are written as they come
    (stderr is not made non-blocking under it) and the stdlib root logger is left to its owner.

    Raises:
        ValueError: `stream` is stdout (or level is not a level name, when embedded).
    """
    stream = stream or sys.stderr
    if _is_stdout(stream):
        raise ValueError("log lines never go to stdout: it belongs to the protocol (give stderr or a file)")
    name = (level or os.environ.get("ACP_AGENT_LOG_LEVEL") or "info").strip().lower()
    if embedded and name not in _LEVELS:
        raise ValueError(f"unknown log level {level!r}: one of {', '.join(_LEVELS)}")
    numeric = _LEVELS.get(name, logging.INFO)
    renderer: structlog.typing.Processor
    if stream.isatty():
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = structlog.processors.JSONRenderer()
    writer = structlog.WriteLogger(stream) if embedded else _NeverBlockingWriter(stream)
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
        logger_factory=lambda *_: writer,
        cache_logger_on_first_use=True,
    )
    if not embedded:
        # Libraries that use the stdlib logging (httpx2, anthropic) must not reach stdout either.
        logging.basicConfig(stream=stream, level=max(numeric, logging.WARNING), force=True)


def route_to_stdlib() -> None:
    """Unless structlog is configured already, hand the agent's log events to the stdlib logger of
    their module (`acp_agent.turn.driver`, …) as logfmt text: the embedder's logging decides where
    they go, and with none set up only warnings reach stderr (Python's last-resort handler).

    structlog's own default prints to stdout, which would corrupt an embedder that is a stdio server
    (an MCP server, another ACP agent). A later `structlog.configure` by the embedder wins.
    """
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.contextvars.merge_contextvars,
            structlog.processors.format_exc_info,
            cap_values,
            _event_then_logfmt,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


_LOGFMT = structlog.processors.LogfmtRenderer(bool_as_flag=False)


def _event_then_logfmt(logger: Any, name: str, event: MutableMapping[str, Any]) -> str:
    """`turn.started turn_id=t_… max_turn_requests=50`: the stdlib record's message."""
    what = str(event.pop("event", ""))
    return f"{what} {_LOGFMT(logger, name, event)}".rstrip()


def _is_stdout(stream: TextIO) -> bool:
    if stream is sys.stdout or stream is sys.__stdout__:
        return True
    try:
        return stream.fileno() == 1
    except (OSError, ValueError, AttributeError):
        return False


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
