"""Images for `read_file`: png, jpeg, gif and webp go to the model as image blocks.

Recognised by their first bytes, not their name (a `.png` holding text is read as text, a logo
without an extension is still an image), then checked as a decoder would begin
(`image_headers.py`): a file that only starts like an image is refused, never sent, since the
API's 400 for it would fail the session's later requests. The Messages API takes at most 5 MB of
base64 per image; a larger one is refused with a sentence that says so, before anything is encoded.
"""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolResult
from acp_agent.tools.files.disk import open_regular
from acp_agent.tools.files.image_headers import image_size

__all__ = ["MAX_IMAGE_BASE64", "image_type", "read_image"]

MAX_IMAGE_BASE64 = 5 * 1024 * 1024
"""The API's limit on one image's base64 data."""
MAX_IMAGE_BYTES = MAX_IMAGE_BASE64 // 4 * 3
"""The largest file whose base64 fits."""


def image_type(head: bytes) -> str | None:
    """The media type of an image the API accepts, from the file's first 12 bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_image(path: Path, shown: str, stop: threading.Event) -> ToolResult | None:
    """The image at `path` as a tool result, or None when it is not one (or cannot be opened:
    the text path reports that)."""
    try:
        # Through directory fds, following no symlink planted since `path` was checked, as text
        # is opened; a FIFO or a directory is refused before anything blocks (the text path says).
        opened = open_regular(path, shown)
    except (ToolError, OSError):
        return None
    try:
        with opened as f:
            media_type = image_type(f.read(12))
            if media_type is None:
                return None
            size = f.seek(0, 2)
            if size > MAX_IMAGE_BYTES:
                raise ToolError(
                    f"{shown!r} is a {media_type} image of {size:,} bytes; the API takes images "
                    f"up to {MAX_IMAGE_BYTES:,} bytes (5 MB as base64), so it cannot be shown"
                )
            f.seek(0)
            data = f.read(MAX_IMAGE_BYTES + 1)
    except OSError:
        return None
    try:
        width, height = image_size(data, media_type)
    except ValueError as exc:
        raise ToolError(
            f"{shown!r} starts like a {media_type.removeprefix('image/').upper()} image but is not "
            f"one the API can take "
            f"({exc}); it was not attached"
        ) from None
    block: dict[str, Any] = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
    return ToolResult(
        f"Image {shown} ({media_type}, {width}x{height}, {len(data):,} bytes), attached for the model.",
        locations=((path, None),),
        media=(block,),
        raw_output={
            "path": str(path),
            "mediaType": media_type,
            "bytes": len(data),
            "width": width,
            "height": height,
        },
    )
