"""Output caps keep head and tail, stay within the byte cap, and say what they cut."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_agent.tools.truncate import MIN_CAP_BYTES, cap_text, clip_line

_NOTE = re.compile(r"\n\[… ([\d,]+) bytes cut …\]\n")


def _split(result: str) -> tuple[str, int, str]:
    match = _NOTE.search(result)
    assert match, result
    return result[: match.start()], int(match.group(1).replace(",", "")), result[match.end() :]


def test_text_that_fits_is_returned_unchanged() -> None:
    text = "x" * 100
    assert cap_text(text, 100) is text
    assert cap_text("", 64) == ""


def test_cut_text_keeps_head_and_tail_and_names_the_bytes_cut() -> None:
    text = "".join(f"line {i}\n" for i in range(10_000))
    result = cap_text(text, 1000)
    assert len(result.encode()) <= 1000
    head, cut, tail = _split(result)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + cut + len(tail) == len(text)
    assert "line 0\n" in head and "line 9999\n" in tail
    assert f"{cut:,}" in result  # thousands separators, as the model reads it


def test_multibyte_characters_are_never_split() -> None:
    text = "é漢🙂" * 5000
    result = cap_text(text, 777)
    assert "\ufffd" not in result
    head, cut, tail = _split(result)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head.encode()) + cut + len(tail.encode()) == len(text.encode())


def test_head_ratio_moves_the_budget_between_head_and_tail() -> None:
    text = "a" * 10_000
    head_only = _split(cap_text(text, 500, head_ratio=1.0))
    tail_only = _split(cap_text(text, 500, head_ratio=0.0))
    assert head_only[2] == "" and len(head_only[0]) > 400
    assert tail_only[0] == "" and len(tail_only[2]) > 400


def test_caps_too_small_for_the_note_are_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        cap_text("x" * 1000, MIN_CAP_BYTES - 1)


@given(text=st.text(min_size=0, max_size=3000), cap=st.integers(MIN_CAP_BYTES, 4000))
def test_capped_text_never_exceeds_the_cap_and_accounts_for_every_byte(text: str, cap: int) -> None:
    result = cap_text(text, cap)
    size = len(text.encode())
    if size <= cap:
        assert result == text
        return
    assert len(result.encode()) <= cap
    head, cut, tail = _split(result)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head.encode()) + cut + len(tail.encode()) == size


def test_clip_line_marks_the_cut() -> None:
    assert clip_line("abc", 3) == "abc"
    assert clip_line("abcdef", 3) == "abc…"
