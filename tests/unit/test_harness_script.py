"""The harness script format: step models, loading, the pattern language and substitution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from acp_agent.harness.pattern import PatternError, format_mismatches, match, substitute
from acp_agent.harness.script import harness_main
from acp_agent.harness.steps import (
    AnswerStep,
    ExpectStep,
    ModelStep,
    RequestStep,
    RespondStep,
    ScriptError,
    load_script,
    step_adapter,
)
from tests.support import REPO_ROOT
from tests.support.examples import examples

EXAMPLES = REPO_ROOT / "examples"


def ok(pattern: Any, got: Any, bound: dict[str, Any] | None = None) -> dict[str, Any]:
    mismatches, captured = match(pattern, got, bound or {})
    assert not mismatches, format_mismatches(mismatches)
    return captured


def differs(pattern: Any, got: Any, bound: dict[str, Any] | None = None) -> list[str]:
    mismatches, captured = match(pattern, got, bound or {})
    assert mismatches, f"{pattern!r} unexpectedly matched {got!r}"
    assert captured == {}, "a failed match must not capture anything"
    return [m.path for m in mismatches]


# --- patterns ---------------------------------------------------------------------------------


def test_an_object_pattern_ignores_extra_keys_but_needs_its_own() -> None:
    ok(
        {"result": {"stopReason": "end_turn"}},
        {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn", "_meta": {}}},
    )
    assert differs({"result": {"stopReason": "end_turn"}}, {"id": 3, "error": {}}) == ["$.result"]


def test_a_list_pattern_needs_the_same_length_and_matches_item_by_item() -> None:
    ok([1, {"a": 2}], [1, {"a": 2, "b": 3}])
    assert differs([1, 2], [1, 2, 3]) == ["$"]
    assert differs([1, 2], [1, 3]) == ["$[1]"]


def test_star_matches_any_present_value_but_not_a_missing_key() -> None:
    values: tuple[Any, ...] = (None, 0, "x", [], {"a": 1}, False)
    for value in values:
        ok({"id": "*"}, {"id": value})
    assert differs({"id": "*"}, {"method": "x"}) == ["$.id"]


def test_a_capture_binds_the_first_time_and_must_be_equal_afterwards() -> None:
    assert ok({"a": "$x", "b": "$x"}, {"a": [1], "b": [1]}) == {"x": [1]}
    assert differs({"a": "$x", "b": "$x"}, {"a": 1, "b": 2}) == ["$.b"]
    assert differs(
        {"params": {"sessionId": "$sessionId"}}, {"params": {"sessionId": "other"}}, {"sessionId": "mine"}
    ) == ["$.params.sessionId"]
    assert (
        ok({"params": {"sessionId": "$sessionId"}}, {"params": {"sessionId": "mine"}}, {"sessionId": "mine"})
        == {}
    )


def test_true_is_not_one_and_one_is_one_point_zero() -> None:
    differs({"v": True}, {"v": 1})
    differs({"v": 0}, {"v": False})
    ok({"v": 1}, {"v": 1.0})


def test_interpolated_strings_are_compared_after_filling_in() -> None:
    ok({"path": "${cwd}/a.txt"}, {"path": "/w/a.txt"}, {"cwd": "/w"})
    differs({"path": "${cwd}/a.txt"}, {"path": "/elsewhere/a.txt"}, {"cwd": "/w"})
    ok({"price": "$$5"}, {"price": "$5"})


def test_operators_regex_type_absent_contains_literal() -> None:
    ok({"text": {"$regex": "max[A-Z]"}}, {"text": "stopped at maxTurnRequests"})
    differs({"text": {"$regex": "^max"}}, {"text": 5})
    ok({"n": {"$type": "integer"}, "s": {"$type": "string"}}, {"n": 3, "s": ""})
    differs({"n": {"$type": "integer"}}, {"n": True})
    differs({"n": {"$type": "object"}}, {})
    ok({"error": {"$absent": True}, "result": "*"}, {"result": {}})
    assert differs({"error": {"$absent": True}}, {"error": {"code": 1}}) == ["$.error"]
    options = [{"kind": "reject_once", "optionId": "r"}, {"kind": "allow_once", "optionId": "a"}]
    assert ok(
        {"options": {"$contains": [{"kind": "allow_once", "optionId": "$allow"}]}}, {"options": options}
    ) == {"allow": "a"}
    differs({"options": {"$contains": [{"kind": "allow_always"}]}}, {"options": options})
    ok({"v": {"$literal": {"a": "*"}}}, {"v": {"a": "*"}})
    differs({"v": {"$literal": {"a": "*"}}}, {"v": {"a": "x"}})
    differs({"v": {"$literal": {"a": 1}}}, {"v": {"a": 1, "b": 2}})


def test_an_unknown_operator_is_an_error_not_a_silent_mismatch() -> None:
    with pytest.raises(PatternError, match=r"\$regexp"):
        match({"a": {"$regexp": "x"}}, {"a": "x"}, {})


def test_the_diff_names_the_path_what_was_expected_and_what_came() -> None:
    mismatches, _ = match(
        {"result": {"stopReason": "end_turn"}}, {"result": {"stopReason": "max_turn_requests"}}, {}
    )
    assert format_mismatches(mismatches, "") == ('@ $.result.stopReason\n- "end_turn"\n+ "max_turn_requests"')
    mismatches, _ = match({"result": {"x": 1}}, {"result": {}}, {})
    assert "+ (missing)" in format_mismatches(mismatches)


# --- substitution ---------------------------------------------------------------------------


def test_a_whole_string_variable_is_replaced_by_its_value_of_any_type() -> None:
    bound = {"sessionId": "s1", "n": 3, "obj": {"a": [1]}, "cwd": "/w"}
    sent = substitute(
        {"sessionId": "$sessionId", "n": "$n", "o": ["$obj"], "path": "${cwd}/x-${n}", "cost": "$$2"}, bound
    )
    assert sent == {"sessionId": "s1", "n": 3, "o": [{"a": [1]}], "path": "/w/x-3", "cost": "$2"}


def test_an_unbound_variable_in_a_send_is_an_error_naming_it() -> None:
    with pytest.raises(PatternError, match=r"\$sessionId"):
        substitute({"sessionId": "$sessionId"}, {})
    with pytest.raises(PatternError, match="cwd"):
        substitute("${cwd}/a", {})


_plain_text = st.text(max_size=8).filter(lambda s: "$" not in s and s != "*")
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _plain_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_plain_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(200))
@given(_json)
def test_plain_json_matches_itself_and_its_literal_and_survives_substitution(value: Any) -> None:
    ok(value, value)
    ok({"$literal": value}, value)
    assert substitute(value, {}) == value


# --- step models and loading --------------------------------------------------------------


def test_steps_reject_unknown_keys_and_impossible_combinations() -> None:
    adapter = step_adapter()
    assert isinstance(adapter.validate_python({"op": "request", "method": "initialize"}), RequestStep)
    for bad in (
        {"op": "request", "metod": "x"},
        {"op": "request", "method": "x", "wait": False, "match": {}},
        {"op": "expect"},
        {"op": "answer", "method": "x", "result": {}, "error": {"code": 1, "message": "m"}},
        {"op": "wait", "seconds": 0},
        {"op": "teleport"},
    ):
        with pytest.raises(ValidationError):
            adapter.validate_python(bad)


def test_a_canned_answer_defaults_to_an_empty_result_and_keeps_an_explicit_null() -> None:
    adapter = step_adapter()
    answer = adapter.validate_python({"op": "answer", "method": "fs/write_text_file"})
    assert isinstance(answer, AnswerStep) and answer.answer() == {"result": {}}
    null = adapter.validate_python({"op": "respond", "id": 1, "result": None})
    assert isinstance(null, RespondStep) and null.answer() == {"result": None}
    error = adapter.validate_python({"op": "respond", "id": 1, "error": {"code": -32601, "message": "no"}})
    assert error.answer() == {"error": {"code": -32601, "message": "no"}}  # type: ignore[union-attr]


def test_a_script_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text(
        '# a comment\n\n// another\n{"op": "notify", "method": "x"}\n'
        '  {"op": "expect", "match": {"method": "y"}}\n',
        encoding="utf-8",
    )
    steps = load_script(script)
    assert [s.op for s in steps] == ["notify", "expect"]
    assert isinstance(steps[1], ExpectStep) and steps[1].timeout is None


def test_a_script_may_be_one_json_array(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"op": "wait", "seconds": 0.1}, {"op": "close"}]), encoding="utf-8")
    assert [s.op for s in load_script(script)] == ["wait", "close"]


def test_every_bad_line_is_reported_with_its_number(tmp_path: Path) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text(
        '{"op": "request", "metod": "x"}\nnot json\n{"op": "notify", "method": "ok"}\n{"op": "expect"}\n',
        encoding="utf-8",
    )
    with pytest.raises(ScriptError) as caught:
        load_script(script)
    text = str(caught.value)
    assert "line 1" in text and "metod" in text
    assert "line 2" in text and "not JSON" in text
    assert "line 4" in text and "line 3" not in text


def test_an_empty_script_is_an_error(tmp_path: Path) -> None:
    script = tmp_path / "empty.jsonl"
    script.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ScriptError, match="no steps"):
        load_script(script)


@pytest.mark.parametrize("name", ["handshake", "max_turn_requests", "cancel"])
def test_every_shipped_example_is_a_valid_script(name: str) -> None:
    steps = load_script(EXAMPLES / f"{name}.jsonl")
    assert steps[-1].op == "close"
    assert steps[0].op == "model"  # it names the model it needs, so it runs bare


def test_a_model_step_names_the_packaged_fake_and_must_come_first(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    model = {
        "op": "model",
        "fake": "acp_agent.testing",
        "reply": "tool_use",
        "tool": "list_files",
        "tool_input": {"pattern": "*{n}*"},
        "chunks": 3,
    }
    script.write_text(json.dumps(model) + '\n{"op": "close"}\n', encoding="utf-8")
    [first, _] = load_script(script)
    assert isinstance(first, ModelStep)
    assert first.fake_args() == [
        "--reply",
        "tool_use",
        "--tool",
        "list_files",
        "--chunks",
        "3",
        "--tool-input",
        '{"pattern": "*{n}*"}',
    ]
    script.write_text('{"op": "close"}\n' + json.dumps(model) + "\n", encoding="utf-8")
    with pytest.raises(ScriptError, match="line 2: a model step must be the first step"):
        load_script(script)
    script.write_text(json.dumps({**model, "fake": "my.own.fake"}) + "\n", encoding="utf-8")
    with pytest.raises(ScriptError, match="line 1: fake"):
        load_script(script)


def test_the_step_schema_can_be_generated_for_schemas_dir() -> None:
    schema = step_adapter().json_schema()
    defs = schema["$defs"].values()
    ops = {d["properties"]["op"]["const"] for d in defs if "op" in d.get("properties", {})}
    assert ops == {"model", "request", "notify", "expect", "answer", "respond", "wait", "cancel", "close"}


# --- the command line -------------------------------------------------------------------------


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert harness_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "exit codes" in out and "0  every step passed" in out and "2  usage error" in out


def test_an_invalid_script_is_a_usage_error_before_any_agent_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"op": "nope"}\n', encoding="utf-8")
    marker = tmp_path / "started"
    agent = f"touch {marker}"
    assert harness_main([str(script), "--agent", agent]) == 2
    assert "line 1" in capsys.readouterr().err
    assert not marker.exists()
    assert harness_main([str(script), "--bogus-flag"]) == 2


def test_check_validates_without_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert harness_main([str(EXAMPLES / "handshake.jsonl"), "--check", "--agent", "false"]) == 0
    assert "valid steps" in capsys.readouterr().out
