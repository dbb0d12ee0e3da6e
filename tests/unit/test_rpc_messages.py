"""Line classification and encoding: the JSON-RPC envelope rules, without any I/O."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.errors import ConnectionClosed, RpcError
from acp_agent.rpc.messages import (
    ErrorObject,
    Notification,
    Request,
    Response,
    SplicedNotification,
    classify,
    encode_error,
    encode_notification,
    encode_request,
    encode_response,
)
from tests.support.examples import examples

BAD_LINES = [
    # (line, code, id carried by the error)
    pytest.param(b"{", -32700, None, id="truncated-json"),
    pytest.param(b"hello", -32700, None, id="not-json"),
    pytest.param(b"", -32700, None, id="empty"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"a\xff"}', -32700, None, id="invalid-utf8"),
    pytest.param(b"\xef\xbb\xbf{}", -32700, None, id="utf8-bom"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"a","params":[NaN]}', -32700, None, id="nan"),
    pytest.param(b"[" * 100_000, -32700, None, id="nested-too-deep"),
    pytest.param(b"[]", -32600, None, id="empty-array"),
    pytest.param(b"42", -32600, None, id="number"),
    pytest.param(b'"initialize"', -32600, None, id="string"),
    pytest.param(b"null", -32600, None, id="null"),
    pytest.param(b'{"jsonrpc":"2.0"}', -32600, None, id="bare-envelope"),
    pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"a"}]', -32600, None, id="batch"),
    pytest.param(b'{"jsonrpc":"1.0","id":3,"method":"a"}', -32600, 3, id="wrong-jsonrpc"),
    pytest.param(b'{"id":"x","method":"a"}', -32600, "x", id="missing-jsonrpc"),
    pytest.param(b'{"jsonrpc":2.0,"id":3,"method":"a"}', -32600, 3, id="numeric-jsonrpc"),
    pytest.param(b'{"jsonrpc":"2.0","id":4,"method":5}', -32600, 4, id="method-not-string"),
    pytest.param(b'{"jsonrpc":"2.0","id":4,"method":null}', -32600, 4, id="method-null"),
    pytest.param(b'{"jsonrpc":"2.0","method":["a"]}', -32600, None, id="notification-bad-method"),
    pytest.param(b'{"jsonrpc":"2.0","id":5,"method":"a","params":3}', -32600, 5, id="params-number"),
    pytest.param(b'{"jsonrpc":"2.0","id":5,"method":"a","params":"x"}', -32600, 5, id="params-str"),
    pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"a"}', -32600, None, id="id-float"),
    pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"a"}', -32600, None, id="id-bool"),
    pytest.param(b'{"jsonrpc":"2.0","id":{},"method":"a"}', -32600, None, id="id-object"),
    pytest.param(b'{"jsonrpc":"2.0","id":[1],"method":"a"}', -32600, None, id="id-array"),
    pytest.param(b'{"jsonrpc":"2.0","id":6}', -32600, 6, id="id-without-method-or-result"),
    pytest.param(b'{"jsonrpc":"2.0","id":7,"error":"bad"}', -32600, 7, id="error-not-object"),
]


@pytest.mark.parametrize(("line", "code", "request_id"), BAD_LINES)
def test_bad_line_is_classified_with_code_and_readable_id(line: bytes, code: int, request_id: Any) -> None:
    with pytest.raises(RpcError) as info:
        classify(line)
    assert info.value.code == code
    assert info.value.request_id == request_id
    assert type(info.value.request_id) is type(request_id)


@pytest.mark.parametrize("request_id", [0, "abc", -5, None, 2**70, ""])
def test_request_id_is_kept_with_its_type(request_id: Any) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "m", "params": {}}).encode()
    msg = classify(line)
    assert msg == Request(request_id, "m", {})
    assert type(msg.id) is type(request_id)
    echoed = json.loads(encode_response(msg.id, {}))
    assert "id" in echoed
    assert echoed["id"] == request_id
    assert type(echoed["id"]) is type(request_id)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"a"}', Request(1, "a", None)),
        (b'{"jsonrpc":"2.0","id":1,"method":"a","params":null}', Request(1, "a", None)),
        (b'{"jsonrpc":"2.0","id":1,"method":"a","params":[1,2]}', Request(1, "a", [1, 2])),
        (b'{"jsonrpc":"2.0","method":"n","params":{"x":1}}', Notification("n", {"x": 1})),
        (b'{"jsonrpc":"2.0","method":"$/cancel_request"}', Notification("$/cancel_request", None)),
        (b'{"jsonrpc":"2.0","id":3,"result":{"ok":true}}', Response(3, {"ok": True}, None)),
        (b'{"jsonrpc":"2.0","id":3,"result":null}', Response(3, None, None)),
        (
            b'{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"nope","data":{"p":1}}}',
            Response(4, None, ErrorObject(-32002, "nope", {"p": 1})),
        ),
        (
            b'{"jsonrpc":"2.0","id":4,"result":null,"error":{"code":-1,"message":"m"}}',
            Response(4, None, ErrorObject(-1, "m")),
        ),
        (
            b'{"jsonrpc":"2.0","id":4,"error":{"message":7}}',
            Response(4, None, ErrorObject(-32603, "")),
        ),
        (b'{"jsonrpc":"2.0","id":1,"method":"a","extra":1} ', Request(1, "a", None)),
    ],
)
def test_valid_message_is_classified(line: bytes, expected: Any) -> None:
    assert classify(line) == expected


def test_non_ascii_text_survives_a_round_trip() -> None:
    line = encode_notification("n", {"text": "héllo → 世界 🎉"})
    assert "héllo → 世界 🎉".encode() in line  # sent as UTF-8, not \u escapes
    assert classify(line.rstrip(b"\n")) == Notification("n", {"text": "héllo → 世界 🎉"})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
tricky_text = st.text(
    alphabet=st.sampled_from(["\n", "\r", "\u2028", "\x85", "\ud800", "\udfff", "a", "é", '"', "\\"])
)


@settings(max_examples=examples(300))
@given(value=json_values | tricky_text, text=tricky_text)
def test_encoders_emit_exactly_one_line_of_valid_utf8_json(value: Any, text: str) -> None:
    lines = [
        encode_response(text, value),
        encode_error(None, RpcError(-32603, text, value)),
        encode_notification(text, {"v": value, text: text}),
        encode_request(0, text, [value]),
    ]
    for line in lines:
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        assert b"\r" not in line
        decoded = json.loads(line.decode("utf-8"))
        assert decoded["jsonrpc"] == "2.0"
        assert classify(line[:-1]) is not None
    # Compared with json's own round trip: an escaped surrogate pair reads back as one character.
    assert json.loads(lines[0])["result"] == json.loads(json.dumps(value))


def test_error_answer_keeps_null_id_and_omits_absent_data() -> None:
    line = encode_error(None, RpcError.parse_error("bad"))
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: bad"},
    }


def test_error_answer_drops_data_that_is_not_json() -> None:
    line = encode_error(1, RpcError.internal_error("boom", {"obj": object()}))
    assert json.loads(line)["error"] == {"code": -32603, "message": "boom"}


def test_response_with_a_non_json_result_raises() -> None:
    with pytest.raises(TypeError):
        encode_response(1, {"x": object()})
    with pytest.raises(ValueError, match="JSON"):
        encode_response(1, float("nan"))


def test_notification_and_request_omit_absent_params() -> None:
    assert json.loads(encode_notification("n", None)) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(encode_request(3, "m", None)) == {"jsonrpc": "2.0", "id": 3, "method": "m"}


@pytest.mark.parametrize(
    ("error", "code", "data"),
    [
        (RpcError.parse_error("x"), -32700, None),
        (RpcError.invalid_request("x"), -32600, None),
        (RpcError.method_not_found("foo/bar"), -32601, {"method": "foo/bar"}),
        (RpcError.invalid_params("x", {"field": "cwd"}), -32602, {"field": "cwd"}),
        (RpcError.internal_error("x"), -32603, None),
        (RpcError.request_cancelled(), -32800, None),
        (RpcError.auth_required("x", {"k": 1}), -32000, {"k": 1}),
        (RpcError.session_not_found("s1"), -32002, {"sessionId": "s1"}),
        (RpcError.queue_full("x", {"waiting": 8}), -32001, {"waiting": 8}),
        (RpcError.journal_error("x"), -32010, None),
        (RpcError.unknown_session("s1"), -32602, {"sessionId": "s1"}),
        (ConnectionClosed(), -32603, None),
    ],
)
def test_named_constructors_carry_their_codes(error: RpcError, code: int, data: Any) -> None:
    assert error.code == code
    assert error.data == data
    assert error.message
    expected = {"code": code, "message": error.message}
    if data is not None:
        expected["data"] = data
    assert error.to_dict() == expected


def test_method_not_found_names_the_method() -> None:
    assert "foo/bar" in RpcError.method_not_found("foo/bar").message


CHUNK = {
    "sessionId": "sess_1",
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": ""},
        "messageId": "m_ü",
    },
}


def _with_text(text: str) -> dict[str, Any]:
    return {**CHUNK, "update": {**CHUNK["update"], "content": {"type": "text", "text": text}}}


@settings(max_examples=examples(300))
@given(st.text())
def test_a_spliced_chunk_is_byte_for_byte_the_encoded_one(text: str) -> None:
    spliced = SplicedNotification("session/update", CHUNK, ("update", "content", "text"))
    assert spliced.line(text) == encode_notification("session/update", _with_text(text))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tok ",
        'q"uote\\',
        "line\nbreak\t\x00\x1f",
        "é漢😀",
        "\ud800 lone surrogate",
        '"\x00acp-agent-splice\x00"',
    ],
)
def test_spliced_lines_parse_back_to_the_text(text: str) -> None:
    spliced = SplicedNotification("session/update", CHUNK, ("update", "content", "text"))
    line = spliced.line(text)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line == encode_notification("session/update", _with_text(text))
    assert CHUNK["update"]["content"]["text"] == ""  # the template is left as it was


def test_a_path_that_names_no_string_is_refused() -> None:
    with pytest.raises(ValueError):
        SplicedNotification("session/update", CHUNK, ("update", "nothing", "text"))
    with pytest.raises(ValueError):
        SplicedNotification("session/update", CHUNK, ("sessionId", "text"))
