"""JSON-RPC 2.0's envelope rules in one place: what makes a parsed line one valid message.

Two rooms hold messages to them. The agent's reader (`rpc/messages.py:classify`) takes the first
broken rule as its -32600 answer and is lenient where real clients differ (Postel: accept what a
peer can mean); the harness (`harness/wire.py:check_envelope`) holds what an agent writes to the
strict rules and reports every break, with the value it got. Both decode with `loads`: NaN and
Infinity are not JSON, and accepting them would let a reader echo invalid JSON later.
A leaf module: standard library only, so any room may import it.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NoReturn

__all__ = ["VERSION", "envelope_problems", "is_id", "is_int", "loads", "message_kind"]

VERSION = "2.0"

Kind = Literal["request", "notification", "response"]

GOT_CHARS = 120
"""At most this much of an offending value is quoted in a strict problem."""


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


loads = json.JSONDecoder(parse_constant=_reject_constant).decode
"""`json.loads` for a peer's text: NaN, Infinity and -Infinity raise `ValueError`."""


def is_int(value: Any) -> bool:
    """An integer that is not a bool (`true` is no error code and no id)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_id(value: Any) -> bool:
    """A valid request id: a string, an integer (not a bool) or null."""
    return value is None or type(value) is str or is_int(value)


def message_kind(msg: dict[str, Any]) -> Kind:
    """'request', 'notification' or 'response', by shape (a method with an id is a request)."""
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    return "response"


def envelope_problems(msg: Any, *, lenient: bool = False) -> list[str]:
    """Every way `msg` breaks the envelope, in the order a reader meets them ([] when none).

    `lenient` is what the agent accepts from a client: `"params": null` (the official Python SDK
    sends it), a call that also carries `result`, a response with both members (its `error`
    wins) or with a malformed `error.code` / `error.message` (the reader fills them in).
    """
    if type(msg) is not dict:
        return [_rule("a message must be a JSON object", msg, lenient)]
    problems = []
    if "id" in msg and not is_id(msg["id"]):
        problems.append(_rule('"id" must be a string, an integer or null', msg["id"], lenient))
    if msg.get("jsonrpc") != VERSION:
        problems.append(_rule(f'"jsonrpc" must be "{VERSION}"', msg.get("jsonrpc", "nothing"), lenient))
    if "method" in msg:
        if type(msg["method"]) is not str:
            problems.append(_rule('"method" must be a string', msg["method"], lenient))
        params = msg.get("params", {})
        if type(params) is not dict and type(params) is not list and not (lenient and params is None):
            problems.append(_rule('"params" must be an object or an array', params, lenient))
        if not lenient and ("result" in msg or "error" in msg):
            problems.append('a request or notification must not carry "result" or "error"')
        return problems
    if lenient:
        if "id" not in msg or ("result" not in msg and "error" not in msg):
            problems.append('a message needs a "method", or an "id" with a "result" or an "error"')
        elif msg.get("error") is not None and type(msg["error"]) is not dict:
            problems.append('"error" must be an object')
        return problems
    if "id" not in msg:
        problems.append("a response must carry an id (null when the request's id is unknown)")
    if ("result" in msg) == ("error" in msg):
        problems.append('a response must carry exactly one of "result" and "error"')
    elif "error" in msg:
        error = msg["error"]
        if type(error) is not dict:
            problems.append(_rule('"error" must be an object', error, lenient))
        else:
            if not is_int(error.get("code")):
                problems.append(_rule("error.code must be an integer", error.get("code"), lenient))
            if type(error.get("message")) is not str:
                problems.append(_rule("error.message must be a string", error.get("message"), lenient))
    return problems


def _rule(text: str, got: Any, lenient: bool) -> str:
    """The rule, and in the strict report the value that broke it (cut to GOT_CHARS)."""
    if lenient:
        return text
    shown = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False, default=repr)
    if len(shown) > GOT_CHARS:
        shown = shown[: GOT_CHARS - 1] + "…"
    return f"{text}, got {shown}"
