"""The fake's `GET /v1/models`: paged as the real API pages it (`limit` 1 to 1000, default 20, `after_id`),
and, for tests of an agent that must not trust it, hostile on request: a listing that never ends
(`has_more` forever, fresh ids on every page) and pages padded to any size.

Bad figures (`max_tokens: 0`, `-1`) and long listings (100,000 models) need no switch here: give them
as the fake's `model_info` and `models`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from acp_agent.testing.rules.model_rules import RULES

__all__ = ["ENDLESS_PREFIX", "ModelsListing", "model_info"]

ENDLESS_PREFIX = "claude-endless-"
"""The ids an endless listing makes up once the listed models are spent."""
MAX_LIMIT = 1000
DEFAULT_LIMIT = 20


@dataclass
class ModelsListing:
    """How `GET /v1/models` answers, and what it sent (read back by tests)."""

    endless: bool = False
    """`has_more` forever: after the listed models, made-up ids without end."""
    page_padding: int = 0
    """Bytes of junk added to every page (an unknown field, which clients must ignore)."""
    pages_served: int = 0
    bytes_sent: int = 0
    """Bytes of `/v1/models` bodies the client actually took (a client that hangs up early takes less)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def page(
        self, query: str, models: Sequence[str], overrides: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The page a request with `query` gets: the ids after `after_id`, at most `limit` of them."""
        params = parse_qs(query)
        limit = _limit(params.get("limit", [""])[0])
        after = params.get("after_id", [None])[0]
        ids = list(_take(self._ids(models, after), limit + 1))
        more, ids = len(ids) > limit, ids[:limit]
        data = [{**model_info(m), **overrides.get(m, {})} for m in ids]
        page: dict[str, Any] = {
            "data": data,
            "has_more": more,
            "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None,
        }
        if self.page_padding:
            page["padding"] = "x" * self.page_padding
        with self._lock:
            self.pages_served += 1
        return page

    def sent(self, n: int) -> None:
        with self._lock:
            self.bytes_sent += n

    def _ids(self, models: Sequence[str], after: str | None) -> Iterator[str]:
        start = 0
        if after is not None and after.startswith(ENDLESS_PREFIX) and self.endless:
            yield from _endless(int(after.removeprefix(ENDLESS_PREFIX)) + 1)
            return
        if after is not None:
            start = next((i + 1 for i, m in enumerate(models) if m == after), len(models))
        yield from models[start:]
        if self.endless:
            yield from _endless(0)


def _endless(first: int) -> Iterator[str]:
    n = first
    while True:
        yield f"{ENDLESS_PREFIX}{n}"
        n += 1


def _take(ids: Iterator[str], n: int) -> Iterator[str]:
    for _, model in zip(range(n), ids, strict=False):
        yield model


def _limit(raw: str) -> int:
    try:
        return min(max(int(raw), 1), MAX_LIMIT)
    except ValueError:
        return DEFAULT_LIMIT


def model_info(model: str) -> dict[str, Any]:
    """A `ModelInfo` as the Models API lists it; capabilities for the models with rules."""
    rules = RULES.get(model)
    info: dict[str, Any] = {
        "type": "model",
        "id": model,
        "display_name": model,
        "lifecycle": "active",
        "created_at": "2025-01-01T00:00:00Z",
        "max_input_tokens": rules.window if rules else 200_000,
        "max_tokens": rules.max_output if rules else 64_000,
    }
    if rules is not None:

        def support(flag: bool) -> dict[str, bool]:
            return {"supported": flag}

        kinds = ("adaptive", "between_tools", "disabled", "enabled")
        info["capabilities"] = {
            "thinking": {"supported": True, "types": {k: support(k in rules.thinking) for k in kinds}},
            "effort": {
                "supported": bool(rules.efforts),
                **{
                    level: support(level in rules.efforts)
                    for level in ("low", "medium", "high", "xhigh", "max")
                },
            },
            "structured_outputs": support(True),
            "server_tools": {
                "supported": True,
                "web_search": support(bool(rules.server_tools)),
                "code_execution": support(True),
            },
            "pdf_input": support(rules.pdf),
        }
    return info
