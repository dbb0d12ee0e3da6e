"""JSON-RPC 2.0 envelopes: classify one raw line, and encode the four kinds of outgoing line.

Kept free of pydantic: every streamed chunk goes through an encoder here, so they are plain
`json` calls on pre-built encoders. Params and results pass through as parsed JSON. The rules
a line is held to are the leaf `acp_agent/jsonrpc.py`'s, shared with the harness.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from acp_agent.errors import INTERNAL_ERROR, PARSE_ERROR, RpcError
from acp_agent.jsonrpc import envelope_problems, is_id, loads
from acp_agent.rpc.deep_json import TOO_DEEP, read_deep_object

__all__ = [
    "ErrorObject",
    "Message",
    "Notification",
    "Request",
    "Response",
    "SplicedNotification",
    "classify",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_response",
]


@dataclass(frozen=True, slots=True)
class Request:
    """A call that wants exactly one response; `id` is str, int or None, echoed unchanged."""

    id: str | int | None
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Notification:
    """A call without an id: never answered."""

    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class ErrorObject:
    """The `error` member of a response the peer sent us."""

    code: int
    message: str
    data: Any = None

    def to_exception(self) -> RpcError:
        return RpcError(self.code, self.message, self.data)


@dataclass(frozen=True, slots=True)
class Response:
    """The peer's answer to one of our requests: `error` is None on success."""

    id: str | int | None
    result: Any
    error: ErrorObject | None


Message = Request | Notification | Response


def _invalid(detail: str, request_id: Any = None) -> RpcError:
    err = RpcError.invalid_request(f"Invalid request: {detail}")
    err.request_id = request_id
    return err


def classify(line: bytes) -> Message:
    """Turn one line (no trailing newline) into a message, or raise `RpcError`.

    Raises:
        RpcError: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that is not one
            message object (the first lenient envelope rule it breaks), -32602 for params nested
            too deeply to parse; `request_id` holds the message's id when it could be read.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RpcError.parse_error(f"invalid UTF-8 at byte {exc.start}") from None
    deep: set[str] = set()
    """Members too deep to parse (only on the slow path below)."""
    try:
        obj = loads(text)
    except ValueError as exc:
        raise RpcError.parse_error(str(exc) or type(exc).__name__) from None
    except RecursionError:  # valid JSON may still be too deep for `json`: read its envelope
        obj = read_deep_object(text)
        if obj is None:
            raise RpcError.parse_error("not JSON, or nested too deeply to check") from None
        deep = {k for k, v in obj.items() if v is TOO_DEEP}

    if type(obj) is list:
        raise _invalid("batches are not supported; send one JSON object per line")
    checked = {**obj, **{key: {} for key in deep}} if deep else obj  # stand-ins the rules judge
    problems = envelope_problems(checked, lenient=True)
    if problems:
        rid = obj.get("id") if type(obj) is dict and is_id(obj.get("id")) else None
        raise _invalid(problems[0], rid)
    rid = obj.get("id")
    if "method" in obj:
        if "params" in deep:
            err = RpcError.invalid_params("Invalid params: nested too deeply (about 990 levels is the limit)")
            err.request_id = rid
            raise err
        if "id" in obj:
            return Request(rid, obj["method"], obj.get("params"))
        return Notification(obj["method"], obj.get("params"))
    if deep & {"result", "error"}:  # an answer we cannot read is a failed call
        return Response(rid, None, ErrorObject(PARSE_ERROR, "the answer was nested too deeply to parse"))
    error = obj.get("error")
    if error is None:
        return Response(rid, obj.get("result"), None)
    code = error.get("code")
    message = error.get("message")
    return Response(
        rid,
        None,
        ErrorObject(
            code if type(code) is int else INTERNAL_ERROR,
            message if type(message) is str else "",
            error.get("data"),
        ),
    )


# Pre-built encoders: json.dumps() with keyword arguments builds a new encoder on every call.
_encode_utf8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_encode_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode


def _line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line. json escapes every control character, so no raw newline."""
    text = _encode_utf8(obj)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: \u-escape everything instead
        return _encode_ascii(obj).encode("ascii") + b"\n"


def encode_response(id: str | int | None, result: Any) -> bytes:
    """A success response. Raises TypeError/ValueError when `result` is not JSON."""
    return _line({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: str | int | None, error: RpcError) -> bytes:
    """An error response; `"id": null` is kept. Never raises: unencodable `data` is dropped."""
    try:
        return _line({"jsonrpc": "2.0", "id": id, "error": error.to_dict()})
    except (TypeError, ValueError, RecursionError):
        return _line({"jsonrpc": "2.0", "id": id, "error": {"code": error.code, "message": error.message}})


def encode_notification(method: str, params: Any) -> bytes:
    """A notification; `params` is omitted when None."""
    if params is None:
        return _line({"jsonrpc": "2.0", "method": method})
    return _line({"jsonrpc": "2.0", "method": method, "params": params})


def encode_request(id: str | int | None, method: str, params: Any) -> bytes:
    """A request to the peer; `params` is omitted when None."""
    if params is None:
        return _line({"jsonrpc": "2.0", "id": id, "method": method})
    return _line({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


_HOLE = "\x00acp-agent-splice\x00"
"""Stands in for the varying value while the rest is encoded; no encoded value contains it raw."""


class SplicedNotification:
    """Notifications that differ only in one string value (a stream of text chunks).

    The rest is encoded once; each line is then that value's JSON string spliced between the two
    encoded halves, byte for byte what `encode_notification` gives, at a twentieth of its cost.
    """

    def __init__(self, method: str, params: dict[str, Any], path: Sequence[str]) -> None:
        self._method = method
        self._params = params
        self._path = tuple(path)
        hole = json.dumps(_HOLE)  # as the encoder writes it, quotes included
        try:
            params_with_hole = self._with(_HOLE)
        except (KeyError, TypeError, IndexError):
            raise ValueError(f"no value at {'.'.join(self._path)} in params") from None
        text = _encode_utf8({"jsonrpc": "2.0", "method": method, "params": params_with_hole})
        head, found, tail = text.partition(hole)
        if not found or hole in tail:
            raise ValueError("the path must name one string value of params")
        self._head, self._tail = head, tail + "\n"

    def line(self, value: str) -> bytes:
        try:
            return (self._head + encode_basestring(value) + self._tail).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the general path escapes it
            return encode_notification(self._method, self._with(value))

    def _with(self, value: str) -> dict[str, Any]:
        """`params` with `value` at the path (the dicts along it copied, the rest shared)."""
        root = dict(self._params)
        node = root
        for key in self._path[:-1]:
            node[key] = dict(node[key])
            node = node[key]
        node[self._path[-1]] = value
        return root
