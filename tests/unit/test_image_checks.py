"""Images are checked before they are attached, the fake refuses what the API refuses, and the
history keeps its images within one request's budget (issue 29 item 8)."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from typing import Any

import pytest

from acp_agent.testing.rules.image_rules import MAX_REQUEST_BYTES, TOO_LARGE, UNPROCESSABLE, image_error
from acp_agent.tools.files.image_headers import image_size
from acp_agent.turn.context.history import History, Mark
from acp_agent.turn.context.media_budget import (
    MAX_MEDIA,
    OVER_BUDGET,
    REFUSED,
    fit_media,
    media_keys,
    replace_refused,
)
from acp_agent.turn.journal.entries import CompactionEntry, Entry
from tests.support.images import gif, jpeg, png, webp


@pytest.mark.parametrize(
    ("data", "media_type", "size"),
    [
        (png(3, 2), "image/png", (3, 2)),
        (jpeg(640, 480), "image/jpeg", (640, 480)),
        (gif(7, 5), "image/gif", (7, 5)),
        (webp(30, 20), "image/webp", (30, 20)),
    ],
)
def test_well_formed_images_and_their_size(data: bytes, media_type: str, size: tuple[int, int]) -> None:
    assert image_size(data, media_type) == size


@pytest.mark.parametrize(
    ("data", "media_type", "why"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"some text, not chunks\n" * 5, "image/png", "chunk"),
        (png(3, 2)[:40], "image/png", "no image data"),
        (png(3, 2)[:50], "image/png", "runs past the end"),
        (png(3, 2)[:-12], "image/png", "no end (IEND)"),
        (png(3, 2).replace(b"IHDR", b"IHDX"), "image/png", "CRC"),
        (png(9000, 1), "image/png", "9000x1 pixels"),
        (b"\xff\xd8\xff\xe0" + b"\0" * 64, "image/jpeg", "runs past the end"),
        (jpeg(1, 1).replace(b"\xff\xc0", b"\xff\xe1"), "image/jpeg", "no frame header"),
        (jpeg(1, 1), "image/png", "not a image/png image"),
        (gif(0, 5), "image/gif", "0x5 pixels"),
        (b"GIF89a" + b"\0" * 20, "image/gif", "trailer"),
        (b"RIFF\xff\0\0\0WEBPVP8 " + b"\0" * 20, "image/webp", "RIFF size"),
        (b"RIFF\x1c\0\0\0WEBPVP8 " + b"\0" * 20, "image/webp", "not a VP8"),
    ],
)
def test_files_that_only_start_like_images_are_not_images(data: bytes, media_type: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        image_size(data, media_type)


def body_with(*images: tuple[bytes, str]) -> dict[str, Any]:
    blocks = [
        {"type": "image", "source": {"type": "base64", "media_type": t, "data": base64.b64encode(d).decode()}}
        for d, t in images
    ]
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": "look"}, *blocks]}]}


def test_the_fake_refuses_what_the_api_cannot_process() -> None:
    assert image_error(body_with((png(2, 2), "image/png"), (jpeg(3, 3), "image/jpeg")), 1000) is None
    assert image_error(body_with((png(2, 2), "image/jpeg")), 1000) == (
        400,
        "invalid_request_error",
        UNPROCESSABLE,
    )
    idat = struct.pack(">I", 4) + b"IDAT" + b"junk" + struct.pack(">I", zlib.crc32(b"IDATjunk"))
    broken = png(2, 2)[:33] + idat + png(2, 2)[-12:]
    image_size(broken, "image/png")  # the agent's header check lets it through...
    assert image_error(body_with((broken, "image/png")), 1000)[2] == UNPROCESSABLE  # ...the API does not
    assert image_error({}, MAX_REQUEST_BYTES + 1) == (413, "request_too_large", TOO_LARGE)
    many = body_with(*[(png(2100, 1), "image/png")] * 21)
    assert "many-image requests: 2000 pixels" in image_error(many, 1000)[2]  # type: ignore[index]


def image(n: int, size: int = 10) -> dict[str, Any]:
    data = base64.b64encode(bytes([n]) * size).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def history_of(count: int, size: int = 10) -> History:
    """A prompt with an image, then `count - 1` tool results with one each, with thinking between."""
    entries: list[Entry] = []
    history = History(journal=lambda entry, sync=True: entries.append(entry))
    history.add_user([{"type": "text", "text": "look"}, image(0, size)], journal=False)
    for n in range(1, count):
        history.add_assistant(
            [
                {"type": "thinking", "thinking": "hm", "signature": f"sig{n}"},
                {"type": "tool_use", "id": f"t{n}", "name": "read_file", "input": {}},
            ],
            journal=False,
        )
        result = {
            "type": "tool_result",
            "tool_use_id": f"t{n}",
            "content": [{"type": "text", "text": "img"}, image(n, size)],
        }
        history.add_user([result], journal=False)
    history.entries = entries  # type: ignore[attr-defined]
    return history


def test_within_budget_nothing_is_touched() -> None:
    history = history_of(MAX_MEDIA)
    before = [dict(m) for m in history.messages]
    assert fit_media(history) == 0
    assert history.messages == before and history.entries == []  # type: ignore[attr-defined]


def test_over_the_count_the_oldest_go_down_to_half_and_the_rewrite_is_journaled() -> None:
    history = history_of(MAX_MEDIA + 1)
    assert fit_media(history) == MAX_MEDIA + 1 - MAX_MEDIA // 2
    assert len(media_keys(history.messages)) == MAX_MEDIA // 2
    assert history.messages[0]["content"][1] == {"type": "text", "text": OVER_BUDGET}
    [entry] = history.entries  # type: ignore[attr-defined]
    assert isinstance(entry, CompactionEntry) and History.replay([entry]).messages == history.messages
    # Thinking is signed to its prefix: every block behind the first change is dropped.
    assert not any(b.get("type") == "thinking" for m in history.messages for b in m["content"])


def test_over_the_bytes_the_oldest_go() -> None:
    history = history_of(5, size=6 * 1024 * 1024)  # 8 MiB of base64 each: 40 in all
    assert fit_media(history) == 4 and len(media_keys(history.messages)) == 1


def test_a_refused_image_named_by_the_api_is_the_one_taken_out() -> None:
    history = history_of(3)
    detail = {
        "status": 400,
        "apiMessage": "messages.2.content.0.content.1.image.source.base64: image exceeds 5 MB",
    }
    assert replace_refused(history, detail, accepted=None) == 1
    assert history.messages[2]["content"][0]["content"][1] == {"type": "text", "text": REFUSED}
    assert len(media_keys(history.messages)) == 2


def test_an_unnamed_refusal_takes_out_what_the_api_had_not_taken_before() -> None:
    history = history_of(3)
    accepted = Mark(3, 1)  # the first two were in a request it answered
    assert replace_refused(history, {"status": 400, "apiMessage": UNPROCESSABLE}, accepted) == 1
    assert media_keys(history.messages) == media_keys(history.messages, accepted)
    assert len(media_keys(history.messages)) == 2
    assert replace_refused(history, {"status": 400, "apiMessage": "max_tokens: too big"}, accepted) == 0
    # Nothing known to be taken (a session just loaded): every image is a suspect.
    assert replace_refused(history, {"status": 400, "apiMessage": UNPROCESSABLE}, None) == 2


def test_a_413_takes_out_the_oldest_half() -> None:
    history = history_of(4)
    newest = media_keys(history.messages[3:])  # the last two tool results' images
    assert len(newest) == 2
    assert replace_refused(history, {"status": 413, "apiMessage": TOO_LARGE}, None) == 2
    assert media_keys(history.messages) == newest
