"""How a journaled value is declared: every entry kind and every value an entry carries is one.

`@journaled` makes a frozen, slotted dataclass (built directly by its writer, no validation: the
agent's own values) whose JSON keys the reader (`lines.py`, a pydantic TypeAdapter) takes in
camelCase, as `lines.py` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["journaled"]

_CONFIG = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def journaled(cls: type[_T]) -> type[_T]:
    """A frozen, slotted dataclass whose JSON keys the reader takes in camelCase."""
    cls.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    return dataclass(frozen=True, slots=True)(cls)
