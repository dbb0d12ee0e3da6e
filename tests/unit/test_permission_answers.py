"""A permission answer allows a tool only when it is a valid `selected` of an offered option."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from acp_agent.session.permissions import OPTION_IDS, read_answer

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["outcome", "optionId", "x"]), inner,
                                      max_size=3), max_leaves=12)


@pytest.mark.parametrize(("answer", "why"), [
    ({"outcome": {"optionId": "allow_once"}}, "outcome.outcome is None"),
    ({"outcome": {"outcome": "bogus", "optionId": "allow_once"}}, "outcome.outcome is 'bogus'"),
    ({"outcome": {"outcome": "selected", "optionId": ["allow_once"]}}, "not a string"),
    ({"outcome": {"outcome": "selected", "optionId": "allow_sometimes"}}, "was not offered"),
    ({"outcome": "selected"}, "no outcome object"),
    (None, "no outcome object"),
    (["allow_once"], "no outcome object"),
])
def test_malformed_answers_are_rejections_and_the_log_says_why(answer: Any, why: str) -> None:
    with capture_logs() as logs:
        assert read_answer(answer, OPTION_IDS) == ("invalid", None)
    assert [e["event"] for e in logs] == ["permission.invalid_answer"]
    assert why in logs[0]["why"] and logs[0]["treated_as"] == "rejected"


def test_the_two_valid_shapes() -> None:
    assert read_answer({"outcome": {"outcome": "selected", "optionId": "allow_once"}},
                       OPTION_IDS) == ("selected", "allow_once")
    assert read_answer({"outcome": {"outcome": "cancelled"}}, OPTION_IDS) == ("cancelled", None)


@settings(deadline=None, max_examples=200)
@given(JSON)
def test_nothing_but_a_selected_offered_option_is_ever_selected(answer: Any) -> None:
    kind, option = read_answer(answer, OPTION_IDS)
    if kind == "selected":
        assert answer["outcome"]["outcome"] == "selected" and option in OPTION_IDS
        assert answer["outcome"]["optionId"] == option
