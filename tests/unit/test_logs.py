"""No single log line can grow without bound, whatever a client sends."""

from __future__ import annotations

import io
import json

import structlog

from acp_agent.logs import LINE_CHARS, VALUE_CHARS, configure


def test_long_values_and_tracebacks_are_cut_and_the_line_stays_json() -> None:
    stream = io.StringIO()
    configure("info", stream)
    try:
        log = structlog.get_logger("test")
        log.info("big", value="x" * 5_000_000, items=list(range(100_000)), small={"a": 1})
        try:
            raise ValueError("y" * 1_000_000)
        except ValueError:
            log.exception("crash")
    finally:
        configure("info")
    lines = stream.getvalue().splitlines()
    assert all(len(line) <= LINE_CHARS for line in lines)
    big, crash = (json.loads(line) for line in lines)
    assert len(big["value"]) < VALUE_CHARS + 100 and "5,000,000 characters" in big["value"]
    assert big["small"] == {"a": 1} and len(big["items"]) < VALUE_CHARS + 100
    assert "ValueError" in crash["exception"] and len(crash["exception"]) < 20_000
