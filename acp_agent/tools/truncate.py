"""Output caps that keep the head and the tail and say plainly what was cut.

A model that sees a silent cut guesses; one that sees "[… 12,345 bytes cut …]" asks for more.
Pure functions, no I/O.
"""

from __future__ import annotations

__all__ = ["MIN_CAP_BYTES", "cap_text", "clip_line"]

# The smallest byte cap that still leaves room for the note and a little text.
MIN_CAP_BYTES = 64


def _byte_note(cut: int) -> str:
    return f"\n[… {cut:,} bytes cut …]\n"


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def cap_text(text: str, max_bytes: int, *, head_ratio: float = 0.5) -> str:
    """Return `text` unchanged if its UTF-8 form fits `max_bytes`; else head + note + tail.

    The result, note included, never exceeds `max_bytes`, and no character is split.
    `head_ratio` is the share of the remaining budget given to the head.
    """
    if max_bytes < MIN_CAP_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_CAP_BYTES}, got {max_bytes}")
    if not 0.0 <= head_ratio <= 1.0:
        raise ValueError(f"head_ratio must be within [0, 1], got {head_ratio}")
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    # Reserve room for the longest note this text could need, so the total stays in budget.
    budget = max_bytes - len(_byte_note(len(data)).encode())
    head_end = int(budget * head_ratio)
    tail_start = len(data) - (budget - head_end)
    while head_end > 0 and _is_continuation(data[head_end]):
        head_end -= 1
    while tail_start < len(data) and _is_continuation(data[tail_start]):
        tail_start += 1
    head = data[:head_end].decode("utf-8", errors="surrogatepass")
    tail = data[tail_start:].decode("utf-8", errors="surrogatepass")
    return head + _byte_note(tail_start - head_end) + tail


def clip_line(text: str, max_chars: int) -> str:
    """Cut one line to `max_chars` characters, marking the cut with a trailing "…"."""
    return text if len(text) <= max_chars else text[:max_chars] + "…"
