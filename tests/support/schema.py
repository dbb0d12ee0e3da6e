"""Check what the agent writes: the stdio framing, the JSON-RPC envelope, and the ACP v1 schema,
one definition at a time.

Why per definition: the schema's top level accepts nearly anything (its `Ext*` branches are
unconstrained), so `{"stopReason": "done"}` or a `null` `session/load` result would pass there.
We pick the definition for each message from the method it belongs to (`schema_sdk.METHODS`: which
side handles it, and its definitions) and validate only against it. The definitions come from the
official Python SDK, a versioned dependency of the test extra, with what ACP added since written
out by hand (`schema_sdk.py`, `schema_newer.py`). The framing and envelope checks are the client's
own (`acp_agent/harness/wire.py`); this module adds the schema to them.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from jsonschema._utils import equal  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from acp_agent.harness import wire
from acp_agent.harness.wire import check_envelope, id_key, message_kind, parse_line, shorten
from tests.support.schema_sdk import METHODS, SDK_SCHEMA_REF, definitions

__all__ = [
    "AcpSchema",
    "BoundedValidator",
    "SchemaNotFoundError",
    "Transcript",
    "check_envelope",
    "id_key",
    "message_kind",
    "parse_line",
    "shorten",
]

_KINDS = ("Request", "Response", "Notification")
_SIDES = ("agent", "client", "protocol")
_MAX_ERRORS = 5
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 80
"""Bounded reprs for failure messages (`_explain` keeps 200 characters of each)."""


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's `type` keyword, with a bounded repr in its message. Its own writes `repr(instance)`
    whole for each union branch that fails, which for an update carrying a 5 MB image costs seconds;
    what passes and what fails is unchanged."""
    types = types if isinstance(types, list) else [types]
    if not any(validator.is_type(instance, name) for name in types):
        yield ValidationError(f"{_SHORT.repr(instance)} is not of type {', '.join(map(repr, types))}")


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's `enum` keyword, with a bounded repr in its message (see `_type`)."""
    if not any(equal(each, instance) for each in enums):
        yield ValidationError(f"{_SHORT.repr(instance)} is not one of {enums!r}")


def _one_of(validator: Any, one_of: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's `oneOf` keyword, with bounded reprs in its messages (see `_type`)."""
    branches = enumerate(one_of)
    all_errors = []
    for index, branch in branches:
        errors = list(validator.descend(instance, branch, schema_path=index))
        if not errors:
            first_valid = branch
            break
        all_errors.extend(errors)
    else:
        yield ValidationError(
            f"{_SHORT.repr(instance)} is not valid under any of the given schemas", context=all_errors
        )
        return
    more_valid = [each for _, each in branches if validator.evolve(schema=each).is_valid(instance)]
    if more_valid:
        reprs = ", ".join(_SHORT.repr(each) for each in [*more_valid, first_valid])
        yield ValidationError(f"{_SHORT.repr(instance)} is valid under each of {reprs}")


def _any_of(validator: Any, any_of: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's `anyOf` keyword, with a bounded repr in its message (see `_type`)."""
    all_errors = []
    for index, branch in enumerate(any_of):
        errors = list(validator.descend(instance, branch, schema_path=index))
        if not errors:
            return
        all_errors.extend(errors)
    yield ValidationError(
        f"{_SHORT.repr(instance)} is not valid under any of the given schemas", context=all_errors
    )


BoundedValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={"type": _type, "enum": _enum, "oneOf": _one_of, "anyOf": _any_of},
)
"""Draft 2020-12 as jsonschema implements it, but for the messages of four keywords: what passes
and what fails is the same (`tests/unit/test_schema_support.py` checks both on the same cases)."""


class SchemaNotFoundError(FileNotFoundError):
    """Never raised any more: the schema comes with the test extra (`schema_sdk.py`). Kept for a
    while so that code written against the old loader still imports; do not catch it to skip."""


class AcpSchema:
    """The ACP v1 schema (stable or unstable view), with per-definition validators built on first
    use and cached."""

    def __init__(self, defs: dict[str, Any], methods: dict[str, tuple[str, tuple[str, ...]]], *, name: str):
        self.source = name
        self.defs: dict[str, Any] = defs
        sides = {
            side: frozenset(m for m, (s, _) in methods.items() if s in (side, "both")) for side in _SIDES
        }
        self.agent_methods, self.client_methods = sides["agent"], sides["client"]
        self.protocol_methods = sides["protocol"]
        self._def_for: dict[tuple[str, str], str] = {}
        for method, (_, names) in methods.items():
            for name in names:
                kind = next((k for k in _KINDS if name.endswith(k)), None)
                if kind and name in defs:
                    self._def_for[(method, kind)] = name
        self._validators: dict[str, Any] = {}

    @classmethod
    def load(cls, *, unstable: bool = False) -> AcpSchema:
        """The schema the agent speaks; `unstable` adds what it sends only to a client that
        advertised an unstable capability (`subagents`). Built from the installed SDK's models."""
        view = "unstable" if unstable else "stable"
        return cls(
            definitions(unstable=unstable), METHODS, name=f"ACP v1 ({view}; SDK {SDK_SCHEMA_REF} + later)"
        )

    def def_name(self, method: str, kind: str) -> str | None:
        """The definition of `method`'s 'Request', 'Response' or 'Notification', if there is one."""
        return self._def_for.get((method, kind))

    def validate(self, def_name: str, instance: Any, *, where: str = "") -> list[str]:
        """Problems of `instance` against one definition, each naming it and the JSON path."""
        if def_name not in self._validators:
            if def_name not in self.defs:
                raise KeyError(f"no definition {def_name!r} in the ACP schema")
            self._validators[def_name] = BoundedValidator({"$ref": f"#/$defs/{def_name}", "$defs": self.defs})
        errors = sorted(self._validators[def_name].iter_errors(instance), key=lambda e: e.json_path)
        label = f"{def_name} ({where})" if where else def_name
        return [f"{label}: {_explain(error)}" for error in errors[:_MAX_ERRORS]]

    def check_agent_message(
        self, msg: Any, *, request_method_for_id: Callable[[Any], str | None]
    ) -> list[str]:
        """Every problem of one message the agent wrote: its envelope, then its definition."""
        problems = check_envelope(msg)
        if isinstance(msg, dict):
            problems += self.check_payload(msg, request_method_for_id=request_method_for_id)
        return problems

    def check_payload(
        self, msg: dict[str, Any], *, request_method_for_id: Callable[[Any], str | None]
    ) -> list[str]:
        """The schema problems (no envelope checks) of one message the agent wrote.

        Methods the schema does not know (extensions such as `_vendor/x`) are not checked.
        """
        kind = message_kind(msg)
        if kind == "response":
            if isinstance(msg.get("error"), dict) and "Error" in self.defs:
                return self.validate("Error", msg["error"], where="error")
            method = request_method_for_id(msg.get("id"))
            if "result" not in msg or method is None or method not in self.agent_methods:
                return []
            name = self.def_name(method, "Response")
            return self.validate(name, msg["result"], where=f"result of {method}") if name else []
        method = msg.get("method")
        if not isinstance(method, str):
            return []
        if method in self.agent_methods:
            return [f"{method!r} is handled by the agent; the agent must not send it"]
        if method not in self.client_methods | self.protocol_methods:
            return []
        wanted, other = ("Request", "Notification") if kind == "request" else ("Notification", "Request")
        name = self.def_name(method, wanted)
        if name is None:
            if self.def_name(method, other):
                return [f"{method!r} is a {other.lower()} but was sent as a {kind}"]
            return []
        return self.validate(name, msg.get("params"), where=f"params of {method}")


class Transcript(wire.Transcript):
    """The client's transcript, with each message checked against its ACP schema definition."""

    def __init__(self, schema: AcpSchema | None) -> None:
        super().__init__(schema.check_payload if schema is not None else None)
        self.schema = schema


def _explain(error: ValidationError) -> str:
    """Say why validation failed, following the one union branch whose discriminator matched."""
    while error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        live = [e for e in branches.values() if not any(s.validator in ("const", "enum") for s in e)]
        if len(live) != 1:
            allowed = [v for v in _allowed_values(error) if v is not None]
            hint = f" (allowed: {', '.join(map(repr, allowed[:12]))})" if allowed else ""
            return f"{shorten(error.message, 200)} at {error.json_path}{hint}"
        error = max(live[0], key=lambda e: len(e.absolute_path))
    return f"{shorten(error.message, 200)} at {error.json_path}"


def _allowed_values(error: ValidationError) -> list[Any]:
    out: list[Any] = []
    for sub in error.context or ():
        if sub.validator == "const":
            out.append(sub.validator_value)
        elif sub.validator == "enum":
            out.extend(sub.validator_value)
        else:
            out.extend(_allowed_values(sub))
    return out
