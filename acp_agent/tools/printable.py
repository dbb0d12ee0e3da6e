"""Names and titles from outside, made safe for the editor to print.

A repository names its commands and skills, an MCP server its prompts and tools, the API its
search results, the model its tool calls, a client (or the user's first prompt) the session. The
editor prints those names, often through a terminal or a widget that acts on escape sequences:
ESC starts a CSI (clear the screen, move the cursor) or an OSC (set the window title, a hidden
hyperlink); BEL, NUL and the other controls do their own harm. So each such name goes through one
of the two functions here where it enters the agent or where an update is built from it:

- `printable`: without escape sequences, control characters (U+0000-001F and U+007F-009F;
  newlines and tabs kept) and the bidi overrides that show text in another order than it reads
  (U+202A-202E, U+2066-2069);
- `one_line`: `printable`, with every run of whitespace (newlines, tabs) as one space: a title,
  a name, a menu entry's description.
"""

from __future__ import annotations

import re

__all__ = ["one_line", "printable"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What is taken out (newline and tab are not); also the test that most text passes untouched."""
_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ parameters, intermediates, a final byte
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC ... up to BEL or ST
    r"|\x1b[ -/]*[0-~]?"  # any other escape: ESC, intermediates, a final byte
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # the 8-bit CSI
    r"|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?"  # the 8-bit OSC, DCS, SOS, PM, APC
)
"""An escape sequence as a whole, so that "ESC]0;pwned BEL" leaves nothing of "0;pwned" behind."""


def printable(text: str) -> str:
    """`text` without escape sequences and control characters; newlines and tabs stay."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub("", _SEQUENCES.sub("", text))


def one_line(text: str) -> str:
    """`printable(text)` as one line: each run of whitespace as one space, none at either end."""
    return " ".join(printable(text).split())
