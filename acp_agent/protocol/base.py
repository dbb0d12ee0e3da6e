"""The base of every ACP model: camelCase on the wire, unknown fields tolerated, `_meta` kept."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

__all__ = ["AcpModel", "describe_validation_error"]


class AcpModel(BaseModel):
    """camelCase aliases, populate by name, extra fields allowed, `meta` ⇄ `_meta`."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="allow"
    )

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def to_wire(self) -> dict[str, Any]:
        """The JSON object sent to the client (None fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def describe_validation_error(exc: ValidationError) -> tuple[str, list[dict[str, Any]]]:
    """A one-sentence message naming the first bad field, and the details for `error.data`."""
    details = []
    for err in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = ".".join(str(part) for part in err["loc"]) or "params"
        details.append({"field": loc, "problem": err["msg"]})
    first = details[0] if details else {"field": "params", "problem": "invalid"}
    return f"Invalid params: {first['field']}: {first['problem']}", details
