"""Stuck-loop detection: identical call + identical result repeats, not legitimate polling."""

from __future__ import annotations

from acp_agent.turn.repeats import RepeatDetector


def test_identical_call_and_result_counts_up_to_nudge_then_stop() -> None:
    detector = RepeatDetector(limit=5)
    counts = [detector.observe([("read_file", {"path": "a"}, "same")]) for _ in range(5)]
    assert counts == [1, 2, 3, 4, 5]
    assert [detector.should_nudge(c) for c in counts] == [False, False, True, True, False]
    assert [detector.should_stop(c) for c in counts] == [False] * 4 + [True]


def test_a_changing_result_is_not_a_loop() -> None:
    detector = RepeatDetector(limit=5)
    counts = [detector.observe([("read_file", {"path": "a"}, f"v{n}")]) for n in range(10)]
    assert max(counts) == 1


def test_argument_order_does_not_matter_but_values_do() -> None:
    detector = RepeatDetector()
    assert detector.observe([("t", {"a": 1, "b": 2}, "r")]) == 1
    assert detector.observe([("t", {"b": 2, "a": 1}, "r")]) == 2
    assert detector.observe([("t", {"a": 1, "b": 3}, "r")]) == 1


def test_a_batch_is_one_observation() -> None:
    detector = RepeatDetector()
    batch = [("t", {"n": 1}, "x"), ("t", {"n": 2}, "y")]
    assert detector.observe(batch) == 1
    assert detector.observe(batch) == 2
    assert detector.observe(batch[:1]) == 1


def test_zero_turns_detection_off() -> None:
    detector = RepeatDetector(limit=0)
    assert all(detector.observe([("t", {}, "r")]) == 0 for _ in range(10))
    assert not detector.should_stop(10)
