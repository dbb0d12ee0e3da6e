"""The one sanitizer of names the editor prints (issue 35, item 10): escape sequences go whole,
controls go, newlines and tabs stay unless the field is one line."""

from __future__ import annotations

import pytest

from acp_agent.tools.printable import one_line, printable


@pytest.mark.parametrize(
    ("text", "kept", "line"),
    [
        ("plain text", "plain text", "plain text"),
        ("a\x1b[2Jb", "ab", "ab"),  # CSI: clear the screen
        ("x\x1b]0;pwned\x07y", "xy", "xy"),  # OSC: set the window title, ended by BEL
        ("x\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\z", "xlinkz", "xlinkz"),  # a hidden hyperlink
        ("bel\x07 nul\x00 del\x7f", "bel nul del", "bel nul del"),
        ("one\ntwo\tthree\r\n", "one\ntwo\tthree\n", "one two three"),
        ("\u202eevil\u2066", "evil", "evil"),  # bidi overrides
        ("c1\x9b31mred\x9d0;t\x9c", "c1red", "c1red"),  # 8-bit CSI and OSC
        ("ends with ESC\x1b", "ends with ESC", "ends with ESC"),
        ("café ✓ 日本", "café ✓ 日本", "café ✓ 日本"),
    ],
)
def test_printable_and_one_line(text: str, kept: str, line: str) -> None:
    assert printable(text) == kept
    assert one_line(text) == line


def test_clean_text_is_returned_as_it_is() -> None:
    text = "nothing to take out\n"
    assert printable(text) is text
