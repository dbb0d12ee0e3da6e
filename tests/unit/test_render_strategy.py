"""The smoke runner shows a strategy's trials and phase changes readably."""

from __future__ import annotations

import io

from acp_agent.harness.render import TurnPrinter


def test_trials_and_transitions_are_shown_line_by_line() -> None:
    out = io.StringIO()
    printer = TurnPrinter(out)
    printer.finish(
        {
            "stopReason": "end_turn",
            "_meta": {
                "acp-agent": {
                    "turn": {
                        "loop": "phased",
                        "stopReason": "end_turn",
                        "transitions": [{"from": "plan", "to": "act", "reason": "approved", "atRequest": 2}],
                        "trials": [
                            {
                                "trial": 1,
                                "passed": False,
                                "score": 0,
                                "evaluator": "command",
                                "feedback": "1 failed\\nmore",
                            },
                            {"trial": 2, "passed": True, "score": 1, "evaluator": "command", "feedback": ""},
                        ],
                    }
                }
            },
        }
    )
    text = out.getvalue()
    assert "phase plan → act: approved (at request 2)" in text
    assert "trial 1: failed, score 0 (command) - 1 failed" in text
    assert "trial 2: passed, score 1 (command)" in text
    assert "trials:" not in text
