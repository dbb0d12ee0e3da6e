"""One set of JSON-RPC envelope rules (`acp_agent/jsonrpc.py`): the agent's reader and the harness agree."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_agent.errors import RpcError
from acp_agent.harness.wire import check_envelope, parse_line
from acp_agent.jsonrpc import envelope_problems, is_id, loads
from acp_agent.rpc.messages import Notification, Request, Response, classify

BROKEN: list[tuple[Any, str]] = [
    ("just a string", "a message must be a JSON object"),
    ({"jsonrpc": "2.0", "id": True, "method": "m"}, '"id" must be a string, an integer or null'),
    ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, '"id" must be a string, an integer or null'),
    ({"id": 1, "method": "m"}, '"jsonrpc" must be "2.0"'),
    ({"jsonrpc": "1.0", "id": 1, "result": {}}, '"jsonrpc" must be "2.0"'),
    ({"jsonrpc": "2.0", "id": 1, "method": 7}, '"method" must be a string'),
    ({"jsonrpc": "2.0", "method": "m", "params": 3}, '"params" must be an object or an array'),
    ({"jsonrpc": "2.0", "id": 1, "error": "bad"}, '"error" must be an object'),
]


@pytest.mark.parametrize(("message", "rule"), BROKEN)
def test_the_reader_and_the_harness_break_a_message_on_the_same_rule(message: Any, rule: str) -> None:
    with pytest.raises(RpcError) as refused:
        classify(json.dumps(message).encode())
    assert refused.value.code == -32600
    assert refused.value.message == f"Invalid request: {rule}"
    assert check_envelope(message)[0].startswith(rule + ", got "), check_envelope(message)


def test_a_refused_message_keeps_its_id_only_when_the_id_itself_is_valid() -> None:
    with pytest.raises(RpcError) as bad_version:
        classify(b'{"jsonrpc":"1.0","id":"a","method":"m"}')
    assert bad_version.value.request_id == "a"
    with pytest.raises(RpcError) as bad_id:
        classify(b'{"jsonrpc":"1.0","id":[1],"method":"m"}')
    assert bad_id.value.request_id is None


@pytest.mark.parametrize(
    ("message", "strict_only"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": None}, '"params" must be an object'),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "result": 1}, 'must not carry "result"'),
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "m"}}, "exactly one of"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}, "error.code must be an integer"),
    ],
)
def test_the_reader_is_lenient_where_real_clients_differ_and_the_harness_is_not(
    message: dict[str, Any], strict_only: str
) -> None:
    assert envelope_problems(message, lenient=True) == []
    assert isinstance(classify(json.dumps(message).encode()), Request | Notification | Response)
    assert any(strict_only in p for p in envelope_problems(message)), envelope_problems(message)


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json_to_either_side(constant: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":' + constant + b"}"
    with pytest.raises(ValueError, match="not valid JSON"):
        loads(line.decode())
    with pytest.raises(RpcError) as refused:
        classify(line)
    assert refused.value.code == -32700
    assert any("not JSON" in p for p in parse_line(line)[2])


def test_ids_are_strings_integers_or_null_and_never_booleans() -> None:
    assert [is_id(v) for v in ("a", 0, -3, None)] == [True] * 4
    assert [is_id(v) for v in (True, False, 1.0, [1], {})] == [False] * 5
