"""An answer to an elicitation, checked against what was asked (D19): the one reading of every
`elicitation/create` answer, for `ask_user`, a relayed MCP question and the key form.

What the client says is data, never trusted: an `action` that is not one of ACP's three (a list,
say), content outside the form's `requestedSchema` (a choice that was never offered, a number
for a string, a field the form did not have, a required field missing) or content past
`ANSWER_CHARS` is a dismissal (`cancel`), and the log says why in one short line. The checks are
ACP's elicitation schema (a flat object of strings, numbers, integers, booleans and string
lists): `enum`/`oneOf` choices, `minLength`/`maxLength`, `minimum`/`maximum`,
`minItems`/`maxItems` and `required`. A `pattern` or `format` is left to the asker: running a
server's regular expression on the user's text here would be a door to a ReDoS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

import structlog

from acp_agent.tools.base import ANSWER_CHARS

__all__ = ["ACTIONS", "checked_answer"]

log = structlog.get_logger(__name__)

ACTIONS = frozenset({"accept", "decline", "cancel"})
DISMISSED: dict[str, Any] = {"action": "cancel"}


def checked_answer(answer: Any, schema: Any = None) -> dict[str, Any]:
    """`{"action": "decline" | "cancel"}`, or `{"action": "accept"}` with the content the form
    allows; `schema` is the form's `requestedSchema` (None: a url elicitation, which takes no
    content, so any content is dropped)."""
    action = answer.get("action") if isinstance(answer, dict) else None
    if not isinstance(action, str) or action not in ACTIONS:
        return _dismissed(f"action {_kind(action)} is not accept, decline or cancel")
    if action != "accept":
        return {"action": action}
    content = answer.get("content")
    if schema is None or content is None:
        content = {}
    if not isinstance(content, dict):
        return _dismissed(f"content is {_kind(content)}, not an object")
    problem = _outside(content, schema if isinstance(schema, Mapping) else {})
    if problem is not None:
        return _dismissed(problem)
    return {"action": "accept", "content": content} if content else {"action": "accept"}


def _dismissed(why: str) -> dict[str, Any]:
    log.info("elicitation.answer_refused", why=why, treated_as="cancel")
    return dict(DISMISSED)


def _kind(value: Any) -> str:
    """What a refused value was, never the value itself (it may be megabytes, or a secret)."""
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    return "missing" if value is None else f"a {type(value).__name__}"


def _outside(content: dict[str, Any], schema: Mapping[str, Any]) -> str | None:
    """Why `content` is not an answer to the form `schema`, or None."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    size = 0
    for name, value in content.items():
        field = properties.get(name)
        if not isinstance(field, Mapping):
            return f"the form has no field {name[:40]!r}"
        problem = _field_problem(value, field)
        if problem is not None:
            return f"{name[:40]}: {problem}"
        size += len(name) + (
            sum(map(len, value)) if isinstance(value, list) else len(value) if isinstance(value, str) else 8
        )
        if size > ANSWER_CHARS:
            return f"the answer is longer than {ANSWER_CHARS:,} characters"
    required = schema.get("required")
    missing = [n for n in required if n not in content] if isinstance(required, list) else []
    return f"the required field {str(missing[0])[:40]!r} is missing" if missing else None


def _field_problem(value: Any, field: Mapping[str, Any]) -> str | None:
    kind = field.get("type")
    if kind == "string":
        if not isinstance(value, str):
            return f"{_kind(value)}, not a string"
        choices = _choices(field.get("enum"), field.get("oneOf"))
        if choices is not None and value not in choices:
            return f"{_kind(value)} that was not offered"
        return _bounds(len(value), field, "minLength", "maxLength", "characters")
    if kind in ("number", "integer"):
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not isinstance(value, int | float) or (kind == "integer" and not whole):
            return f"{_kind(value)}, not {'an integer' if kind == 'integer' else 'a number'}"
        low, high = field.get("minimum"), field.get("maximum")
        if (_number(low) and value < low) or (_number(high) and value > high):
            return "the number is out of the form's range"
        return None
    if kind == "boolean":
        return None if isinstance(value, bool) else f"{_kind(value)}, not a boolean"
    if kind == "array":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return f"{_kind(value)}, not a list of strings"
        items = field.get("items")
        items = items if isinstance(items, Mapping) else {}
        choices = _choices(items.get("enum"), items.get("anyOf"))
        if choices is not None and not set(value) <= choices:
            return "a choice that was not offered"
        return _bounds(len(value), field, "minItems", "maxItems", "items")
    # A property type ACP may add later: only the value types ACP allows in content.
    if isinstance(value, str | bool | int | float) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return None
    return f"{_kind(value)}, not a value a form field takes"


def _choices(enum: Any, titled: Any) -> frozenset[str] | None:
    """The offered values: an `enum`, or the `const`s of titled options (None: any value)."""
    if isinstance(enum, list):
        return frozenset(v for v in enum if isinstance(v, str))
    if isinstance(titled, list):
        return frozenset(
            o["const"] for o in titled if isinstance(o, Mapping) and isinstance(o.get("const"), str)
        )
    return None


def _bounds(size: int, field: Mapping[str, Any], low: str, high: str, unit: str) -> str | None:
    least, most = field.get(low), field.get(high)
    if _number(least) and size < least:
        return f"fewer than {least} {unit}"
    if _number(most) and size > most:
        return f"more than {most} {unit}"
    return None


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
