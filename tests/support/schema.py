"""Check what the agent writes: the stdio framing, the JSON-RPC envelope, and the official ACP v1
JSON schema, one definition at a time.

Why per definition: the schema's top level accepts nearly anything (its `Ext*` branches are
unconstrained), so `{"stopReason": "done"}` or a `null` `session/load` result would pass there.
We pick the definition for each message from `meta.json` (which side handles which method) and
the `x-method` keys, and validate only against it. The schema lives beside the repo in
`../shared/acp/schema/v1` and is never copied into it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

__all__ = [
    "SCHEMA_DIR_ENV",
    "AcpSchema",
    "SchemaNotFoundError",
    "Transcript",
    "check_envelope",
    "default_schema_dir",
    "id_key",
    "message_kind",
    "parse_line",
    "shorten",
]

SCHEMA_DIR_ENV = "ACP_SCHEMA_DIR"
_KINDS = ("Request", "Response", "Notification")
_MAX_ERRORS = 5


class SchemaNotFoundError(FileNotFoundError):
    """The shared schema directory is missing: tests that need it skip with this message."""


def default_schema_dir() -> Path:
    """`$ACP_SCHEMA_DIR`, else `<repo>/../shared/acp/schema/v1`."""
    override = os.environ.get(SCHEMA_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "acp" / "schema" / "v1"


def id_key(value: Any) -> str:
    """A request id as a dict key that keeps its JSON type: 1, "1" and 1.0 are three ids."""
    return json.dumps(value, sort_keys=True)


def message_kind(msg: dict[str, Any]) -> str:
    """'request', 'notification' or 'response', by shape (a method with an id is a request)."""
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    return "response"


def parse_line(raw: bytes, *, terminated: bool = True) -> tuple[str, Any, list[str]]:
    """One stdout line (without its newline) → (text, parsed JSON or None, problems).

    ACP stdio: UTF-8, one JSON-RPC message per newline-terminated line, nothing else (no blank
    lines, no NaN).
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
        problems.append(f'"jsonrpc" must be "2.0", got {shorten(msg.get("jsonrpc", "nothing"))}')
    if "id" in msg and not (msg["id"] is None or _is_int(msg["id"]) or isinstance(msg["id"], str)):
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
        problems.append("a response must carry an id (null when the request's id is unknown)")
    if ("result" in msg) == ("error" in msg):
        problems.append("a response must carry exactly one of result and error")
    elif "error" in msg:
        error = msg["error"]
        if not isinstance(error, dict):
            problems.append(f"error must be an object, got {shorten(error)}")
        else:
            if not _is_int(error.get("code")):
                problems.append(f"error.code must be an integer, got {shorten(error.get('code'))}")
            if not isinstance(error.get("message"), str):
                problems.append(f"error.message must be a string, got {shorten(error.get('message'))}")
    return problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class AcpSchema:
    """The stable ACP v1 schema, with per-definition validators built on first use and cached."""

    def __init__(self, schema: dict[str, Any], meta: dict[str, Any], source: Path | None = None):
        self.source = source
        self.defs: dict[str, Any] = schema["$defs"]
        # meta.json groups the methods by the side that handles them.
        self.agent_methods = frozenset(meta.get("agentMethods", {}).values())
        self.client_methods = frozenset(meta.get("clientMethods", {}).values())
        self.protocol_methods = frozenset(meta.get("protocolMethods", {}).values())
        self._def_for: dict[tuple[str, str], str] = {}
        for name, definition in self.defs.items():
            method = definition.get("x-method")
            kind = next((k for k in _KINDS if name.endswith(k)), None)
            if isinstance(method, str) and kind:
                self._def_for[(method, kind)] = name
        self._validators: dict[str, Any] = {}

    @classmethod
    def load(cls, directory: Path | None = None) -> AcpSchema:
        """Read `schema.json` and `meta.json`; `SchemaNotFoundError` says where it looked."""
        where = directory if directory is not None else default_schema_dir()
        if not ((where / "schema.json").is_file() and (where / "meta.json").is_file()):
            raise SchemaNotFoundError(
                f"ACP schema not found at {where}; it lives in ../shared/acp/schema/v1 "
                f"(set {SCHEMA_DIR_ENV} to point elsewhere)"
            )
        schema = json.loads((where / "schema.json").read_text(encoding="utf-8"))
        meta = json.loads((where / "meta.json").read_text(encoding="utf-8"))
        return cls(schema, meta, source=where)

    def def_name(self, method: str, kind: str) -> str | None:
        """The definition of `method`'s 'Request', 'Response' or 'Notification', if there is one."""
        return self._def_for.get((method, kind))

    def validate(self, def_name: str, instance: Any, *, where: str = "") -> list[str]:
        """Problems of `instance` against one definition, each naming it and the JSON path."""
        if def_name not in self._validators:
            if def_name not in self.defs:
                raise KeyError(f"no definition {def_name!r} in the ACP schema")
            self._validators[def_name] = jsonschema.Draft202012Validator(
                {"$ref": f"#/$defs/{def_name}", "$defs": self.defs}
            )
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


class Transcript:
    """All the agent wrote, line by line, with what was wrong with it; the driver feeds it."""

    def __init__(self, schema: AcpSchema | None) -> None:
        self.schema = schema
        self.stdout_lines: list[str] = []
        self.messages: list[dict[str, Any]] = []  # every JSON object, in order
        self.protocol_violations: list[str] = []
        self.schema_problems: list[str] = []
        self._sent_methods: dict[str, str] = {}  # id key → method of a request sent to the agent

    def note_sent(self, payload: dict[str, Any] | bytes) -> list[str]:
        """Remember the methods of requests sent to the agent, to check the answers' results.

        Returns the id keys of all it should answer (everything sent with an id but responses).
        """
        keys = []
        for message in [payload] if isinstance(payload, dict) else _json_lines(payload):
            if isinstance(message, dict) and "id" in message and not {"result", "error"} & message.keys():
                keys.append(id_key(message["id"]))
                if isinstance(message.get("method"), str):
                    self._sent_methods[keys[-1]] = message["method"]
        return keys

    def method_for_id(self, request_id: Any) -> str | None:
        return self._sent_methods.get(id_key(request_id))

    def feed(self, raw: bytes, *, terminated: bool = True) -> int | None:
        """Record one stdout line; return the index of its message in `messages`, if it has one."""
        text, message, problems = parse_line(raw, terminated=terminated)
        self.stdout_lines.append(text)
        self.protocol_violations += [f"stdout line {len(self.stdout_lines)}: {p}" for p in problems]
        if not isinstance(message, dict):
            return None
        index = len(self.messages)
        self.messages.append(message)
        if self.schema is not None:
            label = message.get("method") or f"response to id {shorten(message.get('id'))}"
            found = self.schema.check_payload(message, request_method_for_id=self.method_for_id)
            self.schema_problems += [f"message #{index} ({label}): {p}" for p in found]
        return index

    def problems_report(self, *extra: tuple[str, list[str]]) -> str:
        """Every violation and schema problem, as one readable block ('' when there is none)."""
        sections = [("protocol violations", self.protocol_violations)]
        sections += [("schema problems", self.schema_problems), *extra]
        return "\n".join(
            f"{title}:" + "".join(f"\n  - {p}" for p in items) for title, items in sections if items
        )

    def recent(self, count: int = 4) -> str:
        """The last few messages and violations, to explain a timeout or an early exit."""
        first = max(0, len(self.messages) - count)
        lines = [f"#{first + i}: {shorten(m, 300)}" for i, m in enumerate(self.messages[first:])]
        lines += [f"! {p}" for p in self.protocol_violations[-count:]]
        return "".join(f"\n  {line}" for line in lines) or " none"


def _json_lines(raw: bytes) -> list[Any]:
    out = []
    for line in raw.split(b"\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


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


def shorten(value: Any, limit: int = 120) -> str:
    """`value` (a string as is, anything else as JSON) cut to `limit` characters for a report."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
