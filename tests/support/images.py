"""Small, well-formed images of each type the API takes, for tests (no image library needed)."""

from __future__ import annotations

import struct

from tests.support.race import png

__all__ = ["gif", "jpeg", "png", "webp"]


def jpeg(width: int = 1, height: int = 1) -> bytes:
    """A baseline JPEG's structure: SOI, APP0, a frame header, a scan, EOI."""
    app0 = b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    frame = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    scan = b"\x01\x01\x00\x00\x3f\x00"
    return (
        b"\xff\xd8"
        + b"\xff\xe0" + struct.pack(">H", len(app0) + 2) + app0
        + b"\xff\xc0" + struct.pack(">H", len(frame) + 2) + frame
        + b"\xff\xda" + struct.pack(">H", len(scan) + 2) + scan
        + b"\x00\x3f"
        + b"\xff\xd9"
    )  # fmt: skip


def gif(width: int = 1, height: int = 1) -> bytes:
    """GIF89a: screen descriptor, a global palette, one image descriptor and its data, trailer."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    image = b"," + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x02\x44\x01\x00"
    return b"GIF89a" + screen + image + b";"


def webp(width: int = 1, height: int = 1) -> bytes:
    """A lossless WebP (VP8L) header."""
    bits = (width - 1) | ((height - 1) << 14)
    chunk = b"\x2f" + struct.pack("<I", bits) + b"\0" * 7
    body = b"WEBP" + b"VP8L" + struct.pack("<I", len(chunk)) + chunk
    return b"RIFF" + struct.pack("<I", len(body)) + body
