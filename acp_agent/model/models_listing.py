"""Reading `GET /v1/models` without trusting it: a bounded number of pages and bytes.

The listing only fills the model choices and the profiles (`profiles.py` checks its figures), so a
partial listing costs nothing; an endless one (`has_more` forever) or a huge one must not cost
hundreds of GETs or megabytes. Pages are read as byte streams, so a page is cut off at the byte cap
instead of being read whole first.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import structlog

if TYPE_CHECKING:
    import anthropic

__all__ = ["MAX_BYTES", "MAX_ID_CHARS", "MAX_PAGES", "PAGE_LIMIT", "read_models"]

log = structlog.get_logger(__name__)

PAGE_LIMIT = 1000
"""Models asked for per page (the API's maximum): today's whole listing is one page."""
MAX_PAGES = 5
"""At most this many GETs per listing."""
MAX_BYTES = 4 * 1024 * 1024
"""At most this many bytes over all pages (a real page of 1,000 models is well under 1 MB)."""
MAX_ID_CHARS = 200
"""A longer model id is not a model id: it is dropped (it would be shown as a choice)."""


async def read_models(client: anthropic.AsyncAnthropic) -> dict[str, dict[str, Any]]:
    """What the Models API says of each model (`ModelInfo` as dicts), by id, in its order.

    Stops, keeping what it read, after `MAX_PAGES` pages or `MAX_BYTES` bytes (the page cut off
    is dropped), or when a page's cursor does not move on.

    Raises:
        anthropic.APIError: the API answered an error (or could not be reached).
        ValueError: a page is not a listing.
    """
    models: dict[str, dict[str, Any]] = {}
    budget = MAX_BYTES
    after: str | None = None
    for _ in range(MAX_PAGES):
        body = await _read_page(client, after, budget)
        if body is None:
            log.warning("models.capped", reason=f"more than {MAX_BYTES} bytes", models=len(models))
            return models
        budget -= len(body)
        page = await anyio.to_thread.run_sync(json.loads, body)
        more, last = _take_page(page, models)
        if not more:
            return models
        if last is None or last == after:
            log.warning("models.capped", reason="the page cursor did not move on", models=len(models))
            return models
        after = last
    log.warning("models.capped", reason=f"more than {MAX_PAGES} pages", models=len(models))
    return models


async def _read_page(client: anthropic.AsyncAnthropic, after: str | None, budget: int) -> bytes | None:
    """One page's body, or None when it is longer than `budget` bytes (the rest is not read)."""
    kwargs: dict[str, Any] = {"limit": PAGE_LIMIT}
    if after is not None:
        kwargs["after_id"] = after
    body = bytearray()
    async with client.models.with_streaming_response.list(**kwargs) as response:
        async for chunk in response.iter_bytes():
            body += chunk
            if len(body) > budget:
                return None
    return bytes(body)


def _take_page(page: Any, models: dict[str, dict[str, Any]]) -> tuple[bool, str | None]:
    """Add the page's models to `models`; whether more pages follow, and the cursor to them.

    Raises:
        ValueError: the page is not `{"data": [...], ...}`.
    """
    if not isinstance(page, dict) or not isinstance(page.get("data"), list):
        raise ValueError("the models listing is not {data: [...]}")
    dropped = 0
    for info in page["data"]:
        model_id = info.get("id") if isinstance(info, dict) else None
        if isinstance(model_id, str) and 0 < len(model_id) <= MAX_ID_CHARS:
            models.setdefault(model_id, info)
        else:
            dropped += 1
    if dropped:
        log.warning("models.dropped", reason=f"no id, or one over {MAX_ID_CHARS} characters", count=dropped)
    last = page.get("last_id")
    return page.get("has_more") is True, last if isinstance(last, str) else None
