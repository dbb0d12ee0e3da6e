"""What the smoke runner prints is for a person: log lines rendered, a summary, no `None`."""

from __future__ import annotations

import io

from acp_agent.harness.agent_log import AgentLog, log_line
from acp_agent.harness.render import TurnPrinter

TURN = {
    "turnId": "t_1",
    "stopReason": "max_turn_requests",
    "modelRequests": 2,
    "maxTurnRequests": 2,
    "toolCalls": 3,
    "toolCallsFailed": 1,
    "retries": 1,
    "inputTokens": 12345,
    "outputTokens": 67,
    "limit": "maxTurnRequests",
    "costUsd": None,
    "limits": {"maxTurnRequests": 2},
}


def finished(turn: dict[str, object], *, verbose: bool = False) -> str:
    out = io.StringIO()
    TurnPrinter(out, verbose=verbose).finish(
        {"stopReason": turn["stopReason"], "_meta": {"acp-agent": {"turn": turn}}}
    )
    return out.getvalue()


def test_the_summary_is_a_few_lines_and_leaves_out_what_the_record_lacks() -> None:
    assert finished(TURN).splitlines() == [
        "",
        "stop reason: max_turn_requests",
        "limit: maxTurnRequests",
        "requests: 2 of 2 (1 retry)",
        "tool calls: 3 (1 failed)",
        "tokens: 12,345 in, 67 out",
        "(the whole turn record: --verbose, or --json)",
    ]


def test_verbose_shows_the_whole_record_as_text() -> None:
    text = finished(TURN, verbose=True)
    assert "  turnId: t_1\n" in text and "  limits: maxTurnRequests=2\n" in text
    assert "  costUsd: -\n" in text and "None" not in text and "{" not in text


def test_a_session_title_that_is_not_set_is_not_shown() -> None:
    out = io.StringIO()
    printer = TurnPrinter(out)
    printer.update({"sessionUpdate": "session_info_update", "title": None, "updatedAt": "2026-11-28"})
    printer.update({"sessionUpdate": "session_info_update", "title": "Fix the average"})
    assert out.getvalue() == "session title: Fix the average\n"


def test_a_structlog_line_is_rendered_and_other_lines_pass_as_they_are() -> None:
    line = '{"turn_id": "t_1", "limits": {"a": 1}, "event": "turn.started", "level": "info", '
    line += '"timestamp": "2026-11-28T09:28:54.217424Z"}'
    assert log_line(line) == "09:28:54 info turn.started turn_id=t_1 limits=(a=1)"
    assert log_line("Traceback (most recent call last):") == "Traceback (most recent call last):"
    assert log_line('["a list"]') == '["a list"]'


def test_the_log_sink_shows_whole_lines_across_writes() -> None:
    shown: list[str] = []
    sink = AgentLog(shown.append)
    sink.write(b'{"event": "a", "level": "info"}\nhalf ')
    sink.write(b"a line\n\nlast")
    assert shown == ["info a", "half a line"]
    sink.close()
    assert shown == ["info a", "half a line", "last"]
