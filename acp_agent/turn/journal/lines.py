"""One journal line <-> one entry of the vocabulary (`entries.py`), and the line's JSON Schema.

Reading validates a line once, strictly, with a pydantic TypeAdapter over the entry classes (JSON
parsed and checked in one pass; a boundary crossed once per entry, docs/decisions.md D4). A line
of a kind this agent does not know (a newer agent's) is skipped, never refused. Writing follows the
classes' fields: `type` first, camelCase keys in declaration order, a field left out at an empty
default (None, False, (), 0), every string made UTF-8 encodable (`tools/shown.py`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Discriminator, Field, Tag, ValidationError
from pydantic.alias_generators import to_camel

from acp_agent.errors import AgentError
from acp_agent.lazy import deferred
from acp_agent.tools.shown import shown_value
from acp_agent.turn.journal.entries import ENTRY_CLASSES, Entry

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["EntryProblem", "entry_json", "journal_schema", "read_entry"]


@deferred
def type_adapter() -> type[TypeAdapter[Any]]:
    """pydantic's TypeAdapter, imported on the first read: session/new only writes (D4)."""
    from pydantic import TypeAdapter

    return TypeAdapter


@dataclass(frozen=True, slots=True)
class _Unknown:
    """A kind a newer agent wrote: skipped."""

    type: str


def _kind(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):
        return None
    return kind if kind in ENTRY_CLASSES else "unknown"


@functools.cache
def _reader() -> TypeAdapter[Any]:
    """Built on the first read, not at import: session/new writes entries, it never reads one."""
    tagged: list[Any] = [Annotated[cls, Tag(kind)] for kind, cls in ENTRY_CLASSES.items()]
    tagged.append(Annotated[_Unknown, Tag("unknown")])
    union: Any = Annotated[Union[tuple(tagged)], Discriminator(_kind)]  # noqa: UP007
    return type_adapter.now()(union)


class EntryProblem(AgentError, ValueError):
    """A line that is not an entry of a known shape; the message says what is wrong with it."""


def read_entry(line: str | bytes) -> Entry | None:
    """One journal line as its entry, or None for a kind this agent does not know.

    Raises:
        EntryProblem: not a JSON object, no `type`, or an entry of the wrong shape.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    try:
        entry: Entry | _Unknown = _reader().validate_json(line, strict=True)
    except ValidationError as exc:
        if "surrogate" not in str(exc):
            raise EntryProblem(_problem(exc)) from None
        try:
            entry = _reader().validate_json(_without_lone_surrogates(line), strict=True)
        except ValidationError as again:
            raise EntryProblem(_problem(again)) from None
    return None if isinstance(entry, _Unknown) else entry


def _without_lone_surrogates(line: str) -> str:
    """A line whose `\\udXXX` escapes pair with nothing (a hand-made or foreign journal), with
    those made encodable as the history would make them (`tools/shown.py`)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        raise EntryProblem("not a JSON line") from None
    return json.dumps(shown_value(value), ensure_ascii=False)


def _problem(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"][1:])
    kind = error["loc"][0] if error["loc"] else None
    if error["type"] in {"union_tag_not_found", "union_tag_invalid"}:
        found = error.get("input")
        return (
            "an entry without a type"
            if isinstance(found, dict)
            else f"a JSON {_json_name(found)}, not an entry"
        )
    if error["type"].startswith("json_"):
        return f"not a JSON line ({error['msg']})"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"the {kind} entry's {where or 'value'}: {message}" if kind else message


def _json_name(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), "null")


def entry_json(entry: Entry) -> dict[str, Any]:
    """The entry as its journal line's JSON object, every string made UTF-8 encodable."""
    return shown_value(_plain(entry))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = getattr(value, "type", None)
        if isinstance(kind, str):
            out["type"] = kind
        for name, key, empty in _fields(type(value)):
            item = getattr(value, name)
            if not (empty is not _KEPT and item == empty and type(item) is type(empty)):
                out[key] = _plain(item)
        return out
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


_KEPT: Any = object()
"""A field written whatever its value (its default is not an empty one)."""


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """(attribute, JSON key, the empty default it is left out at, else `_KEPT`) of each field
    but `type`, in order."""
    found = []
    for f in dataclasses.fields(cls):
        if f.name != "type":
            default = f.default
            empty = (
                default is None
                or default is False
                or default == ()
                or (type(default) is int and default == 0)
            )
            found.append((f.name, to_camel(f.name), default if empty else _KEPT))
    return tuple(found)


def journal_schema() -> dict[str, Any]:
    """The JSON Schema of one journal line (every known kind, each with its `type` required)."""
    union: Any = Annotated[Union[tuple(ENTRY_CLASSES.values())], Field(discriminator="type")]  # noqa: UP007
    schema = type_adapter.now()(union).json_schema(by_alias=True)
    for name, definition in schema.get("$defs", {}).items():
        if name.endswith("Entry") and "type" in definition.get("properties", {}):
            definition["required"] = ["type", *definition.get("required", [])]
    return schema
