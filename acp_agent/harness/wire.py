"""What an agent writes on stdout, checked line by line: the stdio framing and the JSON-RPC envelope.

ACP over stdio is UTF-8, one JSON-RPC 2.0 message per newline-terminated line, and nothing else on
stdout. A `Transcript` keeps every line, every message and every way they broke those rules; an
optional payload check (the tests give the ACP schema's) adds what it finds about each message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from acp_agent.jsonrpc import envelope_problems, loads, message_kind

__all__ = [
    "PayloadCheck",
    "Transcript",
    "check_envelope",
    "id_key",
    "message_kind",
    "parse_line",
    "shorten",
]


class PayloadCheck(Protocol):
    """The problems of one message the agent wrote, beyond its envelope (the tests check the ACP
    schema); `request_method_for_id` says which method a response answers."""

    def __call__(
        self, msg: dict[str, Any], *, request_method_for_id: Callable[[Any], str | None]
    ) -> list[str]: ...


def id_key(value: Any) -> str:
    """A request id as a dict key that keeps its JSON type: 1, "1" and 1.0 are three ids."""
    return json.dumps(value, sort_keys=True)


def shorten(value: Any, limit: int = 120) -> str:
    """`value` (a string as is, anything else as JSON) cut to `limit` characters for a report."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        parsed = loads(text)
    except ValueError:
        return text, None, [*problems, f"not JSON: {shorten(text)}"]
    return text, parsed, problems + check_envelope(parsed)


def check_envelope(msg: Any) -> list[str]:
    """JSON-RPC 2.0 envelope problems of one message: the strict rules (`acp_agent/jsonrpc.py`)."""
    return envelope_problems(msg)


class Transcript:
    """All the agent wrote, line by line, with what was wrong with it; the client feeds it."""

    def __init__(self, check_payload: PayloadCheck | None = None) -> None:
        self.check_payload = check_payload
        self.stdout_lines: list[str] = []
        self.messages: list[dict[str, Any]] = []  # every JSON object, in order
        self.protocol_violations: list[str] = []
        self.schema_problems: list[str] = []  # what `check_payload` found
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
        if self.check_payload is not None:
            label = message.get("method") or f"response to id {shorten(message.get('id'))}"
            found = self.check_payload(message, request_method_for_id=self.method_for_id)
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
        except (ValueError, RecursionError):  # a test may send a line too deep to parse
            continue
    return out
