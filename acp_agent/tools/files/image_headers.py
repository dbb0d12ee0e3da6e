"""Is it really an image? The header of a png, jpeg, gif or webp file, read without a decoder.

A file that only starts like an image (`\\x89PNG` then text) was sent as one, and the API's 400
("Could not process image") then failed every later request of the session (issue 29 item 8).
So before an image is attached its structure is checked the way a decoder would begin: the PNG
chunks (lengths and CRCs, IHDR first, an IDAT, IEND), the JPEG segments up to a frame header,
the GIF screen descriptor, the WebP RIFF container and its first chunk; and its size in pixels
must be one the API takes. No image library: these are a few hundred bytes of parsing.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["MAX_IMAGE_PIXELS", "image_size"]

MAX_IMAGE_PIXELS = 8000
"""The API's largest width or height."""
_PNG = b"\x89PNG\r\n\x1a\n"
_PNG_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _png(data: bytes) -> tuple[int, int]:
    pos, size, seen = len(_PNG), None, set()
    while pos + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        end = pos + 8 + length
        if end + 4 > len(data):
            raise ValueError(f"the {kind!r} chunk runs past the end of the file")
        body = data[pos + 8 : end]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[end : end + 4])[0]:
            raise ValueError(f"the {kind!r} chunk's CRC is wrong")
        if size is None:
            if kind != b"IHDR" or length != 13:
                raise ValueError("it does not begin with an IHDR chunk")
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth not in _PNG_DEPTHS.get(colour, ()) or body[10:12] != b"\0\0" or body[12] > 1:
                raise ValueError("its IHDR chunk is invalid")
            size = (width, height)
        seen.add(kind)
        pos = end + 4
        if kind == b"IEND":
            break
    if size is None or b"IDAT" not in seen or b"IEND" not in seen:
        raise ValueError("it has no image data (IDAT) or no end (IEND)")
    return size


def _jpeg(data: bytes) -> tuple[int, int]:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError("a segment does not start with a marker")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):
            break  # the end, or the scan, before any frame header
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if length < 2 or pos + 2 + length > len(data):
            raise ValueError("a segment runs past the end of the file")
        if marker in _JPEG_FRAMES:
            if length < 8:
                raise ValueError("its frame header is too short")
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    raise ValueError("it has no frame header (SOF) before its image data")


def _gif(data: bytes) -> tuple[int, int]:
    if len(data) < 14:
        raise ValueError("it is shorter than a GIF header")
    width, height = struct.unpack("<HH", data[6:10])
    if b"," not in data[13:] or not data.rstrip(b"\0").endswith(b";"):
        raise ValueError("it has no image descriptor or no trailer")
    return width, height


def _webp(data: bytes) -> tuple[int, int]:
    (riff,) = struct.unpack("<I", data[4:8])
    if riff + 8 > len(data) or riff < 12 or len(data) < 30:
        raise ValueError("its RIFF size does not match the file")
    kind = data[12:16]
    if kind == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L" and data[20] == 0x2F:
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    raise ValueError("its first chunk is not a VP8, VP8L or VP8X image")


_READERS = {"image/png": _png, "image/jpeg": _jpeg, "image/gif": _gif, "image/webp": _webp}


def image_size(data: bytes, media_type: str) -> tuple[int, int]:
    """(width, height) of a well-formed image of `media_type` the API can take.

    Raises:
        ValueError: why it is not one (a sentence: "its IHDR chunk is invalid"), or its size.
    """
    reader = _READERS.get(media_type)
    if reader is None:
        raise ValueError(f"{media_type} is not a type the API takes (png, jpeg, gif, webp)")
    signature_ok = {
        "image/png": data.startswith(_PNG),
        "image/jpeg": data.startswith(b"\xff\xd8\xff"),
        "image/gif": data.startswith((b"GIF87a", b"GIF89a")),
        "image/webp": data[:4] == b"RIFF" and data[8:12] == b"WEBP",
    }[media_type]
    if not signature_ok:
        raise ValueError(f"its bytes are not a {media_type} image")
    try:
        width, height = reader(data)
    except struct.error as exc:
        raise ValueError("it ends before its header does") from exc
    if not (0 < width <= MAX_IMAGE_PIXELS and 0 < height <= MAX_IMAGE_PIXELS):
        raise ValueError(
            f"it is {width}x{height} pixels; the API takes 1 to {MAX_IMAGE_PIXELS:,} pixels a side"
        )
    return width, height
