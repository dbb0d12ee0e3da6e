"""Check what the agent writes against the official ACP v1 JSON schema, one definition at a time.

Why per definition: the schema's top level accepts nearly anything (its `Ext*` branches are unconstrained), so
`{"stopReason": "done"}` or a `null` `session/load` result would pass there. We pick the definition for each
message from `meta.json` (who handles which method) and the `x-method` keys, and validate only against it.
The schema files live beside the repo in `../shared/acp/schema/v1` and are never copied into it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

__all__ = [
    "SCHEMA_DIR_ENV",
    "AcpSchema",
    "SchemaNotFoundError",
    "check_envelope",
    "default_schema_dir",
    "message_kind",
    "parse_line",
    "shorten",
]

SCHEMA_DIR_ENV = "ACP_SCHEMA_DIR"
_KINDS = ("Request", "Response", "Notification")
_MAX_ERRORS = 5


class SchemaNotFoundError(FileNotFoundError):
    """The shared schema directory is missing: wire tests that need it skip with this message."""


def default_schema_dir() -> Path:
    """`$ACP_SCHEMA_DIR`, else `<repo>/../shared/acp/schema/v1`."""
    override = os.environ.get(SCHEMA_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "acp" / "schema" / "v1"


def message_kind(msg: dict[str, Any]) -> str:
    """'request', 'notification' or 'response', by JSON-RPC shape (a method with an id is a request)."""
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    return "response"


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def parse_line(raw: bytes, *, terminated: bool = True) -> tuple[str, Any, list[str]]:
    """One stdout line (without its newline) → (text, parsed JSON or None, transport problems).

    ACP stdio: UTF-8, one JSON-RPC message per `\\n`-terminated line, nothing else (no blank lines, no NaN).
    """
    problems = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"not valid UTF-8 ({exc.reason})")
        text = raw.decode("utf-8", "replace")
    if not terminated:
        problems.append("no newline at its end before stdout closed")
    if not text.strip():
        return text, None, [*problems, "blank line"]
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text, None, [*problems, f"not JSON: {shorten(text)}"]
    return text, parsed, problems + check_envelope(parsed)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_envelope(msg: Any) -> list[str]:
    """JSON-RPC 2.0 envelope problems of one message; needs no schema file."""
    if not isinstance(msg, dict):
        return [f"not a JSON object: {shorten(msg)}"]
    problems = []
    if msg.get("jsonrpc") != "2.0":
        problems.append(f'"jsonrpc" must be "2.0", got {shorten(msg.get("jsonrpc", "<missing>"))}')
    if "id" in msg and not _valid_id(msg["id"]):
        problems.append(f"id must be a string, an integer or null, got {shorten(msg['id'])}")
    if "method" in msg:
        if not isinstance(msg["method"], str):
            problems.append(f"method must be a string, got {shorten(msg['method'])}")
        if "params" in msg and not isinstance(msg["params"], dict | list):
            problems.append(f"params must be an object, got {shorten(msg['params'])}")
        if "result" in msg or "error" in msg:
            problems.append("a request or notification must not carry result or error")
        return problems
    if "id" not in msg:
        problems.append("a response must carry an id (null when the request id is unknown)")
    if ("result" in msg) == ("error" in msg):
        problems.append("a response must carry exactly one of result and error")
    elif "error" in msg:
        error = msg["error"]
        if not isinstance(error, dict):
            problems.append(f"error must be an object, got {shorten(error)}")
        else:
            code = error.get("code")
            if not isinstance(code, int) or isinstance(code, bool):
                problems.append(f"error.code must be an integer, got {shorten(code)}")
            if not isinstance(error.get("message"), str):
                problems.append(f"error.message must be a string, got {shorten(error.get('message'))}")
    return problems


class AcpSchema:
    """The stable ACP v1 schema, with per-definition validators built on first use and cached."""

    def __init__(self, schema: dict[str, Any], meta: dict[str, Any], source: Path | None = None) -> None:
        self.source = source
        self.defs: dict[str, Any] = schema["$defs"]
        self.version = meta.get("version")
        # meta.json names each method by the side that handles it.
        self.agent_methods = frozenset(meta.get("agentMethods", {}).values())
        self.client_methods = frozenset(meta.get("clientMethods", {}).values())
        self.protocol_methods = frozenset(meta.get("protocolMethods", {}).values())
        self._def_for: dict[tuple[str, str], str] = {}
        for name, definition in self.defs.items():
            method = definition.get("x-method")
            kind = next((k for k in _KINDS if name.endswith(k)), None)
            if isinstance(method, str) and kind:
                self._def_for[(method, kind)] = name
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    @classmethod
    def load(cls, directory: Path | None = None) -> AcpSchema:
        """Read `schema.json` and `meta.json`; raise `SchemaNotFoundError` naming where it looked."""
        where = directory if directory is not None else default_schema_dir()
        schema_file, meta_file = where / "schema.json", where / "meta.json"
        if not (schema_file.is_file() and meta_file.is_file()):
            raise SchemaNotFoundError(
                f"ACP schema not found at {where}; it lives in ../shared/acp/schema/v1 "
                f"(set {SCHEMA_DIR_ENV} to point elsewhere)"
            )
        schema = json.loads(schema_file.read_text(encoding="utf-8"))
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        return cls(schema, meta, source=where)

    def def_name(self, method: str, kind: str) -> str | None:
        """The definition for `method`'s 'Request', 'Response' or 'Notification', if the schema has one."""
        return self._def_for.get((method, kind))

    def validator(self, def_name: str) -> jsonschema.Draft202012Validator:
        if def_name not in self._validators:
            if def_name not in self.defs:
                raise KeyError(f"no definition {def_name!r} in the ACP schema")
            self._validators[def_name] = jsonschema.Draft202012Validator(
                {"$ref": f"#/$defs/{def_name}", "$defs": self.defs}
            )
        return self._validators[def_name]

    def validate(self, def_name: str, instance: Any, *, where: str = "") -> list[str]:
        """Problems of `instance` against one definition, each naming the definition and the JSON path."""
        errors = sorted(self.validator(def_name).iter_errors(instance), key=lambda e: list(map(str, e.path)))
        label = f"{def_name} ({where})" if where else def_name
        return [f"{label}: {_explain(error)}" for error in errors[:_MAX_ERRORS]]

    def check_agent_message(
        self, msg: Any, *, request_method_for_id: Callable[[Any], str | None]
    ) -> list[str]:
        """Every problem of one message the agent wrote: envelope first, then its schema definition."""
        problems = check_envelope(msg)
        if isinstance(msg, dict):
            problems += self.check_payload(msg, request_method_for_id=request_method_for_id)
        return problems

    def check_payload(
        self, msg: dict[str, Any], *, request_method_for_id: Callable[[Any], str | None]
    ) -> list[str]:
        """Schema problems only (no envelope checks) of one message the agent wrote.

        Methods the schema does not know (extensions such as `_vendor/x`) are not checked.
        """
        kind = message_kind(msg)
        if kind == "response":
            if isinstance(msg.get("error"), dict) and "Error" in self.defs:
                return self.validate("Error", msg["error"], where="error")
            if "result" not in msg:
                return []
            method = request_method_for_id(msg.get("id"))
            if method is None or method not in self.agent_methods:
                return []
            name = self.def_name(method, "Response")
            return self.validate(name, msg["result"], where=f"result of {method}") if name else []
        method = msg.get("method")
        if not isinstance(method, str):
            return []
        if method in self.agent_methods:
            return [f"{method!r} is handled by the agent; the agent must not send it to the client"]
        if method not in self.client_methods and method not in self.protocol_methods:
            return []
        wanted, other = ("Request", "Notification") if kind == "request" else ("Notification", "Request")
        name = self.def_name(method, wanted)
        if name is None:
            if self.def_name(method, other):
                return [f"{method!r} is a {other.lower()} but was sent as a {kind}"]
            return []
        return self.validate(name, msg.get("params"), where=f"params of {method}")


def _explain(error: ValidationError) -> str:
    """Say why validation failed, following the one union branch whose discriminator matched."""
    while error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        live = [errs for errs in branches.values() if not any(e.validator in ("const", "enum") for e in errs)]
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


def shorten(value: Any, limit: int = 120) -> str:
    """`value` (a string as is, anything else as JSON) cut to `limit` characters for a readable report."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
