"""Images in the history: within what one request may carry, and out when the API refuses one.

Every request resends the whole history, images included, and the API takes at most 32 MB per
request (413 past it) and at most 100 images (with sides of at most 2000 pixels once there are
more than 20). Eight 3.7 MB screenshots made every later request a 413, and one file the API
could not process ("Could not process image", 400) failed every later prompt (issue 29 item 8).

- **Budget.** Before a request, if the history holds more than `MAX_MEDIA` images (and PDFs) or
  more than `MAX_MEDIA_BYTES` of their base64, the oldest become a short text note until what is
  left fits `LOW_MEDIA` / `LOW_MEDIA_BYTES`. Rewriting old blocks changes the cached prompt prefix,
  so it drops down to half the budget at once: the next rewrite is many images away.
- **Refusal.** When the API refuses an image (a 400 that says so, or a 413), the image it names
  (or, when it names none, every image it had not taken before) becomes a note, once per request;
  the request is then sent again (a retry on the turn's record, not a new request).

Both count what a request carries (`History.for_request`: a result cleared by `clearing.py` carries
no image), whose user messages hold their blocks at the history's own places. Either rewrite goes
through `History.replace_all`, so the journal keeps it and `session/load`
restores the history the API took. Thinking blocks after the first changed message go too: they
are signed to the prefix they were written behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import structlog

from acp_agent.turn.context.history import History, Mark, without_thinking

__all__ = [
    "LOW_MEDIA",
    "LOW_MEDIA_BYTES",
    "MAX_MEDIA",
    "MAX_MEDIA_BYTES",
    "OVER_BUDGET",
    "REFUSED",
    "fit_media",
    "media_keys",
    "replace_refused",
]

log = structlog.get_logger(__name__)

MAX_MEDIA = 20
MAX_MEDIA_BYTES = 20 * 1024 * 1024
"""Base64 bytes of images and documents in one request: the API takes 32 MB in all."""
LOW_MEDIA, LOW_MEDIA_BYTES = MAX_MEDIA // 2, MAX_MEDIA_BYTES // 2
OVER_BUDGET = (
    "[an image was here; it was taken out of the conversation to keep each request under the "
    "API's size limit (read the file again if it is still needed)]"
)
REFUSED = "[an image was here; the API could not process it, so it was taken out]"
_PATH = re.compile(r"messages\.(\d+)\.content\.(\d+)(?:\.content\.(\d+))?")
Where = tuple[int, int, int | None]
"""A media block's place: message, block, and its index inside a tool_result (or None)."""


def _media(messages: list[dict[str, Any]]) -> Iterator[tuple[Where, dict[str, Any]]]:
    """Every base64 image or document, oldest first, in prompts and tool results."""
    for i, message in enumerate(messages):
        if message["role"] != "user":
            continue
        for j, block in enumerate(message["content"]):
            kind = block.get("type")
            if kind in ("image", "document") and _data(block) is not None:
                yield (i, j, None), block
            elif kind == "tool_result" and isinstance(inner := block.get("content"), list):
                for k, part in enumerate(inner):
                    if isinstance(part, dict) and part.get("type") in ("image", "document") and _data(part):
                        yield (i, j, k), part


def _data(block: dict[str, Any]) -> str | None:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) and source.get("type") == "base64" else None
    return data if isinstance(data, str) else None


def media_keys(messages: list[dict[str, Any]], upto: Mark | None = None) -> set[int]:
    """Keys of the media in `messages` (before `upto`, the history's mark when a request the API
    answered was sent: the media it took)."""
    if upto is not None:
        messages = messages[: upto.messages]
        if messages and messages[-1]["role"] == "user" and upto.blocks:
            messages[-1] = dict(messages[-1], content=messages[-1]["content"][: upto.blocks])
    return {hash(_data(block)) for _, block in _media(messages)}


def _replaced(history: History, places: set[Where], note: str) -> None:
    """Put `note` in place of the media at `places`, drop the thinking behind them, and journal."""
    messages = [dict(m, content=list(m["content"])) for m in history.messages]
    for i, j, k in places:
        if k is None:
            messages[i]["content"][j] = {"type": "text", "text": note}
        else:
            result = dict(messages[i]["content"][j])
            result["content"] = [
                *result["content"][:k],
                {"type": "text", "text": note},
                *result["content"][k + 1 :],
            ]
            messages[i]["content"][j] = result
    first = min(i for i, _, _ in places)
    history.replace_all(messages[: first + 1] + without_thinking(messages[first + 1 :]))


def fit_media(history: History) -> int:
    """Take the oldest media out when the history holds more than one request may carry;
    returns how many were taken out (0, the common case, touches nothing)."""
    found = [(where, len(_data(block) or "")) for where, block in _media(history.for_request())]
    total = sum(size for _, size in found)
    if len(found) <= MAX_MEDIA and total <= MAX_MEDIA_BYTES:
        return 0
    places: set[Where] = set()
    for where, size in found:
        if len(found) - len(places) <= LOW_MEDIA and total <= LOW_MEDIA_BYTES:
            break
        places.add(where)
        total -= size
    _replaced(history, places, OVER_BUDGET)
    log.info("media.over_budget", taken_out=len(places), kept=len(found) - len(places))
    return len(places)


def replace_refused(history: History, detail: dict[str, Any], accepted: Mark | None) -> int:
    """After the API refused a request for its media (a 400 about an image, or a 413), take out
    the media it named, else those it had not taken before `accepted` (the mark of the latest
    request it answered; on a 413: the oldest half); returns
    how many (0: the refusal was not about media, or there is nothing to take out)."""
    status, message = detail.get("status"), str(detail.get("apiMessage") or "")
    found = list(_media(history.for_request()))
    if not found or not (status == 413 or (status == 400 and "image" in message.lower())):
        return 0
    places: set[Where] = set()
    if status == 413:
        places = {where for where, _ in found[: max(1, len(found) // 2)]}
    elif named := _PATH.search(message):
        i, j, k = named.groups()
        where = (int(i), int(j), None if k is None else int(k))
        places = {where} if any(where == w for w, _ in found) else set()
    if not places:
        taken = media_keys(history.messages, accepted) if accepted is not None else set()
        places = {where for where, block in found if hash(_data(block)) not in taken}
        places = places or {where for where, _ in found}
    _replaced(history, places, REFUSED if status == 400 else OVER_BUDGET)
    log.warning("media.refused", status=status, taken_out=len(places), message=message[:200])
    return len(places)
