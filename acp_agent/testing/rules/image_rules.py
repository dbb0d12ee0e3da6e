"""What the real Messages API does with images and big requests: the fake refuses them the same way.

Written independently of the agent's own checks (`acp_agent.tools.files.image_headers`), and deeper:
a PNG's image data must inflate, a JPEG must reach its end marker, so a test on the fake catches an
image the agent let through. The limits (late-2026 platform docs):

- a request body over 32 MB: 413 `request_too_large`;
- an image over 5 MB of base64: 400, "image exceeds 5 MB maximum: N bytes > 5242880 bytes";
- an image whose bytes are not its media type, or do not decode: 400 "Could not process image"
  (the API's words, without naming the block);
- more than 100 images, or a side over 8000 pixels (over 2000 when a request holds more than 20).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from acp_agent.testing.rules.request_blocks import sources_of

__all__ = ["MAX_REQUEST_BYTES", "TOO_LARGE", "UNPROCESSABLE", "image_error"]

MAX_REQUEST_BYTES = 32_000_000
TOO_LARGE = "Request exceeds the maximum allowed number of bytes."
UNPROCESSABLE = "Could not process image"
_MAX_BASE64 = 5 * 1024 * 1024


def _png_pixels(data: bytes) -> tuple[int, int]:
    pos, idat, size = 8, b"", None
    while pos + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body, crc = data[pos + 8 : pos + 8 + length], data[pos + 8 + length : pos + 12 + length]
        if len(crc) != 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise ValueError("chunk")
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    inflate = zlib.decompressobj()
    if size is None or not inflate.decompress(idat, 1 << 26) or not inflate.eof:
        raise ValueError("data")
    return size


def _jpeg_pixels(data: bytes) -> tuple[int, int]:
    pos, size = 2, None
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker, (length,) = data[pos + 1], struct.unpack(">H", data[pos + 2 : pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            size = (width, height)
        if marker == 0xDA:
            break
        pos += 2 + length
    if size is None or not data.rstrip(b"\0").endswith(b"\xff\xd9"):
        raise ValueError("structure")
    return size


def _pixels(data: bytes, media_type: str) -> tuple[int, int]:
    """(width, height), or ValueError when the bytes are not a decodable `media_type` image."""
    if media_type == "image/png" and data.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png_pixels(data)
    if media_type == "image/jpeg" and data.startswith(b"\xff\xd8\xff"):
        return _jpeg_pixels(data)
    if media_type == "image/gif" and data[:6] in (b"GIF87a", b"GIF89a") and data.endswith(b";"):
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    webp = data[:4] == b"RIFF" and data[8:12] == b"WEBP" and data[12:15] == b"VP8"
    if media_type == "image/webp" and webp and struct.unpack("<I", data[4:8])[0] + 8 == len(data):
        return 1, 1  # the fake does not decode VP8; a well-formed container passes
    raise ValueError("not this type")


def image_error(body: Mapping[str, Any], content_length: int) -> tuple[int, str, str] | None:
    """(status, error type, message) the API answers for this request's size or images; None: fine."""
    if content_length > MAX_REQUEST_BYTES:
        return 413, "request_too_large", TOO_LARGE
    found = list(sources_of(body, "image"))
    if len(found) > 100:
        return 400, "invalid_request_error", "Too many images in the request: at most 100 are allowed."
    limit = 2000 if len(found) > 20 else 8000
    for path, source in found:
        data = str(source.get("data") or "")
        if len(data) > _MAX_BASE64:
            too_big = f"image exceeds 5 MB maximum: {len(data)} bytes > {_MAX_BASE64} bytes"
            return 400, "invalid_request_error", f"{path}.image.source.base64: {too_big}"
        try:
            width, height = _pixels(base64.b64decode(data, validate=True), str(source.get("media_type")))
        except (ValueError, binascii.Error, struct.error, zlib.error):
            return 400, "invalid_request_error", UNPROCESSABLE
        if max(width, height) > limit:
            many = " for many-image requests" if limit == 2000 else ""
            return (
                400,
                "invalid_request_error",
                f"At least one of the image dimensions exceed max allowed size{many}: {limit} pixels",
            )
    return None
