"""Where a request's media blocks are: the one walk the fake's image and document rules share."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["sources_of"]


def sources_of(body: Mapping[str, Any], kind: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, source) of every `kind` block ("image", "document"), in tool results too; the path
    is the one the API's 400 names (`messages.0.content.1.content.0`)."""
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping):
                continue
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, part in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(part, Mapping) and part.get("type") == kind:
                    yield f"messages.{i}.content.{j}.content.{k}", part.get("source") or {}
            if block.get("type") == kind:
                yield f"messages.{i}.content.{j}", block.get("source") or {}
