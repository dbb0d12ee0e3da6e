"""The result contract: one protocol for the common record, one frozen type per strategy."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from acp_agent.limits import Limits
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.base import record_of
from acp_agent.turn.strategies.phased import PhasedStrategy
from acp_agent.turn.strategies.results import (
    LoopResult,
    PhasedResult,
    ToolsResult,
    Transition,
    Trial,
    VerifyResult,
    best_trial,
    clip_feedback,
)
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, VerifyStrategy


def trial(n: int, passed: bool, score: float, feedback: str = "f") -> Trial:
    return Trial(
        trial=n,
        passed=passed,
        score=score,
        evaluator="command",
        feedback=feedback,
        model_requests=1,
        duration_ms=5,
    )


def record(cls: type[TurnRecord], **fields: Any) -> TurnRecord:
    return cls.from_meter(
        TurnMeter(Limits(max_turn_requests=4)),
        turn_id="t_1",
        stop=TurnStop.END_TURN,
        streaming=True,
        **fields,
    )


def test_every_result_type_is_a_loop_result_and_frozen() -> None:
    for cls in (ToolsResult, VerifyResult, PhasedResult):
        value = record(cls)
        assert isinstance(value, LoopResult)
        with pytest.raises(ValidationError):
            value.stop_reason = "x"  # type: ignore[misc]
    assert record(ToolsResult).loop == "tools"
    assert record(VerifyResult).loop == "verify" and record(PhasedResult).loop == "phased"


def test_verify_result_carries_trials_beside_the_common_fields_in_camel_case() -> None:
    meta = record(
        VerifyResult,
        trials=(trial(1, False, 0.0), trial(2, True, 1.0)),
        best_trial=2,
        best_score=1.0,
        max_trials=3,
    ).to_meta()
    assert meta["loop"] == "verify" and meta["modelRequests"] == 0 and meta["stopReason"] == "end_turn"
    assert meta["bestTrial"] == 2 and meta["bestScore"] == 1.0 and meta["maxTrials"] == 3
    assert meta["trials"][0] == {
        "trial": 1,
        "passed": False,
        "score": 0.0,
        "evaluator": "command",
        "feedback": "f",
        "modelRequests": 1,
        "durationMs": 5,
    }
    json.dumps(meta)


def test_phased_result_names_transitions_from_and_to_and_leaves_out_unverified_trials() -> None:
    step = Transition(from_="plan", to="act", reason="approved_once", at_request=2)
    meta = record(PhasedResult, transitions=(step,), final_state="done").to_meta()
    assert list(meta["transitions"]) == [
        {"from": "plan", "to": "act", "reason": "approved_once", "atRequest": 2}
    ]
    assert meta["finalState"] == "done" and "trials" not in meta
    with_trials = record(PhasedResult, trials=(trial(1, True, 1.0),)).to_meta()
    assert with_trials["trials"][0]["passed"] is True


@pytest.mark.parametrize(
    "bad",
    [
        {"score": 1.5},
        {"score": -0.1},
        {"trial": 0},
        {"evaluator": "oracle"},
        {"feedback": "x" * 501},
    ],
)
def test_a_trial_out_of_its_bounds_is_rejected(bad: dict[str, Any]) -> None:
    fields = {
        "trial": 1,
        "passed": True,
        "score": 1.0,
        "evaluator": "judge",
        "feedback": "",
        "model_requests": 1,
        "duration_ms": 0,
    } | bad
    with pytest.raises(ValidationError):
        Trial(**fields)


def test_a_transition_between_unknown_phases_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Transition(from_="plan", to="deploy", reason="r", at_request=0)  # type: ignore[arg-type]


def test_best_trial_is_the_highest_score_and_the_latest_among_equals() -> None:
    assert best_trial([]) == (None, None)
    assert best_trial([trial(1, False, 0.4), trial(2, False, 0.7), trial(3, False, 0.2)]) == (2, 0.7)
    assert best_trial([trial(1, False, 0.0), trial(2, False, 0.0)]) == (2, 0.0)


def test_feedback_is_clipped_to_500_characters_keeping_head_and_tail() -> None:
    long = "HEAD " + "x" * 2000 + " TAIL-SUMMARY"
    clipped = clip_feedback(long)
    assert len(clipped) == 500 and clipped.startswith("HEAD") and clipped.endswith("TAIL-SUMMARY")
    assert clip_feedback("  short \n") == "short"


def test_each_strategy_names_its_record_type_and_a_plain_one_gets_the_common_record() -> None:
    assert record_of(ToolsStrategy()) == (TurnRecord, {"loop": "tools"})
    verify_type, fields = record_of(VerifyStrategy(CommandEvaluator("true"), max_trials=2))
    assert verify_type is VerifyResult and fields["loop"] == "verify" and fields["max_trials"] == 2
    phased_type, fields = record_of(PhasedStrategy())
    assert phased_type is PhasedResult and fields["final_state"] == "plan"

    class Custom:
        name = "custom"

        async def run(self, *args: Any) -> Any: ...

    custom_type, fields = record_of(Custom())  # type: ignore[arg-type]
    assert custom_type is TurnRecord and record(custom_type, **fields).to_meta()["loop"] == "custom"


@pytest.mark.parametrize("cls", [VerifyResult, PhasedResult])
def test_each_result_type_has_a_json_schema_its_records_satisfy(cls: type[TurnRecord]) -> None:
    schema = TypeAdapter(cls).json_schema(by_alias=True)
    jsonschema.Draft202012Validator.check_schema(schema)
    fields: dict[str, Any] = {"trials": (trial(1, False, 0.5, "y" * 500),)}
    if cls is PhasedResult:
        fields["transitions"] = (Transition(from_="act", to="verify", reason="finished", at_request=3),)
    meta = json.loads(json.dumps(record(cls, **fields).to_meta()))
    jsonschema.validate(meta, schema)
    meta["loop"] = "tools"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(meta, schema)
