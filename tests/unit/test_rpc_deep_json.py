"""Lines nested deeper than `json` can recurse (about 990 levels): answered on their id when they are
valid JSON (issue 29, item 17), -32700 with `id: null` only when they are not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.errors import RpcError
from acp_agent.rpc.deep_json import MAX_DEEP_CHARS, TOO_DEEP, read_deep_object
from acp_agent.rpc.messages import ErrorObject, Request, Response, classify
from tests.support.examples import examples


def deep(n: int, inner: str = "") -> str:
    return "[" * n + inner + "]" * n


def line(**members: str) -> bytes:
    return ("{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in members.items()) + "}").encode()


ENVELOPE = {"jsonrpc": '"2.0"', "method": '"session/new"'}

REFUSED = [
    pytest.param(line(**ENVELOPE, id="7", params=deep(1000)), -32602, 7, id="params-1000-deep"),
    pytest.param(line(**ENVELOPE, id='"x"', params=f'{{"a":{deep(5000)}}}'), -32602, "x", id="in-an-object"),
    pytest.param(line(**ENVELOPE, id="8", params='{"a":' * 1200 + "1" + "}" * 1200), -32602, 8, id="objects"),
    pytest.param(line(**ENVELOPE, params=deep(2000)), -32602, None, id="notification"),
    pytest.param(line(**ENVELOPE, id=deep(2000)), -32600, None, id="id-deep"),
    pytest.param(line(jsonrpc='"2.0"', id="3", method=deep(2000)), -32600, 3, id="method-deep"),
    pytest.param(line(**ENVELOPE, id="3", params=deep(2000))[:-1], -32700, None, id="unterminated"),
    pytest.param(line(**ENVELOPE, id="3", params=deep(2000, "1,")), -32700, None, id="trailing-comma"),
    pytest.param(line(**ENVELOPE, id="3", params=deep(2000)) + b" x", -32700, None, id="trailing-junk"),
    pytest.param(line(**ENVELOPE, id="3", params=deep(2000) + "]"), -32700, None, id="extra-close"),
    pytest.param(deep(3000).encode(), -32700, None, id="not-an-object"),
    pytest.param(  # a control character ends the string: one pass, not 2**10000 ways to split the x's
        line(**ENVELOPE, id="3", params=deep(2000), note='"' + "x" * 10_000 + '\x01"'),
        -32700,
        None,
        id="bad-string-after-deep",
    ),
    pytest.param(
        line(**ENVELOPE, id="3", params=deep(MAX_DEEP_CHARS // 2)), -32700, None, id="over-the-scan-cap"
    ),
]


@pytest.mark.parametrize(("raw", "code", "request_id"), REFUSED)
def test_deep_lines_are_answered_on_their_id_when_it_can_be_read(
    raw: bytes, code: int, request_id: Any
) -> None:
    with pytest.raises(RpcError) as info:
        classify(raw)
    assert (info.value.code, info.value.request_id) == (code, request_id)
    if code == -32602:
        assert "nested too deeply" in info.value.message


def test_a_deep_member_outside_the_envelope_is_ignored() -> None:
    assert classify(line(**ENVELOPE, id="1", params="{}", junk=deep(5000))) == Request(1, "session/new", {})


def test_a_deep_answer_to_our_request_fails_that_request() -> None:
    message = classify(line(jsonrpc='"2.0"', id="4", result=deep(2000)))
    assert message == Response(4, None, ErrorObject(-32700, "the answer was nested too deeply to parse"))


def test_members_json_can_parse_are_parsed_and_the_others_are_too_deep() -> None:
    text = '{"a": [1, {"b": "c\\u00e9"}], "d": ' + deep(3000) + ', "e": null}'
    assert read_deep_object(text) == {"a": [1, {"b": "cé"}], "d": TOO_DEEP, "e": None}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None, max_examples=examples(300))
@given(st.dictionaries(st.text(max_size=5), JSON, max_size=5), st.integers(0, 2), st.data())
def test_the_scanner_agrees_with_json_on_valid_and_mutated_text(
    obj: dict[str, Any], indent: int, data: st.DataObject
) -> None:
    text = json.dumps(obj, indent=indent or None)
    assert read_deep_object(text) == json.loads(text)
    at = data.draw(st.integers(0, len(text) - 1))
    mutated = (
        text[:at] + data.draw(st.sampled_from(["", ",", "]", "}", "[", '"', "x", ":", "1"])) + text[at + 1 :]
    )
    try:
        expected = json.loads(mutated)
    except ValueError:
        expected = None
    assert read_deep_object(mutated) == (expected if isinstance(expected, dict) else None)
