"""Phases (`acp_agent/phases.py`) are logged only when the bench asks, each as one event on the
clock the bench reads (`time.perf_counter`)."""

from __future__ import annotations

import time

import pytest
import structlog.testing

from acp_agent import phases


def test_a_phase_is_one_event_with_its_times_cpu_and_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases._Switch, "on", True)
    before = time.perf_counter()
    with structlog.testing.capture_logs() as logs, phases.phase("reading"):
        sum(range(10_000))
    after = time.perf_counter()
    (event,) = logs
    assert event["event"] == "phase" and event["name"] == "reading"
    assert before <= event["start"] <= event["end"] <= after
    assert event["cpu_ms"] >= 0 and event["modules"] > event["sdk_modules"] >= 0


def test_off_by_default_nothing_is_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases._Switch, "on", False)
    with structlog.testing.capture_logs() as logs:
        with phases.phase("reading"):
            pass
        phases.mark("now")
    assert logs == []
